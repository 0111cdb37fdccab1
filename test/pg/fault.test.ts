/**
 * A real server process loses its database while clients keep writing and reading: through a loopback proxy
 * that first refuses connections and then swallows them (a true outage, then a silent network), and by having
 * PostgreSQL terminate its backends again and again. Requests must fail cleanly (503 with the contract's body,
 * never a hang: each load request carries its own deadline), readiness must follow the database down and back up
 * by itself, the process must survive, and everything acknowledged must still be there afterwards. Last, a request
 * in flight at SIGTERM completes before the process exits.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { TRACKER_AUDIT_CHAIN } from '../../src/lineage/audit-trail.js'
import { type ServerProcess, spawnServer } from '../helpers/cli.js'
import { OPERATOR, PG_URL, type Schema, TcpProxy, type TimedResult, announceSkip, createSchema, http, pgAddress, pgSuiteName, waitUntil } from './support.js'

announceSkip('test/pg/fault.test.ts')

const CONNECT_TIMEOUT_MS = 1_000
const STATEMENT_TIMEOUT_MS = 2_000
/**
 * The client-side deadline of every load request. The server's own timeouts (the limiter's and the handler's pool
 * checkouts, one connect timeout each; a query that never returns, statement + connect timeout: about 6 s here)
 * end a request long before it, so a request that reaches it is a hang: it is recorded without an HTTP status and
 * fails the test. Far from those timeouts, so that a busy machine does not turn slowness into a failure.
 */
const REQUEST_DEADLINE_MS = 60_000

const UNAVAILABLE = { detail: 'Service Unavailable' }

interface Sample {
  readonly kind: 'create' | 'read'
  readonly status: number
  readonly ms: number
  readonly body: unknown
  readonly at: number
}

/** Clients that keep creating tasks and reading acknowledged ones until stopped. */
function startLoad(server: () => string, clients: number): { acked: Map<string, string>; samples: Sample[]; stop(): Promise<void> } {
  const acked = new Map<string, string>()
  const samples: Sample[] = []
  let running = true
  let n = 0
  const record = (kind: Sample['kind'], r: TimedResult): void => {
    samples.push({ kind, status: r.status, ms: r.ms, body: r.json, at: performance.now() })
  }
  /** A request that gets no HTTP answer at all (the process died, the socket was cut) is status 0. */
  const send = async (...args: Parameters<typeof http>): Promise<TimedResult> => {
    const started = performance.now()
    try {
      return await http(...args)
    } catch (error) {
      return { status: 0, headers: new Headers(), text: '', json: String(error), ms: performance.now() - started }
    }
  }
  const client = async (): Promise<void> => {
    while (running) {
      const title = `fault task ${n++}`
      const created = await send(server(), 'POST', '/tasks', { title, role: 'fault' }, { timeoutMs: REQUEST_DEADLINE_MS })
      record('create', created)
      if (created.status === 201) acked.set((created.json as { id: string }).id, title)
      const ids = [...acked.keys()]
      if (ids.length > 0) {
        const id = ids[Math.floor(Math.random() * ids.length)] as string
        record('read', await send(server(), 'GET', `/tasks/${id}`, undefined, { timeoutMs: REQUEST_DEADLINE_MS }))
      }
      await new Promise((r) => setTimeout(r, 10))
    }
  }
  const all = Promise.all(Array.from({ length: clients }, () => client()))
  return {
    acked,
    samples,
    async stop() {
      running = false
      await all
    },
  }
}

const ready = (url: string): Promise<TimedResult> => http(url, 'GET', '/health/ready', undefined, { timeoutMs: 60_000 })

