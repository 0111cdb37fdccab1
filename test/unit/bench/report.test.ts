import { describe, expect, it } from 'vitest'
import type { CaseSummary, SubjectSummary } from '../../../scripts/bench/cases.js'
import type { MicroResult } from '../../../scripts/bench/micro.js'
import { derivedCeiling, replicaLabel } from '../../../scripts/bench/replicas.js'
import { type Report, type Startup, type WritePathExtras, markdown, pairedRatio, ratiosAndTargets } from '../../../scripts/bench/report.js'
import { medianOfRatios } from '../../../scripts/bench/stats.js'

function subject(label: string, rps: number, extra: Partial<SubjectSummary> = {}): SubjectSummary {
  const system = label.startsWith('1e+') ? 'bernstein-a2a sqlite' : label
  return { label, system, rps, p50: 1, p99: 10, peakRssMb: 150, readyMs: 100, cpuUsPerOp: 1_000_000 / rps, rounds: [], ...extra }
}

function cases(values: {
  send: number
  sendSdk: number
  sendSdkDurable: number
  sendExpress: number
  sendPg: number
  get: number
  getExpress: number
  p99Small: number
  p99Large: number
  rss: number
  oneReplica: number
  threeReplicas: number
}): CaseSummary[] {
  return [
    {
      name: 'send',
      title: 'send',
      subjects: [
        subject('bernstein-a2a sqlite', values.send, { peakRssMb: values.rss }),
        subject('bernstein-a2a postgres', values.sendPg),
        subject('a2a-sdk SendMessage', values.sendSdk),
        subject('a2a-sdk SendMessage sqlite', values.sendSdkDurable),
        subject('express', values.sendExpress),
      ],
    },
    { name: 'get', title: 'get', subjects: [subject('bernstein-a2a sqlite', values.get), subject('express', values.getExpress)] },
    {
      name: 'replicas',
      title: 'replicas',
      subjects: ['not partitioned', 'partitioned'].flatMap((setting) => [
        subject(replicaLabel(1, setting), values.oneReplica, { system: 'bernstein-a2a pg r1' }),
        subject(replicaLabel(3, setting), values.threeReplicas, { system: 'bernstein-a2a pg r1' }),
      ]),
    },
    { name: 'scale', title: 'scale', subjects: [subject('1e+3 tasks', 1000, { p99: values.p99Small }), subject('1e+6 tasks', 1000, { p99: values.p99Large })] },
  ]
}

/**
 * The lock hold of both settings, `meanMs` over 1000 writes (null: the metric is absent): the partitioned one with
 * `partitions`, the other with one partition and a hold as many times shorter (so the same ceiling).
 */
const holds = (partitions: number, meanMs: number | null): WritePathExtras => ({
  lockHoldMeasured: true,
  lockHold: [
    { setting: 'not partitioned', partitions: 1, mean: meanMs === null ? null : meanMs / partitions },
    { setting: 'partitioned', partitions, mean: meanMs },
  ].map(({ setting, partitions: p, mean }) => ({
    setting,
    partitions: p,
    meanMs: mean,
    samples: mean === null ? 0 : 1000,
    ceiling: mean === null ? null : derivedCeiling({ sum: mean, count: 1000, series: p }, p),
  })),
})

const micro = (card: number, chain: number): MicroResult[] => [
  { name: 'capability-card verification', subjectOps: card * 1000, baselineOps: 1000, ratio: card, iterations: 1, rounds: 1 },
  { name: 'tracker-audit chain verification', subjectOps: chain * 1000, baselineOps: 1000, ratio: chain, iterations: 1, rounds: 1 },
]

const startup = (medianMs: number, referenceMedianMs = 50): Startup => ({
  readyMs: [medianMs],
  medianMs,
  cpuMs: [medianMs],
  medianCpuMs: medianMs,
  referenceMs: [referenceMedianMs],
  referenceMedianMs,
})

