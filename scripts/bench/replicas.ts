/**
 * Sends on replicas of this node sharing one PostgreSQL (issue 27): 1 replica and 3 replicas, each setting of the
 * partitioning on its own database, all interleaved round by round. The partition setting is a parameter passed to
 * the nodes' environment (`--partition-env`, by default BERNSTEIN_CHAIN_SHARDS); when the node's configuration does
 * not read that variable, both settings run the same code and the report says so.
 * After the runs, each replica's `/metrics` is read for the chain lock-hold histogram, from which the cluster's
 * ceiling is derived: partitions ÷ mean hold time.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subject } from './cases.js'
import type { RunningProcess } from './proc.js'
import { AUTH_HEADERS, ROOT } from './systems.js'

/** The histogram of how long a write holds its chain partition's lock, if the node exports it. */
export const LOCK_HOLD_METRIC = 'bernstein_chain_lock_hold_seconds'

export interface PartitionSetting {
  /** 'not partitioned' or 'partitioned'. */
  readonly label: string
  /** Partitions asked for (1 for not partitioned). */
  readonly partitions: number
  readonly env: Readonly<Record<string, string>>
}

export function partitionSettings(envName: string, partitions: number): PartitionSetting[] {
  return [
    { label: 'not partitioned', partitions: 1, env: { [envName]: '1' } },
    { label: 'partitioned', partitions, env: { [envName]: String(partitions) } },
  ]
}

/** Whether the node's configuration (src/config.ts, its only reader of the environment) reads `envName`. */
export function nodeReads(envName: string, configFile = join(ROOT, 'src', 'config.ts')): boolean {
  try {
    return readFileSync(configFile, 'utf8').includes(`'${envName}'`)
  } catch {
    return false
  }
}

/** One histogram of a Prometheus text exposition, summed over its label sets: sum and count, and the label sets seen. */
export interface Histogram {
  readonly sum: number
  readonly count: number
  /** Distinct label sets of its `_count` series (one per partition when the histogram is labelled by partition). */
  readonly series: number
}

/** Reads `name` (a histogram) from a Prometheus text exposition; null when it is not there. */
export function parseHistogram(text: string, name: string): Histogram | null {
  let sum = 0
  let count = 0
  let series = 0
  let found = false
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line)
    if (!match) continue
    const value = Number(match[3])
    if (match[1] === `${name}_sum`) {
      sum += value
      found = true
    } else if (match[1] === `${name}_count`) {
      count += value
      series++
      found = true
    }
  }
  return found ? { sum, count, series } : null
}

/** Adds up the histograms of several replicas (null when none has it). */
export function addHistograms(histograms: readonly (Histogram | null)[]): Histogram | null {
  const present = histograms.filter((h): h is Histogram => h !== null)
  if (present.length === 0) return null
  return {
    sum: present.reduce((a, h) => a + h.sum, 0),
    count: present.reduce((a, h) => a + h.count, 0),
    series: Math.max(...present.map((h) => h.series)),
  }
}

/** The cluster's write ceiling implied by the lock hold: partitions ÷ mean hold (writes/s); NaN without samples. */
export function derivedCeiling(hold: Histogram, partitions: number): number {
  if (hold.count === 0 || hold.sum <= 0) return Number.NaN
  return partitions / (hold.sum / hold.count)
}

/** Reads a replica's `/metrics` with the operator token; the empty text when it cannot be read. */
export async function scrapeMetrics(proc: RunningProcess): Promise<string> {
  try {
    const response = await fetch(`${proc.url}/metrics`, { headers: { ...AUTH_HEADERS }, signal: AbortSignal.timeout(10_000) })
    return response.status === 200 ? await response.text() : ''
  } catch {
    return ''
  }
}

/** What the report shows of the lock hold of one partition setting. */
export interface LockHold {
  readonly setting: string
  readonly partitions: number
  /** Mean hold in ms, or null when the metric is not present. */
  readonly meanMs: number | null
  readonly samples: number
  /** Derived ceiling in writes/s, or null when the metric is not present. */
  readonly ceiling: number | null
}

export async function lockHold(setting: PartitionSetting, replicas: readonly RunningProcess[]): Promise<LockHold> {
  const hold = addHistograms((await Promise.all(replicas.map(scrapeMetrics))).map((text) => parseHistogram(text, LOCK_HOLD_METRIC)))
  if (hold === null) return { setting: setting.label, partitions: setting.partitions, meanMs: null, samples: 0, ceiling: null }
  const ceiling = derivedCeiling(hold, setting.partitions)
  return {
    setting: setting.label,
    partitions: setting.partitions,
    meanMs: hold.count > 0 ? (hold.sum / hold.count) * 1000 : null,
    samples: hold.count,
    ceiling: Number.isFinite(ceiling) ? ceiling : null,
  }
}

/** The labels of the replica case's subjects, which the report pairs. */
export const replicaLabel = (replicas: number, setting: string): string => `postgres ${replicas} replica${replicas > 1 ? 's' : ''}, ${setting}`

/** The two subjects of one partition setting: the first replica alone, then the three together. */
export function replicaSubjects(setting: PartitionSetting, replicas: readonly RunningProcess[], requests: Subject['requests']): Subject[] {
  const [first] = replicas
  if (first === undefined) throw new Error('no replica')
  return [
    { label: replicaLabel(1, setting.label), proc: first, requests },
    { label: replicaLabel(replicas.length, setting.label), proc: first, replicas, requests },
  ]
}
