import { describe, expect, it } from 'vitest'
import type { CaseSummary, SubjectSummary } from '../../../scripts/bench/cases.js'
import type { MicroResult } from '../../../scripts/bench/micro.js'
import { type Report, type Startup, markdown, ratiosAndTargets } from '../../../scripts/bench/report.js'

function subject(label: string, rps: number, extra: Partial<SubjectSummary> = {}): SubjectSummary {
  const system = label.startsWith('1e+') ? 'bernstein-a2a sqlite' : label
  return { label, system, rps, p50: 1, p99: 10, peakRssMb: 150, readyMs: 100, cpuUsPerOp: 1_000_000 / rps, rounds: [], ...extra }
}

function cases(values: { send: number; sendSdk: number; sendExpress: number; get: number; getExpress: number; p99Small: number; p99Large: number; rss: number }): CaseSummary[] {
  return [
    { name: 'send', title: 'send', subjects: [subject('bernstein-a2a sqlite', values.send, { peakRssMb: values.rss }), subject('a2a-sdk SendMessage', values.sendSdk), subject('express', values.sendExpress)] },
    { name: 'get', title: 'get', subjects: [subject('bernstein-a2a sqlite', values.get), subject('express', values.getExpress)] },
    { name: 'scale', title: 'scale', subjects: [subject('1e+3 tasks', 1000, { p99: values.p99Small }), subject('1e+6 tasks', 1000, { p99: values.p99Large })] },
  ]
}

const micro = (card: number, chain: number): MicroResult[] => [
  { name: 'capability-card verification', subjectOps: card * 1000, baselineOps: 1000, iterations: 1, rounds: 1 },
  { name: 'tracker-audit chain verification', subjectOps: chain * 1000, baselineOps: 1000, iterations: 1, rounds: 1 },
]

const startup = (medianMs: number, referenceMedianMs = 50): Startup => ({ readyMs: [medianMs], medianMs, cpuMs: [medianMs], medianCpuMs: medianMs, referenceMs: [referenceMedianMs], referenceMedianMs })

const verdicts = (result: ReturnType<typeof ratiosAndTargets>): (boolean | null)[] => result.targets.map((t) => t.pass)

/** A run that measured every case, judged against the targets. */
function judgeFullRun(measured: Parameters<typeof cases>[0] & { card: number; chain: number; readyMs: number }): ReturnType<typeof ratiosAndTargets> {
  return ratiosAndTargets(cases(measured), micro(measured.card, measured.chain), startup(measured.readyMs), [1e3, 1e6])
}

describe('bench report: ratios and targets (the issue\'s goals, as PASS/MISS lines)', () => {
  it('passes every target exactly at its boundary', () => {
    const result = judgeFullRun({ send: 1000, sendSdk: 1000, sendExpress: 2500, get: 600, getExpress: 1000, p99Small: 10, p99Large: 13, rss: 199.9, card: 0.8, chain: 0.5, readyMs: 999 })
    expect(result.targets.map((t) => t.name)).toEqual([
      'send ≥ 1.0× the SDK SendMessage',
      'send ≥ 40 % of bare express',
      'GET ≥ 60 % of bare express',
      'GET p99 at 1e+6 tasks ≤ 1.3× p99 at 1e+3',
      'capability-card verification ≥ 80 % of raw',
      'tracker-audit chain verification ≥ 50 % of raw',
      'peak RSS of bernstein-a2a under load < 200 MB',
      'ready to serve < 1 s after start (SQLite)',
    ])
    expect(verdicts(result)).toEqual([true, true, true, true, true, true, true, true])
  })

  it('misses every target just past its boundary', () => {
    const result = judgeFullRun({ send: 990, sendSdk: 1000, sendExpress: 2500, get: 590, getExpress: 1000, p99Small: 10, p99Large: 13.1, rss: 200, card: 0.79, chain: 0.49, readyMs: 1000 })
    expect(verdicts(result)).toEqual([false, false, false, false, false, false, false, false])
    expect(result.targets[1]?.measured).toBe('40 %')
  })

  it('reports start-up against the bare node:http reference of the same run', () => {
    const result = ratiosAndTargets([], [], startup(500, 80), [])
    expect(result.ratios).toEqual([expect.objectContaining({ name: 'ready ÷ bare node:http ready', value: 6.25 })])
    expect(result.targets.find((t) => t.name.startsWith('ready'))?.measured).toBe('500 ms wall, 500 ms of its own CPU')
    const report: Report = {
      generatedAt: '2026-11-30T00:00:00.000Z',
      mode: 'quick',
      machine: { node: 'v20', cpus: 2, cpuModel: 'test', loadAverage: [0, 0, 0] },
      settings: {},
      cases: [],
      micro: [],
      startup: startup(500, 80),
      ratios: result.ratios,
      targets: result.targets,
      notes: [],
    }
    expect(markdown(report)).toContain('A bare node:http server, started and polled the same way in the same run: median 80 ms (80 ms).')
  })

  it('skips what the run did not measure instead of calling it missed', () => {
    const result = ratiosAndTargets([], [], { readyMs: [], medianMs: Number.NaN, cpuMs: [], medianCpuMs: Number.NaN, referenceMs: [], referenceMedianMs: Number.NaN }, [])
    expect(result.ratios).toEqual([])
    expect(verdicts(result)).toEqual([null, null, null, null, null])
  })
})