/** A report of the given results, with a fixed machine and no cases unless given. */
const reportOf = (result: ReturnType<typeof ratiosAndTargets>, parts: Pick<Report, 'startup'> & Partial<Report>): Report => ({
  generatedAt: '2026-12-01T00:00:00.000Z',
  mode: 'quick',
  machine: { node: 'v20', cpus: 2, cpuModel: 'test', loadAverage: [0, 0, 0] },
  settings: {},
  cases: [],
  micro: [],
  ratios: result.ratios,
  targets: result.targets,
  lockHold: [],
  fanOut: null,
  skipped: [],
  notes: [],
  ...parts,
})

const verdicts = (result: ReturnType<typeof ratiosAndTargets>): (boolean | null)[] => result.targets.map((t) => t.pass)

/** A run that measured every case, judged against the targets. */
function judgeFullRun(
  measured: Parameters<typeof cases>[0] & { card: number; chain: number; readyMs: number; ceiling: number },
): ReturnType<typeof ratiosAndTargets> {
  // 8 partitions, each write holding its partition's lock for 8 / ceiling seconds: a ceiling of exactly `ceiling`.
  const extras = holds(8, (8 / measured.ceiling) * 1000)
  return ratiosAndTargets(cases(measured), micro(measured.card, measured.chain), startup(measured.readyMs), [1e3, 1e6], extras)
}

describe("bench report: ratios and targets (the issue's goals, as PASS/MISS lines)", () => {
  it('passes every target exactly at its boundary', () => {
    const result = judgeFullRun({
      send: 600,
      sendSdk: 1000,
      sendSdkDurable: 300,
      sendExpress: 1500,
      sendPg: 300,
      get: 600,
      getExpress: 1000,
      p99Small: 10,
      p99Large: 13,
      rss: 199.9,
      oneReplica: 100,
      threeReplicas: 100,
      ceiling: 10_000,
      card: 0.8,
      chain: 0.5,
      readyMs: 999,
    })
    expect(result.targets.map((t) => t.name)).toEqual([
      'send ≥ 2.0× the SDK with its durable SQLite store',
      'send ≥ 0.6× the SDK in memory',
      'send ≥ 40 % of bare express',
      'GET ≥ 60 % of bare express',
      'send on PostgreSQL ≥ 0.5× send on SQLite (one replica)',
      '3 replicas ≥ 1 replica in writes/s (the default partitioning)',
      'derived cluster ceiling ≥ 10^4 writes/s (partitions ÷ chain lock hold, the default partitioning)',
      'GET p99 at 1e+6 tasks ≤ 1.3× p99 at 1e+3',
      'capability-card verification ≥ 80 % of raw',
      'tracker-audit chain verification ≥ 50 % of raw',
      'peak RSS of bernstein-a2a under load < 200 MB',
      'ready to serve < 1 s after start (SQLite)',
    ])
    expect(verdicts(result)).toEqual(result.targets.map(() => true))
  })

  it('misses every target just past its boundary', () => {
    const result = judgeFullRun({
      send: 599,
      sendSdk: 1000,
      sendSdkDurable: 300,
      sendExpress: 1500,
      sendPg: 299,
      get: 590,
      getExpress: 1000,
      p99Small: 10,
      p99Large: 13.1,
      rss: 200,
      oneReplica: 100,
      threeReplicas: 99,
      ceiling: 9_999,
      card: 0.79,
      chain: 0.49,
      readyMs: 1000,
    })
    expect(verdicts(result)).toEqual(result.targets.map(() => false))
    expect(result.targets.map((t) => t.measured).slice(0, 5)).toEqual(['2.00×', '0.60×', '40 %', '59 %', '0.50×'])
  })

  it('reports start-up against the bare node:http reference of the same run', () => {
    const result = ratiosAndTargets([], [], startup(500, 80), [])
    expect(result.ratios).toEqual([expect.objectContaining({ name: 'ready ÷ bare node:http ready', value: 6.25 })])
    expect(result.targets.find((t) => t.name.startsWith('ready'))?.measured).toBe('500 ms wall, 500 ms of its own CPU')
    expect(markdown(reportOf(result, { startup: startup(500, 80) }))).toContain(
      'A bare node:http server, started and polled the same way in the same run: median 80 ms (80 ms).',
    )
  })

  it('skips what the run did not measure instead of calling it missed', () => {
    const result = ratiosAndTargets(
      [],
      [],
      { readyMs: [], medianMs: Number.NaN, cpuMs: [], medianCpuMs: Number.NaN, referenceMs: [], referenceMedianMs: Number.NaN },
      [],
    )
    expect(result.ratios).toEqual([])
    expect(verdicts(result)).toEqual(result.targets.map(() => null))
    expect(result.targets.length).toBe(9)
  })

  it('says why the derived ceiling is not judged when the node exports no lock-hold histogram', () => {
    const result = ratiosAndTargets([], [], startup(500), [], holds(8, null))
    const ceilings = result.targets.filter((t) => t.name.startsWith('derived cluster ceiling'))
    expect(ceilings).toHaveLength(1)
    for (const ceiling of ceilings) expect(ceiling).toMatchObject({ pass: null, skipReason: 'n/a: metric bernstein_chain_lock_hold_seconds not present' })
    const text = markdown(
      reportOf(result, { startup: startup(500), lockHold: holds(8, null).lockHold, skipped: ['v1 SendMessage: skipped: conformance agent absent'] }),
    )
    expect(text).toContain(
      'SKIP  derived cluster ceiling ≥ 10^4 writes/s (partitions ÷ chain lock hold, the default partitioning): n/a: metric bernstein_chain_lock_hold_seconds not present (goal ≥ 10000/s)',
    )
    expect(text).toContain('Chain lock hold (partitioned): n/a: metric bernstein_chain_lock_hold_seconds not present.')
    expect(text).toContain('- v1 SendMessage: skipped: conformance agent absent')
  })

  it('judges the ceiling of the default partitioning, partitions ÷ mean hold, and reports one partition beside it', () => {
    // 8 partitions, 1 ms mean hold: 8000 writes/s; one partition held 0.125 ms: the same.
    const result = ratiosAndTargets([], [], startup(500), [], holds(8, 1))
    expect(result.targets.filter((t) => t.name.startsWith('derived cluster ceiling'))).toMatchObject([
      { pass: false, measured: '8000/s (8 partitions, mean hold 1.000 ms)' },
    ])
    const text = markdown(reportOf(result, { startup: startup(500), lockHold: holds(8, 1).lockHold, skipped: [] }))
    expect(text).toContain('Chain lock hold (not partitioned, 1 partition): mean 0.125 ms over 1000 writes on all replicas; derived ceiling 8000 writes/s')
  })
})

