/**
 * A2A v1.0 streams across replicas: two server processes on one PostgreSQL schema. A stream opened on one replica
 * sees the events of a task that a worker claims and completes through the other (the event log is in the shared
 * database; a stream reads it at least every BERNSTEIN_A2A_STREAM_POLL_MS), streams on both replicas see the same
 * events in the same order, and a replica that drains on SIGTERM ends its streams cleanly, so that the client
 * resumes on the other with Last-Event-ID. Prints the fan-out latency (the worker's answer on one replica to the
 * event on the other's stream), the figure docs/a2a-v1.md reports.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServerProcess, spawnServer } from '../helpers/cli.js'
import { type SseEvent, type SseStream, openSse } from '../helpers/sse.js'
import { OPERATOR, PG_URL, type Schema, announceSkip, createSchema, http, pgSuiteName } from './support.js'

announceSkip('test/pg/stream-replicas.test.ts')

const TASKS = 20
const POLL_MS = 250

const stateOf = (event: SseEvent | null): string | undefined => {
  const data = JSON.parse(event?.data ?? '{}') as { statusUpdate?: { status: { state: string } }; task?: { status: { state: string } } }
  return data.statusUpdate?.status.state ?? data.task?.status.state
}
const kindOf = (event: SseEvent | null): string => Object.keys(JSON.parse(event?.data ?? '{}') as object)[0] ?? ''

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

describe.skipIf(!PG_URL)(pgSuiteName('A2A v1.0 streams across two replicas'), () => {
  let schema: Schema
  let dataDir: string
  const replicas: ServerProcess[] = []
  const a = (): string => (replicas[0] as ServerProcess).url
  const b = (): string => (replicas[1] as ServerProcess).url

  beforeAll(async () => {
    schema = await createSchema('sse')
    dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-sse-'))
    const env = {
      DATABASE_URL: schema.url({ applicationName: 'bernstein-sse' }),
      BERNSTEIN_DATA_DIR: dataDir,
      BERNSTEIN_AUTH_TOKEN: OPERATOR,
      BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN: '0',
      BERNSTEIN_RATE_LIMIT_READ_PER_MIN: '0',
      BERNSTEIN_PUBLIC_BASE_URL: 'http://bernstein.lb.test',
      BERNSTEIN_DB_CONNECT_TIMEOUT_MS: '30000',
      BERNSTEIN_REQUEST_DEADLINE_MS: '60000',
      BERNSTEIN_A2A_STREAM_POLL_MS: String(POLL_MS),
      BERNSTEIN_SHUTDOWN_GRACE_MS: '0',
    }
    // One after the other: the first applies the migrations.
    replicas.push(await spawnServer(env))
    replicas.push(await spawnServer(env))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(replicas.filter((r) => r.alive()).map((r) => r.stop('SIGTERM')))
    await schema?.drop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  }, 60_000)

  async function newTask(base: string): Promise<{ id: string; linked: string }> {
    const res = await http(
      base,
      'POST',
      '/a2a/v1/message:send',
      { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'replicas' }] }, configuration: { returnImmediately: true } },
      { headers: { 'a2a-version': '1.0' } },
    )
    expect(res.status).toBe(200)
    const task = (res.json as { task: { id: string; metadata: Record<string, string> } }).task
    return { id: task.id, linked: task.metadata['bernstein.task_id'] as string }
  }

  const subscribe = (base: string, id: string, headers: Record<string, string> = {}): Promise<SseStream> =>
    openSse(`${base}/a2a/v1/tasks/${id}:subscribe`, { method: 'GET', token: OPERATOR, headers })

  it('a stream on one replica sees the claim and completion made through the other, in the order the other replica sees them', async () => {
    const latencies: number[] = []
    for (let i = 0; i < TASKS; i++) {
      const task = await newTask(a())
      const onA = await subscribe(a(), task.id)
      const onB = await subscribe(b(), task.id)
      expect(kindOf(await onA.next())).toBe('task')
      expect(kindOf(await onB.next())).toBe('task')
      const claimed = await http(b(), 'POST', `/tasks/${task.linked}/claim`, {})
      expect(claimed.status).toBe(200)
      let answered = performance.now()
      const working = await onA.next()
      latencies.push(performance.now() - answered)
      expect(stateOf(working)).toBe('TASK_STATE_WORKING')
      const completed = await http(b(), 'POST', `/tasks/${task.linked}/complete`, { result_summary: `done ${i}` })
      expect(completed.status).toBe(200)
      answered = performance.now()
      const artifact = await onA.next()
      latencies.push(performance.now() - answered)
      const rest = [working, artifact, ...(await onA.rest())]
      expect(rest.map(kindOf)).toEqual(['statusUpdate', 'artifactUpdate', 'statusUpdate'])
      expect(stateOf(rest[2] ?? null)).toBe('TASK_STATE_COMPLETED')
      // The same events, ids and order on the replica that made the changes.
      expect(await onB.rest()).toEqual(rest)
    }
    const figure = {
      samples: latencies.length,
      poll_ms: POLL_MS,
      p50_ms: Math.round(percentile(latencies, 50)),
      p95_ms: Math.round(percentile(latencies, 95)),
      max_ms: Math.round(Math.max(...latencies)),
    }
    console.log(`stream fan-out across replicas (PostgreSQL): ${JSON.stringify(figure)}`)
    expect(latencies).toHaveLength(2 * TASKS)
  }, 300_000)

  it('a replica that drains ends its streams cleanly; the client resumes on the other with Last-Event-ID', async () => {
    const task = await newTask(b())
    const onA = await subscribe(a(), task.id)
    expect(kindOf(await onA.next())).toBe('task')
    expect((await http(b(), 'POST', `/tasks/${task.linked}/claim`, {})).status).toBe(200)
    const working = await onA.next()
    expect(stateOf(working)).toBe('TASK_STATE_WORKING')
    const stopped = (replicas[0] as ServerProcess).stop('SIGTERM')
    // The stream ends (no reset, no error): the server's last words are a comment saying how to go on.
    expect(await onA.next()).toBeNull()
    expect(onA.comments.at(-1)).toContain('reconnect with Last-Event-ID')
    expect((await stopped).code).toBe(0)
    expect((await http(b(), 'POST', `/tasks/${task.linked}/complete`, { result_summary: 'after the drain' })).status).toBe(200)
    const resumed = await subscribe(b(), task.id, { 'last-event-id': String(working?.id) })
    const missed = await resumed.rest()
    expect(missed.map(kindOf)).toEqual(['artifactUpdate', 'statusUpdate'])
    expect(Number(missed[0]?.id)).toBe(Number(working?.id) + 1)
  }, 120_000)
})