describe.skipIf(!PG_URL)(pgSuiteName('database outages under load'), () => {
  let schema: Schema | undefined
  let server: ServerProcess | undefined
  let proxy: TcpProxy | undefined
  let dataDir: string | undefined

  afterEach(async () => {
    await server?.stop('SIGKILL')
    await proxy?.close()
    await schema?.drop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    server = proxy = schema = dataDir = undefined
  })

  const serverEnv = (databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> => {
    dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-fault-'))
    return {
      DATABASE_URL: databaseUrl,
      BERNSTEIN_DATA_DIR: dataDir,
      BERNSTEIN_AUTH_TOKEN: OPERATOR,
      BERNSTEIN_DB_POOL_SIZE: '4',
      BERNSTEIN_DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      BERNSTEIN_DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      // Limits on, for loopback too, and high: the shared PostgreSQL limiter is consulted on every request and
      // must fall back to its in-memory insurance during the outage instead of failing requests.
      BERNSTEIN_RATE_LIMIT_LOOPBACK: '1',
      BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN: '100000',
      BERNSTEIN_RATE_LIMIT_READ_PER_MIN: '100000',
      BERNSTEIN_FEDERATION_POLL_MS: '0',
      ...extra,
    }
  }

  /**
   * Every answer was a success or the documented 503; nothing else: no 500, and no hang (a request that hit its
   * deadline, or got no answer at all, is status 0 and lands in `unexpected` with the error).
   */
  const expectCleanFailures = (samples: readonly Sample[]): void => {
    const unexpected = samples.filter((s) => !(s.kind === 'create' ? [201, 503] : [200, 503]).includes(s.status))
    expect(unexpected).toEqual([])
    for (const s of samples.filter((x) => x.status === 503)) expect(s.body).toEqual(UNAVAILABLE)
  }

  /** What was acknowledged is stored, and the chain has exactly one entry per stored task and verifies. */
  const expectNothingLost = async (url: string, acked: ReadonlyMap<string, string>): Promise<void> => {
    for (const [id, title] of acked) {
      const r = await http(url, 'GET', `/tasks/${id}`)
      expect(r.status, id).toBe(200)
      expect((r.json as { title: string }).title).toBe(title)
    }
    const tasks = await schema!.query<{ n: string }>("select count(*) as n from tasks where role = 'fault'")
    expect(Number(tasks[0]?.n)).toBeGreaterThanOrEqual(acked.size)
    // All partitions together (128 shards per tenant by default on PostgreSQL): one entry per stored task.
    const heads = await schema!.query<{ n: string }>(
      "select coalesce(sum(length), 0) as n from chain_heads where chain = $1 or substr(chain, 1, length($1) + 1) = $1 || '/'",
      [TRACKER_AUDIT_CHAIN],
    )
    expect(Number(heads[0]?.n)).toBe(Number(tasks[0]?.n))
    const verdict = await http(url, 'GET', '/lineage/tracker-audit/verify')
    expect(verdict.json).toEqual({ ok: true, entries: Number(tasks[0]?.n), failure: null })
  }

  it('the proxy refuses and then swallows connections: clean 503s and no hangs, readiness down and back, nothing lost', async () => {
    schema = await createSchema('fault')
    proxy = new TcpProxy(pgAddress())
    await proxy.set('forward')
    server = await spawnServer(serverEnv(schema.url({ host: '127.0.0.1', port: proxy.port, applicationName: 'bernstein-fault-proxy' })))
    const url = server.url
    expect((await ready(url)).status).toBe(200)

    const load = startLoad(() => url, 4)
    await waitUntil('writes before the outage', async () => load.acked.size >= 10)
    const ackedBefore = new Map(load.acked)

    // A true outage: nothing listens where the database was.
    const outageStarted = performance.now()
    await proxy.set('refuse')
    await waitUntil('readiness to report the outage', async () => (await ready(url)).status === 503, 20_000)
    const down = await ready(url)
    expect(down.status).toBe(503)
    expect(down.json).toEqual({ status: 'not_ready', reason: 'database unreachable: connection refused' })
    await waitUntil('a request failing with 503', async () => load.samples.some((s) => s.status === 503 && s.at > outageStarted), 20_000)

    // A network that drops everything: connects hang until the connect timeout, and readiness names it.
    const blackholed = performance.now()
    await proxy.set('blackhole')
    // Readiness answers from one database check per BERNSTEIN_READINESS_CACHE_MS (1 s): a later check names the new fault.
    const namesTimeout = (json: unknown): boolean => (json as { reason?: unknown } | null)?.reason === 'database unreachable: connect timeout'
    await waitUntil('readiness to name the silent network', async () => namesTimeout((await ready(url)).json), 20_000)
    const hanging = await ready(url)
    expect(hanging.status).toBe(503)
    expect(hanging.json).toEqual({ status: 'not_ready', reason: 'database unreachable: connect timeout' })
    // The load meets the silent network too: a request sent after it began has been answered 503.
    await waitUntil(
      'a request sent into the silent network to fail with 503',
      async () => load.samples.some((s) => s.status === 503 && s.at - s.ms > blackholed),
      20_000,
    )

    // The database comes back; nobody restarts the server.
    await proxy.set('forward')
    const recovered = performance.now()
    const recoveryMs = await waitUntil('readiness to recover', async () => (await ready(url)).status === 200, 30_000)
    await waitUntil('writes after the outage', async () => [...load.samples].some((s) => s.kind === 'create' && s.status === 201 && s.at > recovered), 30_000)
    await load.stop()

    const during = load.samples.filter((s) => s.at > outageStarted && s.at < recovered)
    console.log(
      `[fault/proxy] ${load.samples.length} requests, ${load.samples.filter((s) => s.status === 503).length} answered 503; ` +
        `slowest during the outage ${Math.max(...during.map((s) => s.ms)).toFixed(0)} ms; readiness back ${recoveryMs.toFixed(0)} ms after the database`,
    )
    expectCleanFailures(load.samples)
    expect(server.alive(), server.output()).toBe(true)
    for (const id of ackedBefore.keys()) expect(load.acked.has(id)).toBe(true)
    await expectNothingLost(url, load.acked)
  }, 180_000)

  it('PostgreSQL terminates the server’s backends again and again: no crash, no 500, readiness recovers, nothing lost', async () => {
    schema = await createSchema('fault')
    const applicationName = `bernstein-fault-kill-${schema.name}`
    server = await spawnServer(serverEnv(schema.url({ applicationName })))
    const url = server.url
    const load = startLoad(() => url, 4)
    await waitUntil('writes before the kills', async () => load.acked.size >= 10)

    const admin = new pg.Client({ connectionString: PG_URL ?? '' })
    await admin.connect()
    let terminated = 0
    const until = performance.now() + 4_000
    while (performance.now() < until) {
      const rows = await admin.query<{ t: boolean }>(
        'select pg_terminate_backend(pid) as t from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()',
        [applicationName],
      )
      terminated += rows.rows.filter((r) => r.t).length
      await new Promise((r) => setTimeout(r, 100))
    }
    await admin.end()
    const afterKills = performance.now()
    const recoveryMs = await waitUntil('readiness after the kills', async () => (await ready(url)).status === 200, 30_000)
    await waitUntil('writes after the kills', async () => load.samples.some((s) => s.kind === 'create' && s.status === 201 && s.at > afterKills), 30_000)
    await load.stop()

    console.log(
      `[fault/terminate] ${terminated} backends terminated; ${load.samples.length} requests, ` +
        `${load.samples.filter((s) => s.status === 503).length} answered 503; ready again after ${recoveryMs.toFixed(0)} ms`,
    )
    expect(terminated).toBeGreaterThan(0)
    expectCleanFailures(load.samples)
    expect(server.alive(), server.output()).toBe(true)
    await expectNothingLost(url, load.acked)
  }, 180_000)

  it('a request in flight at SIGTERM completes before the process exits (graceful drain)', async () => {
    schema = await createSchema('drain')
    const applicationName = `bernstein-drain-${schema.name}`
    server = await spawnServer(
      serverEnv(schema.url({ applicationName }), { BERNSTEIN_DB_STATEMENT_TIMEOUT_MS: '30000', BERNSTEIN_DB_CONNECT_TIMEOUT_MS: '5000' }),
    )
    const url = server.url
    expect((await http(url, 'POST', '/tasks', { title: 'before' })).status).toBe(201)

    // Hold every chain head (whichever of the 128 partitions the next write's new task lands in, existing or not) so
    // that the next write stays in flight inside the server.
    const blocker = new pg.Client({ connectionString: schema.url() })
    await blocker.connect()
    await blocker.query('begin')
    await blocker.query('lock table chain_heads in exclusive mode')
    const inFlight = http(url, 'POST', '/tasks', { title: 'in flight at SIGTERM' }, { timeoutMs: 60_000 })
    await waitUntil('the write to wait on the lock', async () => {
      const waiting = await schema!.query<{ n: string }>(
        "select count(*) as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
        [applicationName],
      )
      return Number(waiting[0]?.n) > 0
    })

    server.child.kill('SIGTERM')
    await new Promise((r) => setTimeout(r, 500))
    expect(server.alive()).toBe(true)
    // Draining: no new connections are accepted.
    await expect(fetch(url + '/health/live', { signal: AbortSignal.timeout(5_000) })).rejects.toThrow()

    await blocker.query('commit')
    await blocker.end()
    const answer = await inFlight
    expect(answer.status).toBe(201)
    const id = (answer.json as { id: string }).id
    expect(await server.exited).toEqual({ code: 0, signal: null })
    const stored = await schema.query<{ title: string }>('select title from tasks where id = $1', [id])
    expect(stored).toEqual([{ title: 'in flight at SIGTERM' }])
  }, 120_000)
})