describe('bench report: ratios pair the interleaved rounds', () => {
  const round = (rps: number, p99 = 10) => ({
    rps,
    p50: 1,
    p99,
    total: rps * 10,
    durationS: 10,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    cpuUsPerOp: 1_000_000 / rps,
  })
  const withRounds = (label: string, values: readonly number[]): SubjectSummary => {
    const rounds = values.map((v) => round(v))
    const sorted = [...values].sort((a, b) => a - b)
    return subject(label, sorted[Math.floor(sorted.length / 2)] as number, {
      rounds,
      cpuUsPerOp: 1_000_000 / (sorted[Math.floor(sorted.length / 2)] as number),
    })
  }

  it('takes the median of per-round ratios, not the ratio of the medians', () => {
    // The machine runs at 100 %, 60 % and 80 % of its speed in the three rounds, which both systems share, plus
    // a little noise of their own: each round's ratio stays near the true 0.25 (0.25, 0.28, 0.21), while the ratio of
    // the two medians (300 ÷ 1400) pairs the third round of one with the third of the other and says 0.21.
    const ours = withRounds('bernstein-a2a sqlite', [400, 250, 300])
    const theirs = withRounds('express', [1600, 900, 1400])
    expect(pairedRatio(ours, theirs, 'rps')).toBeCloseTo(0.25, 10)
    expect(ours.rps / theirs.rps).toBeCloseTo(300 / 1400, 10)
    const result = ratiosAndTargets([{ name: 'send', title: 'send', subjects: [ours, theirs] }], [], startup(500), [])
    expect(result.ratios.find((r) => r.name === 'send ÷ bare express')?.value).toBeCloseTo(0.25, 10)
    expect(result.targets.find((t) => t.name === 'send ≥ 40 % of bare express')?.measured).toBe('25 %')
    // By CPU time, express ÷ ours, paired the same way: (1e6/1600) ÷ (1e6/400) = 0.25 in the first round, the median.
    expect(result.ratios.find((r) => r.name === 'send, server CPU per request: express ÷ bernstein-a2a')?.value).toBeCloseTo(0.25, 10)
  })

  it('falls back to the ratio of the medians when the rounds do not pair up', () => {
    const ours = withRounds('bernstein-a2a sqlite', [400, 300])
    const theirs = withRounds('express', [1600, 1200, 800])
    expect(pairedRatio(ours, theirs, 'rps')).toBeCloseTo(ours.rps / theirs.rps, 10)
    expect(pairedRatio(subject('a', 100), subject('b', 400), 'rps')).toBe(0.25)
  })

  it('pairs the p99 rounds of the store sizes', () => {
    const small = subject('1e+3 tasks', 1000, { p99: 10, rounds: [round(1000, 10), round(1000, 20), round(1000, 10)] })
    const large = subject('1e+6 tasks', 1000, { p99: 11, rounds: [round(1000, 11), round(1000, 22), round(1000, 30)] })
    const result = ratiosAndTargets([{ name: 'scale', title: 'scale', subjects: [small, large] }], [], startup(500), [1e3, 1e6])
    // Per round 1.1, 1.1, 3.0: median 1.1 (the medians alone, 22 ÷ 10, would say 2.2).
    expect(result.ratios.find((r) => r.name.startsWith('GET p99'))?.value).toBeCloseTo(1.1, 10)
    expect(result.targets.find((t) => t.name.startsWith('GET p99'))?.pass).toBe(true)
  })
})

