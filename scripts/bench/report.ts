/** The results table, the ratios and the targets (PASS/MISS lines, never a failure), as Markdown and JSON. */
import type { CaseSummary, SubjectSummary } from './cases.js'
import type { MicroResult } from './micro.js'
import { LOCK_HOLD_METRIC, type LockHold, replicaLabel } from './replicas.js'
import { medianOfRatios } from './stats.js'
import type { FanOutResult } from './v1.js'

export interface Ratio {
  readonly name: string
  readonly value: number
  readonly meaning: string
}

export interface Target {
  readonly name: string
  /** null when the case was not run (or a system was absent): reported as SKIP. */
  readonly pass: boolean | null
  readonly measured: string
  readonly goal: string
  /** Why a target was not judged (printed instead of "not measured in this run"). */
  readonly skipReason?: string
}

/** Start-up of bernstein-a2a (wall and its own CPU, ms) and of the bare node:http reference started beside it. */
export interface Startup {
  readonly readyMs: readonly number[]
  readonly medianMs: number
  readonly cpuMs: readonly number[]
  readonly medianCpuMs: number
  readonly referenceMs: readonly number[]
  readonly referenceMedianMs: number
}

export interface Report {
  readonly generatedAt: string
  readonly mode: 'quick' | 'full'
  readonly machine: { readonly node: string; readonly cpus: number; readonly cpuModel: string; readonly loadAverage: readonly number[] }
  readonly settings: Record<string, unknown>
  readonly cases: readonly CaseSummary[]
  readonly micro: readonly MicroResult[]
  readonly startup: Startup
  readonly ratios: readonly Ratio[]
  readonly targets: readonly Target[]
  /** The chain lock hold read from the replicas' /metrics, per partition setting (empty when not measured). */
  readonly lockHold: readonly LockHold[]
  readonly fanOut: FanOutResult | null
  /** Cases that could not run on this node, each with its reason ("skipped: …"). */
  readonly skipped: readonly string[]
  readonly notes: readonly string[]
}

const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a')
const pct = (n: number): string => (Number.isFinite(n) ? `${(n * 100).toFixed(0)} %` : 'n/a')

export function find(cases: readonly CaseSummary[], caseName: string, label: string): SubjectSummary | undefined {
  return cases.find((c) => c.name === caseName)?.subjects.find((s) => s.label === label)
}

/**
 * `a ÷ b` of one figure, as the median of the per-round ratios when both subjects ran the same rounds: round r of
 * every subject runs within the same minute (interleaved), so pairing them cancels the drift of the machine between
 * rounds, which a ratio of the two medians keeps (here ±20-30 % within a minute). The ratio of the medians is the
 * fallback when the rounds do not pair up.
 */
export function pairedRatio(a: SubjectSummary, b: SubjectSummary, figure: 'rps' | 'p99' | 'cpuUsPerOp'): number {
  if (a.rounds.length > 0 && a.rounds.length === b.rounds.length)
    return medianOfRatios(
      a.rounds.map((r) => r[figure]),
      b.rounds.map((r) => r[figure]),
    )
  return a[figure] / b[figure]
}

