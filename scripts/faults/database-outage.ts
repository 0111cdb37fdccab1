/**
 * The database cut, blackholed and stalled under load (PostgreSQL through a TCP proxy the scenario controls,
 * test/pg/support.ts): `cut` resets every connection and refuses new ones, `blackhole` accepts connections and never
 * answers, `stall` keeps the pooled connections open and lets no byte through (the database never sees the query,
 * so only the node's own request deadline can end it). In each: every answer is a success or a clean 503 (with
 * Retry-After where the node set a deadline), none comes later than a generous bound over the request deadline,
 * readiness goes red, and after the proxy heals the node recovers by itself; nothing acknowledged is lost.
 *
 * @module
 */
import { TcpProxy, pgAddress } from '../../test/pg/support.js'
import type { ServerProcess } from '../../test/helpers/cli.js'
import {
  type Answer,
  PG_URL,
  type ScenarioOptions,
  type ScenarioReport,
  call,
  check,
  createStorage,
  eventually,
  ms,
  newReport,
  quantile,
  schemaUrl,
  serve,
  sleep,
} from './common.js'
import { emptyAcknowledged, checkInvariants } from './invariants.js'

/** The node's request deadline in this scenario. */
const DEADLINE_MS = 2_000
/**
 * A 503 later than this is a hang, not a deadline: far above the deadline and the node's connect and statement
 * timeouts (about 4 s together here), so that a busy machine does not turn slowness into a failure; far below the
 * 35 s requests used to wait.
 */
const HANG_MS = 30_000

export async function databaseOutage(options: ScenarioOptions): Promise<ScenarioReport> {
  const report = newReport('database cut, blackholed and stalled: clean 503s, readiness, recovery', 'postgres')
  if (!PG_URL) {
    report.failures.push('needs TEST_DATABASE_URL')
    return report
  }
  const storage = await createStorage('postgres')
  const proxy = new TcpProxy(pgAddress())
  await proxy.set('forward')
  let server: ServerProcess | undefined
  const answers: (Answer & { kind: 'create' | 'read' })[] = []
  const acked = emptyAcknowledged()
  let running = true
  try {
    server = await serve(storage, {
      DATABASE_URL: schemaUrl(PG_URL, storage.schema as string, { host: '127.0.0.1', port: proxy.port }),
      BERNSTEIN_REQUEST_DEADLINE_MS: String(DEADLINE_MS),
      BERNSTEIN_DB_POOL_SIZE: '4',
      BERNSTEIN_DB_CONNECT_TIMEOUT_MS: '1000',
      BERNSTEIN_DB_STATEMENT_TIMEOUT_MS: '2000',
    })
    const url = server.url
    const client = async (w: number): Promise<void> => {
      let i = 0
      while (running) {
        const created = await call(url, 'POST', '/tasks', { title: `outage ${w}.${i++}`, role: 'fault' }, { timeoutMs: HANG_MS })
        answers.push({ ...created, kind: 'create' })
        if (created.status === 201) {
          const id = (created.json as { id: string }).id
          acked.tasks.set(id, { id, linked: false, ackedVersion: 1, sentVersion: 1 })
          answers.push({ ...(await call(url, 'GET', `/tasks/${id}`, undefined, { timeoutMs: HANG_MS })), kind: 'read' })
        }
        await sleep(20)
      }
    }
    const clients = Array.from({ length: options.quick ? 3 : 6 }, (_, w) => client(w))
    const ready = async (): Promise<number> => (await call(url, 'GET', '/health/ready', undefined, { timeoutMs: HANG_MS })).status
    const createdSince = (t: number): boolean => answers.some((a) => a.kind === 'create' && a.status === 201 && a.sentAt > t)
    const shedSince = (t: number): boolean => answers.some((a) => a.status === 503 && a.sentAt > t)
    check(report, await eventually(async () => acked.tasks.size >= 5, 60_000), 'no write was acknowledged before the outage')

    for (const mode of ['refuse', 'blackhole', 'stall'] as const) {
      const name = mode === 'refuse' ? 'cut' : mode
      const outage = performance.now()
      await proxy.set(mode)
      const red = await eventually(async () => (await ready()) === 503, 60_000, 200)
      check(report, red, `${name}: readiness did not go red within 60 s`)
      const shed = await eventually(async () => shedSince(outage), 60_000, 100)
      check(report, shed, `${name}: no request sent during the outage was answered 503 within 60 s`)
      // Hold the outage a while longer in the full mode.
      if (!options.quick) await sleep(10_000)
      await proxy.set('forward')
      const healed = performance.now()
      const green = await eventually(async () => (await ready()) === 200, 60_000, 200)
      const recoveredMs = performance.now() - healed
      check(report, green, `${name}: readiness did not go green within 60 s of the database coming back`)
      check(report, await eventually(async () => createdSince(healed), 60_000), `${name}: no write succeeded within 60 s of the database coming back`)
      const during = answers.filter((a) => a.sentAt > outage && a.sentAt < healed)
      const failed = during.filter((a) => a.status === 503)
      report.figures.push([
        name,
        `${during.length} requests sent during it, ${failed.length} answered 503 (slowest ${ms(Math.max(0, ...failed.map((a) => a.ms)))}, ` +
          `p50 ${ms(
            quantile(
              failed.map((a) => a.ms),
              0.5,
            ),
          )}; deadline ${DEADLINE_MS} ms); ready again ${ms(recoveredMs)} after the database came back`,
      ])
    }
    running = false
    await Promise.all(clients)

    const unexpected = answers.filter((a) => !(a.kind === 'create' ? [201, 503] : [200, 503]).includes(a.status))
    check(
      report,
      unexpected.length === 0,
      `answers other than success or 503: ${unexpected
        .slice(0, 5)
        .map((a) => `${a.kind} ${a.status} ${a.error ?? JSON.stringify(a.json)}`)
        .join('; ')}`,
    )
    const unavailable = answers.filter((a) => a.status === 503)
    const withoutRetryAfter = unavailable.filter((a) => a.headers.get('retry-after') === null)
    const retryAfter = unavailable.length - withoutRetryAfter.length
    report.figures.push(['503s', `${unavailable.length} of ${answers.length} answers; ${retryAfter} with Retry-After`])
    check(report, withoutRetryAfter.length === 0, `${withoutRetryAfter.length} 503s without Retry-After`)
    const badBody = unavailable.filter((a) => typeof (a.json as { detail?: unknown })?.detail !== 'string')
    check(report, badBody.length === 0, `${badBody.length} 503s without a detail`)
    check(report, server.alive(), 'the server process died')
    const counts = await checkInvariants(url, storage, acked, report, 'after the outages')
    report.figures.push(['acknowledged', `${counts.acknowledged} / found ${counts.found} / lost ${counts.lost}`])
  } finally {
    running = false
    await server?.stop('SIGKILL')
    await proxy.close()
    await storage.cleanup()
  }
  return report
}