describe('bench report: micro-benchmarks are judged by their paired ratio', () => {
  it("uses the median of the rounds' ratios, not the ratio of the medians", () => {
    // Medians 7227 and 5610 (the raw side hit by a slow spell) would say 129 %; each round's own ratio said 85 %.
    const card: MicroResult = { name: 'capability-card verification', subjectOps: 7227, baselineOps: 5610, ratio: 0.85, iterations: 10_000, rounds: 7 }
    const chain: MicroResult = {
      name: 'tracker-audit chain verification',
      subjectOps: 40_000,
      baselineOps: 100_000,
      ratio: 0.49,
      iterations: 100_000,
      rounds: 3,
    }
    const result = ratiosAndTargets([], [card, chain], startup(500), [])
    expect(result.ratios.find((r) => r.name === 'capability-card verification ÷ raw')?.value).toBe(0.85)
    expect(result.targets.find((t) => t.name.startsWith('capability-card'))).toMatchObject({ pass: true, measured: '85 %' })
    expect(result.targets.find((t) => t.name.startsWith('tracker-audit'))).toMatchObject({ pass: false, measured: '49 %' })
    expect(markdown(reportOf(result, { startup: startup(500), micro: [card, chain] }))).toContain(
      '| capability-card verification (10000 × 7 rounds) | 7227 | 5610 | 85 % |',
    )
  })
})

describe('bench stats: medianOfRatios', () => {
  it('divides within each pair, then takes the median', () => {
    // Raw rounds 5610 (slow spell), 8000, 8100 against 7227, 6800, 6900: per round 1.29, 0.85, 0.85.
    expect(medianOfRatios([7227, 6800, 6900], [5610, 8000, 8100])).toBeCloseTo(0.85, 2)
    expect(medianOfRatios([2, 9], [1, 3])).toBe(2.5)
  })

  it('is NaN when the lists do not pair up', () => {
    expect(medianOfRatios([], [])).toBeNaN()
    expect(medianOfRatios([1, 2], [1])).toBeNaN()
  })
})
