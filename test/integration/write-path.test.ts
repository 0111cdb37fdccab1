/**
 * Issue 27, the statements of a write on each engine, counted through the store's query log on a real server: the
 * tracker-audit append is the transaction's last statement (so on PostgreSQL the head every write takes is locked
 * for the COMMIT alone), a chain head this process moved last is not read again, a task's creation looks up no
 * stream, and a change of an A2A task reads its stream's state once and touches push configs and old events only
 * when there are some. Also the chain repository's deferred appends: they run at the end, in order, and vanish
 * with a rollback.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { AuditTrail, TRACKER_AUDIT_CHAIN } from '../../src/lineage/audit-trail.js'
import { LineageService } from '../../src/lineage/lineage.service.js'
import { GENESIS_PREV_HASH } from '../../src/lineage/tracker-audit.js'
import { systemClock } from '../../src/runtime.js'
import { Store } from '../../src/store/store.js'
import { trackerInput } from '../helpers/tracker-input.js'
import { type TestEngine, migratedDatabasePerTest, testEngines } from '../helpers/engines.js'
import { TEST_AUDIT_KEY, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

const freshConnection = migratedDatabasePerTest()
const apps: TestApp[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

const CHAIN_APPEND = /^with locked as \(\s*select chain, head_hash, length from chain_heads where chain = \$1 for update/
const HEAD_READ = /from "chain_heads"/

/** A server whose SQL statements are recorded; `during` returns those one request ran. */
async function counted(engine: TestEngine) {
  const statements: string[] = []
  const app = await startTestApp({ engine, connectOptions: { onQuery: (text) => statements.push(text) } })
  apps.push(app)
  const post = async (path: string, body: unknown) => {
    statements.length = 0
    const answer = await rawRequest(app.url, { method: 'POST', path, body: JSON.stringify(body) })
    return { answer, statements: [...statements] }
  }
  return { app, post }
}

const entry = trackerInput

describe.each(testEngines())('the write path on %s', (engine) => {
  it('a send: the audit append is the last statement before COMMIT, and no chain head is read once this process moved it', async () => {
    const { app, post } = await counted(engine)
    expect((await post('/a2a/tasks/send', { sender: 'peer', message: 'first' })).answer.status).toBe(201)
    const { answer, statements } = await post('/a2a/tasks/send', { sender: 'peer', message: 'second' })
    expect(answer.status).toBe(201)
    const bernsteinTaskId = (answer.json as { bernstein_task_id: string }).bernstein_task_id
    // Nothing looks for the stream of a task being created (no A2A task can be linked to it yet).
    expect(statements.filter((s) => s.includes('"a2a_tasks" where'))).toEqual([])
    if (engine === 'postgres') {
      const commit = statements.lastIndexOf('commit')
      expect(commit).toBe(statements.length - 1)
      // The receipt spine's append, then the A2A row, then the audit append: the statement right before COMMIT.
      expect(CHAIN_APPEND.test(statements[commit - 1] as string)).toBe(true)
      expect(statements.filter((s) => CHAIN_APPEND.test(s))).toHaveLength(2)
      expect(statements.filter((s) => HEAD_READ.test(s))).toEqual([])
      expect(statements).toHaveLength(6)
    } else {
      // SQLite keeps its heads in memory: each append is an INSERT and an UPDATE; the audit one comes after the A2A
      // row (the spine's comes before it: the row carries the receipt), then only the group commit's end.
      expect(statements.filter((s) => HEAD_READ.test(s) && s.startsWith('select'))).toEqual([])
      const entries = statements.flatMap((s, i) => (s.startsWith('insert into "chain_entries"') ? [i] : []))
      const a2aRow = statements.findIndex((s) => s.startsWith('insert into "a2a_tasks"'))
      expect(entries).toHaveLength(2)
      expect(entries[0]).toBeLessThan(a2aRow)
      expect(entries[1]).toBeGreaterThan(a2aRow)
      expect(statements.slice((entries[1] as number) + 1)).toEqual([expect.stringMatching(/^update "chain_heads"/), 'release group_commit_item', 'commit'])
    }
    // The task it created is there, with the send's audit entry.
    const audit = await rawRequest(app.url, { method: 'GET', path: `/lineage/tracker-audit?ticket_id=${bernsteinTaskId}` })
    expect(audit.status).toBe(200)
    expect((audit.json as { entries: Array<{ ticket_id: string }> }).entries.map((e) => e.ticket_id)).toEqual([bernsteinTaskId])
  })

  it('a change of an A2A task reads its stream state once; push configs and old events only when there are some', async () => {
    const { app, post } = await counted(engine)
    const sent = await post('/a2a/tasks/send', { sender: 'peer', message: 'work' })
    const taskId = (sent.answer.json as { bernstein_task_id: string }).bernstein_task_id
    const { answer, statements } = await post(`/tasks/${taskId}/claim`, { agent_id: 'worker' })
    expect(answer.status).toBe(200)
    expect(statements.filter((s) => s.includes('"a2a_v1_stream_events"') && s.startsWith('select'))).toHaveLength(1)
    expect(statements.filter((s) => s.startsWith('select * from "a2a_v1_push_configs"'))).toEqual([])
    expect(statements.filter((s) => s.startsWith('delete from "a2a_v1_stream_events"'))).toEqual([])
    // And it applied (test/a2a-v1/streaming.test.ts checks that the events so logged reach subscribers).
    const events = await rawRequest(app.url, { method: 'GET', path: `/tasks/${taskId}` })
    expect((events.json as { status: string }).status).toBe('claimed')
  })

  it('deferred appends run after the transaction’s work, in order, and vanish with a rollback', async () => {
    const store = new Store(await freshConnection(engine))
    const audit = new AuditTrail({ key: TEST_AUDIT_KEY, clock: systemClock })
    const lineage = new LineageService(store, TEST_AUDIT_KEY, 'test-issuer')
    await store.transaction(async (repos) => {
      await audit.onArtifact(repos, { tenantId: 'default', id: 'deferred-1', role: 'r', assignedAgent: null } as never, {
        name: 'a',
        contentType: 'text/plain',
        data: 'x',
      })
      // Queued, not written: the head has not moved inside the transaction yet.
      expect(await repos.chains.head(TRACKER_AUDIT_CHAIN)).toBeUndefined()
      await audit.append(repos, 'default', entry('immediate', 1))
      expect((await repos.chains.head(TRACKER_AUDIT_CHAIN))?.length).toBe(1)
    })
    expect((await lineage.entries()).map((e) => e.ticket_id)).toEqual(['immediate', 'deferred-1'])
    await expect(
      store.transaction(async (repos) => {
        repos.chains.appendAtCommit(TRACKER_AUDIT_CHAIN, GENESIS_PREV_HASH, () => {
          throw new Error('never built: the transaction failed before its end')
        })
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    expect(await lineage.verify()).toEqual({ ok: true, value: { entries: 2 } })
    expect(() => store.repos.chains.appendAtCommit(TRACKER_AUDIT_CHAIN, GENESIS_PREV_HASH, () => ({ entry: {} as never, value: null }))).toThrow(
      /needs a transaction/,
    )
  })
})
