/**
 * Issue 26, findings 1 and 4: health that costs nothing and tells strangers nothing, and honest storage faults.
 *
 * - `GET /health` (node-wide counts, queue depth, peers, memory) needs the operator or metrics token; the probes stay
 *   public. Its counts come from counters the database keeps on write (`row_counts`), proved structurally: the
 *   statements one call issues never read the tasks table, and the counters agree with a scan after a mixed workload.
 * - Readiness asks the database at most once per interval, and goes red while the node drains.
 * - A real storage fault (SQLite: a database full at `max_page_count`, a read-only connection; PostgreSQL: a
 *   read-only session) is a 503 with `Retry-After` and a `detail` saying storage is unavailable, changes nothing,
 *   turns readiness red and is counted in the metrics; readiness is green again by itself once it has passed.
 */
import { sql } from 'kysely'
import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import { TASK_STATUSES } from '../../src/tasks/task.js'
import { testClock } from '../helpers/clock.js'
import { testEngines } from '../helpers/engines.js'
import { type TestApp, type TestAppOptions, rawRequest, startTestApp } from '../helpers/test-app.js'

const apps: TestApp[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

/** A test app whose every SQL statement is recorded in `statements`. */
async function counted(options: TestAppOptions): Promise<{ app: TestApp; statements: string[] }> {
  const statements: string[] = []
  const app = await startTestApp({ ...options, connectOptions: { ...options.connectOptions, onQuery: (text) => statements.push(text) } })
  apps.push(app)
  return { app, statements }
}

const post = (app: TestApp, path: string, body: unknown) => rawRequest(app.url, { method: 'POST', path, body: JSON.stringify(body) })

describe.each(testEngines())('health on %s', (engine) => {
  it('an anonymous GET /health is refused and reveals nothing; the probes stay public; the operator sees the counts', async () => {
    const { app } = await counted({ engine })
    await post(app, '/tasks', { title: 'one' })
    for (const path of ['/health', '/api/v1/health']) {
      const anonymous = await rawRequest(app.url, { method: 'GET', path, token: null })
      expect(anonymous.status).toBe(401)
      expect(anonymous.text).not.toMatch(/task_count|queue|memory|agent_count/)
    }
    for (const path of ['/health/ready', '/health/live', '/ready', '/alive', '/api/v1/health/ready', '/api/v1/health/live']) {
      expect((await rawRequest(app.url, { method: 'GET', path, token: null })).status).toBe(200)
    }
    const health = await app.client.GET('/health')
    expect(health.response.status).toBe(200)
    expect(health.data).toMatchObject({ status: 'ok', task_count: 1, task_queue_depth: 1, agent_count: 0 })
  })

  it('one GET /health reads the kept counts, never the tasks table, however many tasks there are', async () => {
    const { app, statements } = await counted({ engine })
    const perCall = async (): Promise<string[]> => {
      statements.length = 0
      expect((await app.client.GET('/health')).response.status).toBe(200)
      return [...statements]
    }
    const empty = await perCall()
    for (let i = 0; i < 25; i++) await post(app, '/tasks', { title: `t${i}` })
    const full = await perCall()
    expect(full).toEqual(empty)
    expect(full.length).toBeLessThanOrEqual(2)
    for (const text of full) {
      expect(text).toMatch(/row_counts/)
      expect(text).not.toMatch(/"tasks"|\btasks\b(?!\.)/)
    }
  })

  it('the kept counts agree with a scan of the tables after a mixed workload', async () => {
    const { app } = await counted({ engine })
    const ids: string[] = []
    for (let i = 0; i < 12; i++) {
      const created = await post(app, '/tasks', { title: `w${i}`, role: i % 2 === 0 ? 'backend' : 'qa' })
      expect(created.status).toBe(201)
      ids.push((created.json as { id: string }).id)
    }
    for (const [i, id] of ids.entries()) {
      if (i % 3 === 0) continue
      expect((await post(app, `/tasks/${id}/claim`, { agent_id: 'a1' })).status).toBe(200)
      if (i % 3 === 1) expect((await post(app, `/tasks/${id}/complete`, { result_summary: 'ok' })).status).toBe(200)
      else expect((await post(app, `/tasks/${id}/fail`, { reason: 'no' })).status).toBe(200)
    }
    expect((await post(app, `/tasks/${ids[0]}/cancel`, {})).status).toBe(200)
    // A refused transition changes nothing, counts included.
    expect((await post(app, `/tasks/${ids[1]}/claim`, { agent_id: 'a2' })).status).toBe(409)
    expect((await post(app, '/a2a/tasks/send', { sender: 'peer-a', message: 'via a2a', role: 'backend' })).status).toBe(201)
    await app.store.transaction(async (repos) => {
      await repos.a2a.upsertPeer({ tenantId: 'default', name: 'p1', endpoint: 'http://p1', capabilities: [], status: 'active', lastSeen: 1 })
      await repos.a2a.upsertPeer({ tenantId: 'default', name: 'p1', endpoint: 'http://p1', capabilities: [], status: 'active', lastSeen: 2 })
      await repos.a2a.upsertPeer({ tenantId: 'acme', name: 'p1', endpoint: 'http://p1', capabilities: [], status: 'active', lastSeen: 3 })
    })
    const kept = await app.store.repos.tasks.countedByStatus()
    const scanned = await app.store.repos.tasks.countByStatus()
    for (const status of TASK_STATUSES) expect([status, kept.get(status) ?? 0]).toEqual([status, scanned.get(status) ?? 0])
    const total = [...scanned.values()].reduce((a, b) => a + b, 0)
    expect(total).toBe(13)
    const health = await app.client.GET('/health')
    expect(health.data).toMatchObject({ task_count: 13, task_queue_depth: scanned.get('open') ?? 0, agent_count: 2 })
  })

  it('readiness asks the database once per interval, and is red at once while the node drains', async () => {
    const clock = testClock()
    const { app, statements } = await counted({ engine, clock })
    const pings = (): number => statements.filter((s) => /^select 1$/i.test(s.trim())).length
    const ready = () => rawRequest(app.url, { method: 'GET', path: '/health/ready', token: null })
    expect((await ready()).status).toBe(200)
    const after = pings()
    expect(after).toBe(1)
    for (let i = 0; i < 5; i++) expect((await ready()).status).toBe(200)
    expect(pings()).toBe(after)
    clock.advance(1.001)
    expect((await ready()).status).toBe(200)
    expect(pings()).toBe(after + 1)

    app.app.services.health.markDraining()
    const draining = await ready()
    expect(draining.status).toBe(503)
    expect(draining.json).toEqual({ status: 'not_ready', reason: 'draining: the node is shutting down' })
    expect((await rawRequest(app.url, { method: 'GET', path: '/health/live', token: null })).status).toBe(200)
  })
})

/** What a storage fault must look like on the wire, and that nothing was written. */
async function expectStorageFault(app: TestApp, reason: string): Promise<void> {
  const before = await app.store.repos.tasks.countByStatus('default')
  const refused = await post(app, '/tasks', { title: 'x', description: 'y'.repeat(64_000) })
  expect(refused.status).toBe(503)
  expect(refused.json).toEqual({ detail: `Storage unavailable (${reason}): nothing was written, retry later` })
  expect(refused.headers.get('retry-after')).toBe('5')
  expect(await app.store.repos.tasks.countByStatus('default')).toEqual(before)
  const ready = await rawRequest(app.url, { method: 'GET', path: '/health/ready', token: null })
  expect(ready.status).toBe(503)
  expect(ready.json).toEqual({ status: 'not_ready', reason: `storage unavailable: ${reason}` })
  const metrics = await rawRequest(app.url, { method: 'GET', path: '/metrics' })
  expect(metrics.text).toContain(`bernstein_storage_faults_total{reason="${reason}"} 1`)
}

/** Readiness is green again by itself once the fault has passed, and writes succeed. */
async function expectRecovery(app: TestApp, clock: ReturnType<typeof testClock>): Promise<void> {
  clock.advance(5.001)
  const ready = await rawRequest(app.url, { method: 'GET', path: '/health/ready', token: null })
  expect(ready.status).toBe(200)
  expect((await post(app, '/tasks', { title: 'after' })).status).toBe(201)
}

describe('storage faults on sqlite', () => {
  it('a full database (max_page_count) is a 503 with Retry-After, changes nothing, and readiness recovers by itself', async () => {
    const clock = testClock()
    const { app } = await counted({ engine: 'sqlite', clock, metricsRegistry: new Registry() })
    expect((await post(app, '/tasks', { title: 'before' })).status).toBe(201)
    const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(app.connection.db)
    await sql.raw(`pragma max_page_count = ${rows[0]?.page_count}`).execute(app.connection.db)
    await expectStorageFault(app, 'disk full')
    await sql.raw('pragma max_page_count = 1073741823').execute(app.connection.db)
    await expectRecovery(app, clock)
  })

  it('a read-only database is a 503 with Retry-After, changes nothing, and readiness recovers by itself', async () => {
    const clock = testClock()
    const { app } = await counted({ engine: 'sqlite', clock, metricsRegistry: new Registry() })
    await sql`pragma query_only = on`.execute(app.connection.db)
    await expectStorageFault(app, 'read-only storage')
    await sql`pragma query_only = off`.execute(app.connection.db)
    await expectRecovery(app, clock)
  })
})

describe.skipIf(!testEngines().includes('postgres'))('storage faults on postgres', () => {
  it('a read-only session (SQLSTATE 25006) is a 503 with Retry-After, changes nothing, and readiness recovers', async () => {
    const clock = testClock()
    // A pool of one: the session setting below reaches the connection every request uses.
    const { app } = await counted({ engine: 'postgres', clock, metricsRegistry: new Registry(), connectOptions: { poolSize: 1 } })
    await sql`set default_transaction_read_only = on`.execute(app.connection.db)
    await expectStorageFault(app, 'read-only storage')
    await sql`set default_transaction_read_only = off`.execute(app.connection.db)
    await expectRecovery(app, clock)
  })
})
