import type { Clock } from '../../src/runtime.js'

/**
 * A clock that stands still until the test moves it: every reading between two `advance` calls is the same
 * instant, so tests order writes by moving time explicitly (never by sleeping for a new millisecond) and can give
 * several writes one timestamp on purpose. Unlike `manualClock` (test/security/support.ts), reading it does not
 * move it.
 */
export interface SteppedClock extends Clock {
  /** Moves time forward by `seconds` (rounded to the microsecond, so sums of steps stay exact). */
  advance(seconds: number): void
}

export function steppedClock(start = 1_800_000_000.5): SteppedClock {
  let micros = Math.round(start * 1e6)
  return {
    now: () => micros / 1e6,
    nowNs: () => BigInt(micros) * 1_000n,
    advance: (seconds) => {
      if (!(seconds > 0)) throw new RangeError(`a clock only moves forward, got ${seconds}`)
      micros += Math.round(seconds * 1e6)
    },
  }
}
