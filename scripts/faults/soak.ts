/**
 * The soak (`npm run faults -- --soak`, not in CI): an hour (`--soak-seconds`) at half the sustainable send rate with
 * a mix of operations (creations and lifecycle transitions, sends, artifacts, reads). Compares the first minute with
 * the last: resident memory (each minute's peak) and the p99 of the answers must stay within 1.2× (p99 with a 20 ms
 * floor, below which a shared machine's noise dominates), and the time to verify the tracker-audit chain must stay
 * linear in its length
 * (time per entry at the end within 2× of the first measurement). Everything acknowledged must be there at the end.
 * Before the hour, the rate is measured and each operation of the mix is made once (its first request compiles its
 * validators), so the first minute is compared as the node runs, not as it starts.
 *
 * @module
 */
import type { ServerProcess } from '../../test/helpers/cli.js'
import {
  type Answer,
  type FaultEngine,
  type ScenarioOptions,
  type ScenarioReport,
  call,
  check,
  createStorage,
  ms,
  newReport,
  processUsage,
  quantile,
  serve,
  sleep,
} from './common.js'
import { TASK_PATH, type TrackedTask, checkInvariants, emptyAcknowledged } from './invariants.js'

/** How often resident memory is sampled (each minute keeps its peak). */
const RSS_SAMPLE_MS = 5_000

/** One minute of the soak: its answers' latencies, its peak resident memory, and its 5xx answers (or none at all). */
interface Minute {
  latencies: number[]
  rssKb: number
  errors: number
}

const p99 = (m: Minute): number => quantile(m.latencies, 0.99)

const STEPS = [
  { path: 'claim', body: { agent_id: 'soak' } },
  { path: 'progress', body: { message: 'soaking', percent: 50 } },
  { path: 'complete', body: { result_summary: 'soaked' } },
]

