/**
 * One load run with autocannon: the same connections and duration (or request count) for every system, bounded
 * in time by a safety stop, with errors and non-2xx answers counted so that a broken run cannot pass as a fast one.
 */
import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon'

export interface LoadSpec {
  readonly url: string
  readonly connections: number
  /** Seconds; ignored when `amount` is set. */
  readonly duration: number
  /** Total requests instead of a duration. */
  readonly amount?: number
  readonly headers?: Readonly<Record<string, string>>
  readonly requests: readonly AutocannonRequest[]
  /** Hard stop in seconds, whatever happens (default: duration + 30, or 120 with `amount`). */
  readonly maxSeconds?: number
}

export interface LoadResult {
  /** Completed requests per second over the run. */
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly total: number
  readonly durationS: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  // autocannon checks for the end of a run once a second, so its own duration (and, with `amount`, the run itself)
  // is rounded up to a whole second; time the span from the start to the last answer instead.
  const startedAt = performance.now()
  let lastAnswerAt = startedAt
  const result: AutocannonResult = await new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: spec.duration,
        ...(spec.amount !== undefined && { amount: spec.amount }),
        timeout: 10,
        headers: { ...spec.headers },
        requests: spec.requests.map((r) => ({
          ...r,
          onResponse: (status, body, context, headers) => {
            lastAnswerAt = performance.now()
            r.onResponse?.(status, body, context, headers)
          },
        })),
      },
      (error, res) => {
        clearTimeout(guard)
        if (error) reject(error)
        else resolve(res)
      },
    )
    const limit = spec.maxSeconds ?? (spec.amount !== undefined ? 120 : spec.duration + 30)
    const guard = setTimeout(() => instance.stop(), limit * 1000)
  })
  const total = result.requests.total
  const elapsed = (lastAnswerAt - startedAt) / 1000
  const durationS = elapsed > 0 ? elapsed : result.duration
  return {
    rps: durationS > 0 ? total / durationS : 0,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total,
    durationS,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }
}

/**
 * Throws when a run had failures: figures of a system that answered errors say nothing about its speed. A run with
 * no answer at all fails too, unless `allowEmpty` (a warm-up, which on a loaded machine may end before the first
 * answer of a slow system comes back).
 */
export function assertClean(name: string, result: LoadResult, allowEmpty = false): void {
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || (result.total === 0 && !allowEmpty)) {
    throw new Error(`${name}: ${result.total} requests, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`)
  }
}
