import type { Clock } from '../../src/runtime.js'

/** A clock that only the test moves: by `advance`, and optionally by a fixed step on every reading. */
export interface TestClock extends Clock {
  /** Moves time forward by `seconds` (rounded to the microsecond, so sums of steps stay exact). */
  advance(seconds: number): void
}

export interface TestClockOptions {
  /** The first instant, in seconds since the epoch. */
  readonly start?: number
  /**
   * How far each reading moves the clock before it is read, in seconds (default 0). 0: every reading between two
   * `advance` calls is the same instant, so tests order writes by moving time explicitly (never by sleeping for a
   * new millisecond) and can give several writes one timestamp on purpose. A step (say 0.001): every write gets its
   * own instant without the test having to think about it.
   */
  readonly stepPerReading?: number
}

/** Time is kept as whole microseconds, so that readings, steps and advances add up exactly. */
export function testClock(options: TestClockOptions = {}): TestClock {
  let micros = Math.round((options.start ?? 1_800_000_000.5) * 1e6)
  const step = Math.round((options.stepPerReading ?? 0) * 1e6)
  if (step < 0) throw new RangeError(`a clock only moves forward, got a step of ${options.stepPerReading}`)
  const read = (): number => (micros += step)
  return {
    now: () => read() / 1e6,
    nowNs: () => BigInt(read()) * 1_000n,
    advance: (seconds) => {
      if (!(seconds > 0)) throw new RangeError(`a clock only moves forward, got ${seconds}`)
      micros += Math.round(seconds * 1e6)
    },
  }
}
