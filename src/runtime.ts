import { randomUUID } from 'node:crypto'

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
  /**
   * A shortId that names a task or an A2A task, and so chooses the chain partition its entries go to: the server
   * draws these in its home shards (HomeShards in src/lineage/partitions.ts); elsewhere the same as shortId.
   */
  ticketId(): string
}

export const randomIds: Ids = {
  // Literally uuid4().hex[:12]: the first 12 hex digits of a version 4 UUID, all random (the version digit is the
  // 13th). Node's randomUUID draws from a buffered entropy pool: 0.3 µs against 2 µs for randomBytes(6).
  shortId: () => {
    const uuid = randomUUID()
    return uuid.slice(0, 8) + uuid.slice(9, 13)
  },
  ticketId: () => randomIds.shortId(),
}
