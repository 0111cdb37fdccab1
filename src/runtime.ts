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
   * 12 lowercase hex characters that name a task or an A2A task, and so choose the chain partition its entries go to:
   * the server draws these in its home shards (HomeShards in src/lineage/partitions.ts).
   */
  ticketId(): string
}

/** Literally uuid4().hex[:12]: the first 12 hex digits of a version 4 UUID, all random (the version digit is the 13th). */
function randomShortId(): string {
  // Node's randomUUID draws from a buffered entropy pool: 0.3 µs against 2 µs for randomBytes(6).
  const uuid = randomUUID()
  return uuid.slice(0, 8) + uuid.slice(9, 13)
}

const TICKET_SPACE = 2 ** 48

/**
 * Ticket ids as ascending runs: the first at a uniformly random 48-bit point, each next one a random step of 1 to
 * 2^16 above the last, a fresh random start when a run would leave the 48 bits.
 *
 * Why: a send inserts its ticket into five indexes (the two tasks' keys, the A2A task's link, the two chains' ticket
 * indexes). Uniformly random ids put each insert on its own leaf page, so a group commit of ten sends wrote about
 * fifty pages to the WAL, and once the indexes outgrew the page cache every insert read its leaf from the file first.
 * Ascending ids put a group's inserts on the same few rightmost leaves (docs/performance.md, "Ticket ids in runs").
 *
 * What it costs: a run never repeats itself, and runs from other processes or restarts meet it as seldom as uniformly
 * random ids would (the expected number of equal pairs is the same, n·m ÷ 2^48). Two tickets of one run tell roughly
 * how many tickets this process drew between them (the gap ÷ 2^15), as `created_at` tells when: ticket ids are names,
 * not secrets, and every read of a task is scoped to its tenant.
 */
export function ticketRuns(start: () => number = () => Number.parseInt(randomShortId(), 16)): () => string {
  let last = start()
  return () => {
    // A step of 1 to 2^16 (16 random bits of a version 4 UUID): 2^33 tickets, on average, before a run leaves the space.
    const next = last + 1 + Number.parseInt(randomUUID().slice(0, 4), 16)
    last = next < TICKET_SPACE ? next : start()
    return last.toString(16).padStart(12, '0')
  }
}

/** The process's identifiers: random short ids, and ticket ids from one run per process (two nodes in one process never draw the same ticket). */
export const systemIds: Ids = {
  shortId: randomShortId,
  ticketId: ticketRuns(),
}
