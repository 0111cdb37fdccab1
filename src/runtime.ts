import { randomBytes } from 'node:crypto'

/** Time, injected so that tests and golden vectors can fix it. */
export interface Clock {
  /** Unix time in seconds, with fractions (Bernstein's float timestamps). */
  now(): number
  /** Unix time in nanoseconds (spine rows and tracker entries use integer ns). */
  nowNs(): bigint
}

export const systemClock: Clock = {
  now: () => Date.now() / 1000,
  // hrtime gives ns resolution relative to an arbitrary origin; anchor it to the wall clock once.
  nowNs: (() => {
    const originNs = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint()
    return () => originNs + process.hrtime.bigint()
  })(),
}

/** Identifier source, injected for the same reason. */
export interface Ids {
  /** 12 lowercase hex characters, as Bernstein's `uuid4().hex[:12]`. */
  shortId(): string
  /** 32 lowercase hex characters (tracker-audit entry ids). */
  longId(): string
}

export const randomIds: Ids = {
  shortId: () => randomBytes(6).toString('hex'),
  longId: () => randomBytes(16).toString('hex'),
}