export function markdown(report: Report): string {
  const lines: string[] = []
  lines.push(`# Benchmark results (${report.mode})`)
  lines.push('')
  lines.push(
    `${report.generatedAt}; Node ${report.machine.node}, ${report.machine.cpus} × ${report.machine.cpuModel}, load average at start ${report.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')}. ` +
      `Settings: ${Object.entries(report.settings)
        .map(([k, v]) => `${k} ${String(v)}`)
        .join(', ')}.`,
  )
  lines.push('')
  lines.push('| case | system | ops/s | p50 ms | p99 ms | server CPU µs/op | peak RSS MB |')
  lines.push('|---|---|---:|---:|---:|---:|---:|')
  for (const c of report.cases) {
    for (const s of c.subjects)
      lines.push(`| ${c.title} | ${s.label} | ${fmt(s.rps)} | ${fmt(s.p50, 1)} | ${fmt(s.p99, 1)} | ${fmt(s.cpuUsPerOp)} | ${fmt(s.peakRssMb)} |`)
  }
  lines.push('')
  lines.push("| micro-benchmark | bernstein-a2a ops/s | raw primitive ops/s | ratio (median of the rounds' ratios) |")
  lines.push('|---|---:|---:|---:|')
  for (const m of report.micro)
    lines.push(`| ${m.name} (${m.iterations} × ${m.rounds} rounds) | ${fmt(m.subjectOps)} | ${fmt(m.baselineOps)} | ${pct(m.ratio)} |`)
  lines.push('')
  lines.push(
    `Ready to serve (spawn → first 200 on /health/ready, fresh SQLite data directory): median ${fmt(report.startup.medianMs)} ms ` +
      `(${report.startup.readyMs.map((ms) => fmt(ms)).join(', ')} ms), of which the server's own CPU time ${fmt(report.startup.medianCpuMs)} ms. ` +
      `A bare node:http server, started and polled the same way in the same run: median ${fmt(report.startup.referenceMedianMs)} ms ` +
      `(${report.startup.referenceMs.map((ms) => fmt(ms)).join(', ')} ms).`,
  )
  lines.push('')
  for (const h of report.lockHold)
    lines.push(
      h.meanMs === null
        ? `Chain lock hold (${h.setting}): n/a: metric ${LOCK_HOLD_METRIC} not present.`
        : `Chain lock hold (${h.setting}, ${h.partitions} partition${h.partitions > 1 ? 's' : ''}): mean ${fmt(h.meanMs, 3)} ms over ${h.samples} writes on all replicas; derived ceiling ${fmt(h.ceiling ?? Number.NaN)} writes/s (partitions ÷ mean hold).`,
    )
  if (report.fanOut)
    lines.push(
      `Stream fan-out: ${report.fanOut.subscribers} subscribers on one task, ${report.fanOut.produced} artifact events in ${fmt(report.fanOut.seconds, 1)} s: ` +
        `${fmt(report.fanOut.deliveredPerSecond)} events/s delivered, ${pct(report.fanOut.completeness)} of the expected deliveries arrived.`,
    )
  for (const s of report.skipped) lines.push(`- ${s}`)
  if (report.lockHold.length > 0 || report.fanOut || report.skipped.length > 0) lines.push('')
  lines.push('## Ratios')
  lines.push('')
  lines.push(
    "Each load ratio is the median of the ratios of the same round (the systems run interleaved, round by round), so that the machine drifting between rounds cancels out; the table above has each system's own median.",
  )
  lines.push('')
  for (const r of report.ratios) lines.push(`- **${r.name}**: ${fmt(r.value, 2)}× (${r.meaning})`)
  lines.push('')
  lines.push('## Targets')
  lines.push('')
  lines.push('```')
  for (const t of report.targets)
    lines.push(
      `${t.pass === null ? 'SKIP' : t.pass ? 'PASS' : 'MISS'}  ${t.name}: ${t.pass === null ? (t.skipReason ?? 'not measured in this run') : t.measured} (goal ${t.goal})`,
    )
  lines.push('```')
  if (report.notes.length > 0) {
    lines.push('')
    for (const n of report.notes) lines.push(`- ${n}`)
  }
  lines.push('')
  return lines.join('\n')
}

/** The replica case's lock hold, and whether the run tried to measure it at all. */
export interface WritePathExtras {
  readonly lockHold: readonly LockHold[]
  readonly lockHoldMeasured: boolean
}

/** The goal for the cluster ceiling the lock hold implies (judged on the default partitioning). */
export const CEILING_GOAL = 10_000

/** The replica setting the targets judge: the node's default partitioning on PostgreSQL (`--partitions`). */
const DEFAULT_SETTING = 'partitioned'
const DEFAULT_PARTITIONING = 'the default partitioning'

