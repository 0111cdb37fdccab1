/**
 * Overload: far more concurrent sends than the node sustains. First the sustainable rate is measured (a few
 * clients sending back to back, nothing shed); then the node is pushed: in the full mode, new sends are started at
 * 4× that rate for 30 s whatever the answers, over a fixed pool of kept-alive connections opened beforehand (twice
 * the in-flight bound); in the quick mode, many more concurrent senders than its in-flight bound for a few seconds.
 * The node must shed (503 with Retry-After), give no other 5xx, keep everything it acknowledged, and serve normally
 * again afterwards. The full mode also holds the accepted sends' p99 (from the moment each was due, its wait for a
 * free connection included) to {@link ACCEPTED_P99_BOUND_MS} and the recovery to {@link RECOVERY_BOUND_MS}; the
 * quick mode (CI, on shared machines) reports latencies and never asserts them.
 *
 * Why a pool and not a connection per send: a generator on the same cores that opens a connection per request
 * measures itself (fetch's connection set-up cost the generator as much CPU as the node), and Node accepts about one
 * connection per turn of its event loop, so a loaded node lets its listen backlog fill: the kernel then drops SYNs,
 * clients retry 1, 3, 7… s later, and those seconds were the p99 of the accepted sends, in a queue the node never saw.
 *
 * @module
 */
import type { ServerProcess } from '../../test/helpers/cli.js'
import {
  type Answer,
  type FaultEngine,
  type ScenarioOptions,
  type ScenarioReport,
  type ConnectionPool,
  call,
  check,
  connectionPool,
  createStorage,
  eventually,
  ms,
  newReport,
  quantile,
  serve,
  sleep,
} from './common.js'
import { checkInvariants, emptyAcknowledged } from './invariants.js'

/** How a send is made: on a connection of its own (quick mode), or on a pool's kept-alive connection (full mode). */
type Send = (message: string) => Promise<Answer>

/** The bound the full mode holds the accepted sends' p99 to: the default request deadline (the node's own bound). */
const ACCEPTED_P99_BOUND_MS = 5_000
/** The full mode: the first send accepted after the overload at most this long after it. */
const RECOVERY_BOUND_MS = 5_000

/** Sends back to back from `clients` clients for `seconds`; the answers. */
async function closedLoop(send: Send, clients: number, seconds: number, tag: string): Promise<Answer[]> {
  const answers: Answer[] = []
  const until = performance.now() + seconds * 1000
  let n = 0
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) answers.push(await send(`${tag} ${n++}`))
    }),
  )
  return answers
}

/** New sends started at `rate` per second for `seconds`, not waiting for the others. */
async function openLoop(send: Send, rate: number, seconds: number, tag: string): Promise<Answer[]> {
  const pending: Promise<Answer>[] = []
  const started = performance.now()
  let n = 0
  while (performance.now() - started < seconds * 1000) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate)
    while (n < due) pending.push(send(`${tag} ${n++}`))
    await sleep(5)
  }
  return Promise.all(pending)
}

