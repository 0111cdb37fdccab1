/**
 * The replica case's reading of the node's /metrics: the chain lock-hold histogram summed over its label sets and
 * over the replicas, and the ceiling it implies.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Subject, combine, split, warmups } from '../../../scripts/bench/cases.js'
import type { RunningProcess } from '../../../scripts/bench/proc.js'
import { addHistograms, derivedCeiling, lockHold, nodeReads, parseHistogram, partitionSettings, scrapeMetrics } from '../../../scripts/bench/replicas.js'
import { bernsteinCommand, cleanupDirs, startBernstein, tempDir } from '../../../scripts/bench/systems.js'

const EXPOSITION = `# HELP bernstein_chain_lock_hold_seconds How long a write holds its chain partition's lock
# TYPE bernstein_chain_lock_hold_seconds histogram
bernstein_chain_lock_hold_seconds_bucket{partition="a",le="0.001"} 90
bernstein_chain_lock_hold_seconds_bucket{partition="a",le="+Inf"} 100
bernstein_chain_lock_hold_seconds_sum{partition="a"} 0.05
bernstein_chain_lock_hold_seconds_count{partition="a"} 100
bernstein_chain_lock_hold_seconds_sum{partition="b"} 0.15
bernstein_chain_lock_hold_seconds_count{partition="b"} 100
bernstein_chain_lock_hold_seconds_other 7
bernstein_http_requests_total{route="x"} 3
`

describe('bench replicas: the lock-hold histogram', () => {
  it('sums a histogram over its label sets', () => {
    expect(parseHistogram(EXPOSITION, 'bernstein_chain_lock_hold_seconds')).toEqual({ sum: 0.2, count: 200, series: 2 })
  })

  it('is null when the node does not export it', () => {
    expect(parseHistogram('bernstein_http_requests_total 3\n', 'bernstein_chain_lock_hold_seconds')).toBeNull()
    expect(parseHistogram('', 'bernstein_chain_lock_hold_seconds')).toBeNull()
  })

  it('adds the replicas up and derives partitions ÷ mean hold', () => {
    const one = parseHistogram(EXPOSITION, 'bernstein_chain_lock_hold_seconds')
    const all = addHistograms([one, null, one])
    expect(all).toEqual({ sum: 0.4, count: 400, series: 2 })
    // Mean hold 1 ms: one partition allows 1000 writes/s, eight 8000.
    expect(derivedCeiling({ sum: 0.4, count: 400, series: 2 }, 8)).toBeCloseTo(8000, 6)
    expect(derivedCeiling({ sum: 0, count: 0, series: 0 }, 8)).toBeNaN()
    expect(addHistograms([null, null])).toBeNull()
  })
})

describe('bench replicas: partition settings and load spreading', () => {
  it('passes the partition count in the variable it is given', () => {
    expect(partitionSettings('BERNSTEIN_CHAIN_SHARDS', 8)).toEqual([
      { label: 'not partitioned', partitions: 1, env: { BERNSTEIN_CHAIN_SHARDS: '1' } },
      { label: 'partitioned', partitions: 8, env: { BERNSTEIN_CHAIN_SHARDS: '8' } },
    ])
  })

  it("tells whether the node's configuration reads the variable", () => {
    const file = join(mkdtempSync(join(tmpdir(), 'bench-config-')), 'config.ts')
    writeFileSync(file, "const shards = env['BERNSTEIN_CHAIN_SHARDS']\n")
    expect(nodeReads('BERNSTEIN_CHAIN_SHARDS', file)).toBe(true)
    expect(nodeReads('BERNSTEIN_CHAIN_SHARD', file)).toBe(false)
    expect(nodeReads('BERNSTEIN_CHAIN_SHARDS', join(file, 'missing'))).toBe(false)
  })

  it('splits the connections between replicas and adds their figures up', () => {
    expect(split(10, 3)).toEqual([4, 3, 3])
    expect(split(10, 1)).toEqual([10])
    const run = (rps: number, p99: number) => ({ rps, p50: 1, p99, total: rps * 2, durationS: 2, non2xx: 0, errors: 0, timeouts: 0 })
    expect(combine([run(100, 10), run(50, 30), run(60, 20)])).toEqual({
      rps: 210,
      p50: 1,
      p99: 30,
      total: 420,
      durationS: 2,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
    })
  })

  it('warms every process of every subject on its own, with all the connections', () => {
    const proc = (name: string): RunningProcess => ({
      name,
      pid: 0,
      url: `http://${name}`,
      readyMs: 0,
      readyCpuMs: 0,
      peakRssMb: () => 0,
      rssMb: () => 0,
      cpuMs: () => 0,
      stop: async () => {},
    })
    const [a, b, c] = [proc('a'), proc('b'), proc('c')]
    const requests = () => []
    const one: Subject = { label: '1 replica', proc: a, requests }
    const three: Subject = { label: '3 replicas', proc: a, replicas: [a, b, c], requests }
    const runs = warmups([one, three])
    // One run per subject and process: the single node, then each of the three replicas alone (split(connections, 1)).
    expect(runs.map((r) => [r.label, r.proc.name, r.replicas?.map((p) => p.name)])).toEqual([
      ['1 replica', 'a', ['a']],
      ['3 replicas', 'a', ['a']],
      ['3 replicas', 'b', ['b']],
      ['3 replicas', 'c', ['c']],
    ])
  })
})

describe('bench replicas: reading a real node', () => {
  it("reads the node's /metrics with the bench's operator token, and says when the lock-hold histogram is absent", async () => {
    const node = await startBernstein({ name: 'bernstein-a2a sqlite', command: bernsteinCommand(false), dataDir: tempDir('metrics') })
    try {
      await fetch(`${node.url}/health/ready`)
      const text = await scrapeMetrics(node)
      // A histogram every node exports: the scrape is authorised and parsed.
      expect(parseHistogram(text, 'bernstein_http_request_duration_seconds')?.count).toBeGreaterThan(0)
      const partitioned = { label: 'partitioned', partitions: 8, env: { BERNSTEIN_CHAIN_SHARDS: '8' } }
      const hold = await lockHold(partitioned, [node])
      if (parseHistogram(text, 'bernstein_chain_lock_hold_seconds') === null) expect(hold).toMatchObject({ meanMs: null, ceiling: null, partitions: 8 })
      else expect(hold.partitions).toBe(8)
    } finally {
      await node.stop()
      cleanupDirs()
    }
  }, 60_000)
})