export async function soak(engine: FaultEngine, options: ScenarioOptions & { seconds: number }): Promise<ScenarioReport> {
  const report = newReport('soak: half the sustainable rate, memory, p99 and chain verification over time', engine)
  const storage = await createStorage(engine)
  let server: ServerProcess | undefined
  const acked = emptyAcknowledged()
  try {
    server = await serve(storage)
    const url = server.url
    const pid = server.child.pid as number
    // The sustainable rate: four clients back to back for 10 s.
    let sent = 0
    const until = performance.now() + 10_000
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (performance.now() < until) if ((await call(url, 'POST', '/a2a/tasks/send', { sender: 'soak', message: `rate ${sent}` })).status === 201) sent++
      }),
    )
    // Each operation of the mix once before the first minute: an operation's first request compiles its validators
    // (about 100 ms), a one-time cost that is not what the soak compares.
    const warmTask = await call(url, 'POST', '/tasks', { title: 'soak warm-up', role: 'soak' })
    const warmSend = await call(url, 'POST', '/a2a/tasks/send', { sender: 'soak', message: 'soak warm-up' })
    const warmId = (warmTask.json as { id?: string } | null)?.id
    const warmA2aId = (warmSend.json as { id?: string } | null)?.id
    const warmed = [warmTask, warmSend]
    for (const step of STEPS) warmed.push(await call(url, 'POST', `/tasks/${warmId}/${step.path}`, step.body))
    warmed.push(await call(url, 'POST', `/a2a/tasks/${warmA2aId}/artifacts`, { name: 'warm-up.txt', data: 'x' }), await call(url, 'GET', '/tasks?limit=20'))
    check(
      report,
      warmed.every((w) => w.status === 200 || w.status === 201),
      `the warm-up failed: ${warmed.map((w) => w.status).join(', ')}`,
    )
    const rate = Math.max(1, sent / 10 / 2)
    report.figures.push(['rate', `sustainable ${(sent / 10).toFixed(0)} sends/s; soaking at ${rate.toFixed(0)} operations/s for ${options.seconds} s`])

    // Resident memory is sampled every few seconds and each minute keeps its peak: the minute's first sample alone
    // would compare the node before its heap and caches had grown to their working size with the node after.
    // Each minute keeps its answers' latencies only: an hour of answers with their bodies grew this process to 900 MB,
    // and its own garbage collection then showed up as the node's latency.
    const minutes: Minute[] = []
    let sampledAt = 0
    const verifyTimes: { entries: number; ms: number }[] = []
    const measureVerify = async (): Promise<void> => {
      const v = await call(url, 'GET', '/lineage/tracker-audit/verify', undefined, { timeoutMs: 600_000 })
      const body = v.json as { ok: boolean; entries: number }
      check(report, v.status === 200 && body.ok, `the chain did not verify: ${v.status} ${JSON.stringify(v.json)}`)
      verifyTimes.push({ entries: body.entries, ms: v.ms })
    }
    await measureVerify()
    let verifying = Promise.resolve()
    // The tasks that can take their next step now (acknowledged, not finished, no step in flight), kept as they
    // change rather than searched for on every operation (a search grew with the hour's tasks).
    const movable: TrackedTask[] = []
    const sends: string[] = []
    const started = performance.now()
    let n = 0
    const inFlight = new Set<Promise<void>>()
    while (performance.now() - started < options.seconds * 1000) {
      const minute = Math.floor((performance.now() - started) / 60_000)
      while (minutes.length <= minute) {
        const ended = minutes[minutes.length - 1]
        if (ended !== undefined)
          options.log?.(
            `minute ${minutes.length}: peak ${Math.round(ended.rssKb / 1024)} MB resident, p99 ${ms(p99(ended))}${ended.errors > 0 ? `, ${ended.errors} × 5xx` : ''}`,
          )
        minutes.push({ latencies: [], rssKb: processUsage(pid).rssKb, errors: 0 })
        sampledAt = performance.now()
        // Every ten minutes, beside the load (the offered rate does not pause for it), and never in the last two
        // minutes: the last minute is compared with the first, which had no verification running.
        const left = options.seconds - minutes.length * 60
        if (minutes.length % 10 === 0 && left >= 120) verifying = verifying.then(measureVerify)
      }
      if (performance.now() - sampledAt >= RSS_SAMPLE_MS) {
        const bucket = minutes[minutes.length - 1] as Minute
        bucket.rssKb = Math.max(bucket.rssKb, processUsage(pid).rssKb)
        sampledAt = performance.now()
      }
      const due = Math.floor(((performance.now() - started) / 1000) * rate)
      while (n < due) {
        const i = n++
        const op = async (): Promise<void> => {
          const bucket = minutes[minutes.length - 1] as Minute
          const roll = i % 10
          let r: Answer
          if (roll < 3 || movable.length === 0) {
            r = await call(url, 'POST', '/tasks', { title: `soak ${i}`, role: 'soak' })
            if (r.status === 201) {
              const t = { id: (r.json as { id: string }).id, linked: false, ackedVersion: 1, sentVersion: 1 }
              movable.push(t)
              acked.tasks.set(t.id, t)
            }
          } else if (roll < 6) {
            const index = i % movable.length
            const t = movable[index] as TrackedTask
            // Out of the movable ones while its step is in flight (the last one takes its place).
            movable[index] = movable[movable.length - 1] as TrackedTask
            movable.pop()
            const step = STEPS[t.ackedVersion - 1] as { path: string; body: unknown }
            t.sentVersion = t.ackedVersion + 1
            r = await call(url, 'POST', `/tasks/${t.id}/${step.path}`, step.body)
            // Unacknowledged, its version is unknown (the step may have committed): it moves no further.
            if (r.status === 200) {
              t.ackedVersion = t.sentVersion
              if (t.ackedVersion < TASK_PATH.length) movable.push(t)
            }
          } else if (roll < 8) {
            const message = `soak send ${i}`
            r = await call(url, 'POST', '/a2a/tasks/send', { sender: 'soak', message })
            if (r.status === 201) {
              const body = r.json as { id: string; bernstein_task_id: string; receipt: { entry_hash: string } }
              acked.sends.set(body.id, { bernsteinTaskId: body.bernstein_task_id, message, entryHash: body.receipt.entry_hash })
              sends.push(body.id)
            }
          } else if (roll < 9 && sends.length > 0) {
            const a2aId = sends[i % sends.length] as string
            const name = `soak-${i}.txt`
            r = await call(url, 'POST', `/a2a/tasks/${a2aId}/artifacts`, { name, data: 'x'.repeat(200) })
            if (r.status === 201) acked.artifacts.push({ a2aId, name })
          } else {
            r = await call(url, 'GET', '/tasks?limit=20')
          }
          bucket.latencies.push(r.ms)
          if (r.status >= 500 || r.status === 0) {
            bucket.errors++
            report.failures.push(`operation ${i}: ${r.status} ${r.error ?? JSON.stringify(r.json)}`.slice(0, 300))
          }
        }
        const p = op().finally(() => inFlight.delete(p))
        inFlight.add(p)
      }
      await sleep(10)
    }
    await Promise.all(inFlight)
    const first = minutes[0] as Minute
    const last = minutes[minutes.length - 1] as Minute
    // The end of the hour, before the closing verification: the first minute's figure does not include the opening
    // one either (a PostgreSQL soak read 193 MB after verifying the hour's 431 000 entries, 176 MB in minute 59).
    const lastRss = Math.max(last.rssKb, processUsage(pid).rssKb)
    await verifying
    await measureVerify()
    report.figures.push(['resident memory', `peak of the first minute ${Math.round(first.rssKb / 1024)} MB, of the last ${Math.round(lastRss / 1024)} MB`])
    report.figures.push(['p99', `first minute ${ms(p99(first))}, last minute ${ms(p99(last))}`])
    const erred = minutes.flatMap((m, i) => (m.errors > 0 ? [`minute ${i + 1}: ${m.errors}`] : []))
    report.figures.push(['5xx', erred.length === 0 ? 'none' : `${minutes.reduce((sum, m) => sum + m.errors, 0)} (${erred.join(', ')})`])
    report.figures.push(['chain verification', verifyTimes.map((v) => `${v.entries} entries ${ms(v.ms)}`).join(', ')])
    if (minutes.length >= 2) {
      check(report, lastRss <= first.rssKb * 1.2, `resident memory grew from ${first.rssKb} kB to ${lastRss} kB (over 1.2×)`)
      check(report, Math.max(p99(last), 20) <= Math.max(p99(first), 20) * 1.2, `p99 grew from ${ms(p99(first))} to ${ms(p99(last))} (over 1.2×)`)
    }
    const perEntry = verifyTimes.filter((v) => v.entries >= 1000).map((v) => v.ms / v.entries)
    if (perEntry.length >= 2) {
      check(report, (perEntry[perEntry.length - 1] as number) <= (perEntry[0] as number) * 2, 'chain verification time grew faster than the chain')
    }
    if (report.failures.length > 20) report.failures.splice(20, report.failures.length - 20, `… and ${report.failures.length - 20} more`)
    const counts = await checkInvariants(url, storage, acked, report, 'after the soak')
    report.figures.push(['acknowledged', `${counts.acknowledged} / found ${counts.found} / lost ${counts.lost}`])
  } finally {
    await server?.stop('SIGKILL')
    await storage.cleanup()
  }
  return report
}