export async function overload(engine: FaultEngine, options: ScenarioOptions): Promise<ScenarioReport> {
  const report = newReport('overload: sheds with 503 + Retry-After, no other 5xx, nothing lost, normal after', engine)
  const storage = await createStorage(engine)
  // Quick: a small in-flight bound, so that a few hundred concurrent senders overload even a slow shared machine.
  const maxWrites = options.quick ? 16 : 128
  let server: ServerProcess | undefined
  const pools: ConnectionPool[] = []
  const acked = emptyAcknowledged()
  const record = (answers: readonly Answer[]): void => {
    for (const a of answers) {
      if (a.status !== 201) continue
      const body = a.json as { id: string; bernstein_task_id: string; message: string; receipt: { entry_hash: string } }
      acked.sends.set(body.id, { bernsteinTaskId: body.bernstein_task_id, message: body.message, entryHash: body.receipt.entry_hash })
    }
  }
  try {
    // Both shedding criteria as in production: writes in flight, and the event loop's delay (the test helper turns the
    // latter off for other suites).
    server = await serve(storage, {
      BERNSTEIN_MAX_WRITES_IN_FLIGHT: String(maxWrites),
      BERNSTEIN_MAX_EVENT_LOOP_DELAY_MS: '2000',
      // Quick: the in-flight bound is what is tested (on a loaded CI machine a few writes can take 500 ms by themselves).
      BERNSTEIN_MAX_WRITE_LATENCY_MS: options.quick ? '0' : '500',
    })
    const url = server.url
    const body = (message: string): unknown => ({ sender: 'overload', message })
    const ownConnection: Send = (message) => call(url, 'POST', '/a2a/tasks/send', body(message))
    const onPool =
      (pool: ConnectionPool): Send =>
      (message) =>
        pool.call('POST', '/a2a/tasks/send', body(message))
    const baselinePool = connectionPool(url, 4)
    pools.push(baselinePool)
    const baseline = await closedLoop(options.quick ? ownConnection : onPool(baselinePool), 4, options.quick ? 2 : 10, 'baseline')
    record(baseline)
    const ok = baseline.filter((a) => a.status === 201)
    const seconds = options.quick ? 2 : 10
    const rate = ok.length / seconds
    report.figures.push([
      'sustained (4 clients back to back)',
      `${rate.toFixed(0)} sends/s, p50 ${ms(
        quantile(
          ok.map((a) => a.ms),
          0.5,
        ),
      )}, p99 ${ms(
        quantile(
          ok.map((a) => a.ms),
          0.99,
        ),
      )}`,
    ])
    check(
      report,
      baseline.every((a) => a.status === 201),
      `the baseline was not all 201: ${[...new Set(baseline.map((a) => a.status))].join(', ')}`,
    )

    // Every connection opened (and accepted) before the push: the node is measured, not its accept queue.
    const connections = options.quick ? 16 * maxWrites : 2 * maxWrites
    const pool = connectionPool(url, connections)
    pools.push(pool)
    await Promise.all(Array.from({ length: connections }, () => pool.call('GET', '/health/live')))
    const pushed = options.quick
      ? await closedLoop(onPool(pool), connections, 3, 'overload')
      : await openLoop(onPool(pool), Math.max(4 * rate, 1), 30, 'overload')
    record(pushed)
    const accepted = pushed.filter((a) => a.status === 201)
    const shed = pushed.filter((a) => a.status === 503)
    const shedWithRetry = shed.filter((a) => a.headers.get('retry-after') !== null)
    const other = pushed.filter((a) => a.status !== 201 && a.status !== 503)
    report.figures.push([
      options.quick
        ? `pushed (${16 * maxWrites} concurrent senders on kept-alive connections, in-flight bound ${maxWrites})`
        : `pushed (4× = ${(4 * rate).toFixed(0)} sends/s for 30 s over ${2 * maxWrites} kept-alive connections)`,
      `${pushed.length} sends: ${accepted.length} accepted (p50 ${ms(
        quantile(
          accepted.map((a) => a.ms),
          0.5,
        ),
      )}, p99 ${ms(
        quantile(
          accepted.map((a) => a.ms),
          0.99,
        ),
      )}), ` +
        `${shed.length} shed (p99 ${ms(
          quantile(
            shed.map((a) => a.ms),
            0.99,
          ),
        )}), ${other.length} other`,
    ])
    check(report, shed.length > 0, 'nothing was shed: the node queued everything')
    check(report, shedWithRetry.length === shed.length, `${shed.length - shedWithRetry.length} of the 503s had no Retry-After`)
    const otherStatuses = [...new Set(other.map((a) => (a.status === 0 ? `no answer (${a.error})` : String(a.status))))]
    check(report, other.length === 0, `answers other than 201 and 503: ${other.length} (${otherStatuses.join(', ')})`)

    // Back to normal: a send answered 201 soon after, then a short closed loop with nothing shed.
    const ended = performance.now()
    const normal = await eventually(async () => (await call(url, 'POST', '/a2a/tasks/send', { sender: 'after', message: 'after' })).status === 201, 60_000, 100)
    const recoveredMs = performance.now() - ended
    check(report, normal, 'no send was accepted within 60 s after the overload')
    if (!options.quick) {
      const p99 = quantile(
        accepted.map((a) => a.ms),
        0.99,
      )
      check(report, p99 <= ACCEPTED_P99_BOUND_MS, `the accepted sends' p99 was ${ms(p99)}, over ${ms(ACCEPTED_P99_BOUND_MS)}`)
      check(report, recoveredMs <= RECOVERY_BOUND_MS, `the first send was accepted ${ms(recoveredMs)} after the overload, over ${ms(RECOVERY_BOUND_MS)}`)
    }
    const after = await closedLoop(ownConnection, 4, options.quick ? 1 : 5, 'after')
    record(after)
    const afterOk = after.filter((a) => a.status === 201)
    report.figures.push([
      'after',
      `first send accepted ${ms(recoveredMs)} after the overload; then ${afterOk.length}/${after.length} accepted, p99 ${ms(
        quantile(
          afterOk.map((a) => a.ms),
          0.99,
        ),
      )}`,
    ])
    check(
      report,
      after.every((a) => a.status === 201),
      `after the overload, sends were still refused: ${[...new Set(after.map((a) => a.status))].join(', ')}`,
    )
    check(report, server.alive(), 'the server process died')
    const counts = await checkInvariants(url, storage, acked, report, 'after the overload')
    report.figures.push(['acknowledged', `${counts.acknowledged} / found ${counts.found} / lost ${counts.lost}`])
  } finally {
    for (const pool of pools) pool.close()
    await server?.stop('SIGKILL')
    await storage.cleanup()
  }
  return report
}