export function ratiosAndTargets(
  cases: readonly CaseSummary[],
  micro: readonly MicroResult[],
  startup: Startup,
  scaleSizes: readonly number[],
  extras: WritePathExtras = { lockHold: [], lockHoldMeasured: false },
): { ratios: Ratio[]; targets: Target[] } {
  const ratios: Ratio[] = []
  const targets: Target[] = []
  /** Throughput of `ours` ÷ `theirs` in case `caseName`, recorded when both ran (NaN otherwise). */
  const ratio = (name: string, caseName: string, ours: string, theirs: string, meaning: string): number => {
    const a = find(cases, caseName, ours)
    const b = find(cases, caseName, theirs)
    const value = a && b ? pairedRatio(a, b, 'rps') : Number.NaN
    if (a && b) ratios.push({ name, value, meaning })
    return value
  }
  const sendSdkDurable = ratio(
    'send ÷ SDK SendMessage with its durable SQLite store',
    'send',
    'bernstein-a2a sqlite',
    'a2a-sdk SendMessage sqlite',
    'throughput of a signed, durable, validated send against the official SDK on its DatabaseTaskStore (Kysely + better-sqlite3, WAL, synchronous=FULL)',
  )
  const sendSdk = ratio(
    'send ÷ SDK SendMessage',
    'send',
    'bernstein-a2a sqlite',
    'a2a-sdk SendMessage',
    'throughput of a signed, durable, validated send against the official SDK answering from memory',
  )
  const sendExpress = ratio('send ÷ bare express', 'send', 'bernstein-a2a sqlite', 'express', 'share of the framework ceiling kept while doing the real work')
  ratio('send (synchronous=NORMAL) ÷ send (FULL)', 'send', 'bernstein-a2a sqlite NORMAL', 'bernstein-a2a sqlite', 'what fsync on every commit costs')
  const sendPg = ratio('send PostgreSQL ÷ SQLite', 'send', 'bernstein-a2a postgres', 'bernstein-a2a sqlite', 'one replica on PostgreSQL against one on SQLite')
  ratio('send PostgreSQL ÷ SDK SendMessage', 'send', 'bernstein-a2a postgres', 'a2a-sdk SendMessage', 'the same against the SDK, on PostgreSQL')
  const getExpress = ratio(
    'GET ÷ bare express',
    'get',
    'bernstein-a2a sqlite',
    'express',
    'an authenticated, validated read from the database against a Map lookup',
  )
  ratio('GET ÷ SDK GetTask', 'get', 'bernstein-a2a sqlite', 'a2a-sdk GetTask', 'against the SDK reading its in-memory store')
  ratio(
    'GetTask (A2A v1.0 JSON-RPC) ÷ SDK GetTask',
    'get',
    'bernstein-a2a v1 GetTask',
    'a2a-sdk GetTask',
    'the same method over the same binding, against the SDK reading its in-memory store',
  )
  ratio(
    'v1 SendMessage (blocking, conformance agent) ÷ SDK SendMessage',
    'v1',
    'bernstein-a2a v1 SendMessage',
    'a2a-sdk SendMessage',
    'a blocking SendMessage completed in process, against the SDK completing it at once in memory',
  )
  ratio('GET PostgreSQL ÷ bare express', 'get', 'bernstein-a2a postgres', 'express', 'the same on PostgreSQL')
  ratio('lifecycle PostgreSQL ÷ SQLite', 'lifecycle', 'bernstein-a2a postgres', 'bernstein-a2a sqlite', 'claim-next + complete on the two engines')

  const cpuRatio = (name: string, caseName: string, ours: string, theirs: string, meaning: string): void => {
    const a = find(cases, caseName, ours)
    const b = find(cases, caseName, theirs)
    if (a && b) ratios.push({ name, value: pairedRatio(b, a, 'cpuUsPerOp'), meaning })
  }
  cpuRatio(
    'send, server CPU per request: SDK ÷ bernstein-a2a',
    'send',
    'bernstein-a2a sqlite',
    'a2a-sdk SendMessage',
    'the same comparison by CPU time, which other load on the machine disturbs less than req/s',
  )
  cpuRatio(
    'send, server CPU per request: SDK durable store ÷ bernstein-a2a',
    'send',
    'bernstein-a2a sqlite',
    'a2a-sdk SendMessage sqlite',
    'against the SDK on its durable store, by CPU time',
  )
  cpuRatio('send, server CPU per request: express ÷ bernstein-a2a', 'send', 'bernstein-a2a sqlite', 'express', 'share of the ceiling by CPU time')
  cpuRatio('GET, server CPU per request: express ÷ bernstein-a2a', 'get', 'bernstein-a2a sqlite', 'express', 'share of the ceiling by CPU time')

  const times = (value: number): string => `${fmt(value, 2)}×`
  targets.push({
    name: 'send ≥ 2.0× the SDK with its durable SQLite store',
    pass: sendSdkDurable >= 2,
    measured: times(sendSdkDurable),
    goal: '≥ 2.00×',
  })
  targets.push({ name: 'send ≥ 0.6× the SDK in memory', pass: sendSdk >= 0.6, measured: times(sendSdk), goal: '≥ 0.60×' })
  targets.push({ name: 'send ≥ 40 % of bare express', pass: sendExpress >= 0.4, measured: pct(sendExpress), goal: '≥ 40 %' })
  targets.push({ name: 'GET ≥ 60 % of bare express', pass: getExpress >= 0.6, measured: pct(getExpress), goal: '≥ 60 %' })
  targets.push({ name: 'send on PostgreSQL ≥ 0.5× send on SQLite (one replica)', pass: sendPg >= 0.5, measured: times(sendPg), goal: '≥ 0.50×' })
  // Judged on the default partitioning ('partitioned', the node's PostgreSQL default); one partition is reported beside
  // it, as what forcing BERNSTEIN_CHAIN_SHARDS=1 costs a cluster.
  for (const setting of ['not partitioned', 'partitioned']) {
    const value = ratio(
      `writes/s, 3 replicas ÷ 1 replica (PostgreSQL, ${setting})`,
      'replicas',
      replicaLabel(3, setting),
      replicaLabel(1, setting),
      'whether replicas add write throughput or take it away (they share the same two cores here)',
    )
    if (setting === DEFAULT_SETTING)
      targets.push({ name: `3 replicas ≥ 1 replica in writes/s (${DEFAULT_PARTITIONING})`, pass: value >= 1, measured: times(value), goal: '≥ 1.00×' })
  }
  ratio(
    'writes/s on 3 replicas, partitioned ÷ not partitioned',
    'replicas',
    replicaLabel(3, 'partitioned'),
    replicaLabel(3, 'not partitioned'),
    'what partitioning the chains gives the cluster',
  )
  {
    const hold = extras.lockHold.find((h) => h.setting === DEFAULT_SETTING)
    const name = `derived cluster ceiling ≥ 10^4 writes/s (partitions ÷ chain lock hold, ${DEFAULT_PARTITIONING})`
    const goal = `≥ ${CEILING_GOAL}/s`
    if (!extras.lockHoldMeasured || hold === undefined) targets.push({ name, pass: null, measured: 'n/a', goal })
    else if (hold.ceiling === null) {
      const reason = hold.meanMs === null ? `n/a: metric ${LOCK_HOLD_METRIC} not present` : 'n/a: no write was recorded'
      targets.push({ name, pass: null, measured: reason, goal, skipReason: reason })
    } else
      targets.push({
        name,
        pass: hold.ceiling >= CEILING_GOAL,
        measured: `${fmt(hold.ceiling)}/s (${hold.partitions} partition${hold.partitions > 1 ? 's' : ''}, mean hold ${fmt(hold.meanMs ?? Number.NaN, 3)} ms)`,
        goal,
      })
  }

  const smallest = scaleSizes[0]
  const largest = scaleSizes[scaleSizes.length - 1]
  if (smallest !== undefined && largest !== undefined && smallest !== largest) {
    const lo = find(cases, 'scale', `${smallest.toExponential(0)} tasks`)
    const hi = find(cases, 'scale', `${largest.toExponential(0)} tasks`)
    const value = lo && hi ? pairedRatio(hi, lo, 'p99') : Number.NaN
    ratios.push({
      name: `GET p99 at ${largest.toExponential(0)} ÷ at ${smallest.toExponential(0)} stored tasks`,
      value,
      meaning: 'how read latency grows with the store',
    })
    targets.push({
      name: `GET p99 at ${largest.toExponential(0)} tasks ≤ 1.3× p99 at ${smallest.toExponential(0)}`,
      pass: value <= 1.3,
      measured: `${fmt(value, 2)}×`,
      goal: '≤ 1.30×',
    })
  }
  for (const m of micro) {
    const value = m.ratio
    const signed = m.name.startsWith('signed request')
    ratios.push({
      name: `${m.name} ÷ raw`,
      value,
      meaning: m.name.startsWith('capability')
        ? 'full card verification against one node:crypto Ed25519 verify'
        : signed
          ? `RFC 9421 sign and verify of a delivery, content digest included, against one raw Ed25519 sign and verify of its body: ${fmt(1e6 / m.subjectOps)} µs per federation request`
          : 'parse, schema, canonical payload, hash and HMAC against hashing the same bytes',
    })
    // What proof of possession costs is reported beside send, not held to a goal.
    if (signed) continue
    const goal = m.name.startsWith('capability') ? 0.8 : 0.5
    targets.push({ name: `${m.name} ≥ ${goal * 100} % of raw`, pass: value >= goal, measured: pct(value), goal: `≥ ${goal * 100} %` })
  }
  const rss = cases.flatMap((c) => c.subjects.filter((s) => s.system.startsWith('bernstein')).map((s) => s.peakRssMb)).filter(Number.isFinite)
  const peak = rss.length > 0 ? Math.max(...rss) : Number.NaN
  targets.push({ name: 'peak RSS of bernstein-a2a under load < 200 MB', pass: peak < 200, measured: `${fmt(peak)} MB`, goal: '< 200 MB' })
  if (startup.readyMs.length > 0) {
    ratios.push({
      name: 'ready ÷ bare node:http ready',
      value: startup.medianMs / startup.referenceMedianMs,
      meaning: 'start-up against the time this machine takes to start any Node server, in the same run',
    })
  }
  targets.push({
    name: 'ready to serve < 1 s after start (SQLite)',
    pass: startup.medianMs < 1000,
    measured: `${fmt(startup.medianMs)} ms wall, ${fmt(startup.medianCpuMs)} ms of its own CPU`,
    goal: '< 1000 ms',
  })
  return { ratios, targets: targets.map((t) => (t.measured.startsWith('n/a') ? { ...t, pass: null } : t)) }
}
