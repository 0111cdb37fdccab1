import { AppError } from '../errors.js'
import { type LineageEnvelope, wrapLineageChain } from './envelope.js'
import {
  GENESIS_PREV_HASH,
  type TrackerAuditEntry,
  type TrackerAuditFailure,
  type TrackerAuditVerifyResult,
  TrackerAuditVerifier,
  type TrackerLineFailure,
} from './tracker-audit.js'
import type { ChainLine } from '../store/chain.repository.js'
import type { Store } from '../store/store.js'
import { type Result, fail, ok } from '../result.js'
import { decodeUtf8Strict } from '../text/utf8.js'
import { TRACKER_AUDIT_CHAIN, parseStoredTrackerLine } from './audit-trail.js'
import { comparePartitions } from './partitions.js'

export interface ChainPage {
  readonly lines: readonly ChainLine[]
  readonly nextCursor: string | null
}

/** A page of tracker-audit partitions, each with its head. */
export interface PartitionPage {
  readonly partitions: ReadonlyArray<{ readonly chain: string; readonly length: number; readonly headHash: string }>
  readonly nextCursor: string | null
}

/** Outcome of {@link LineageService.importJsonl}: how many entries were appended, or the verifier's failure. */
export type ImportResult = Result<{ readonly imported: number }, TrackerAuditFailure>

/** Thrown inside the import's transaction to roll it back; carries the verifier's failure. */
class ImportRefused extends Error {
  readonly failure: TrackerLineFailure

  constructor(failure: TrackerLineFailure) {
    super(failure.detail)
    this.failure = failure
  }
}

/** The node's tracker-audit chain: pages, entries, envelopes, verification, export and import. */
export class LineageService {
  readonly #store: Store
  readonly #key: Uint8Array | null
  readonly #issuer: string

  /** `key` is the operator HMAC key; null for a reader that neither verifies nor imports (it needs no key file). */
  constructor(store: Store, key: Uint8Array | null, issuer: string) {
    this.#store = store
    this.#key = key
    this.#issuer = issuer
  }

  get issuer(): string {
    return this.#issuer
  }

  /**
   * One page of a partition (the legacy one unless `partition` names another), or of a ticket's entries: in
   * `partition` when given, else in the first partition that holds any.
   */
  async page(input: { ticketId?: string; partition?: string; limit: number; cursor?: string }): Promise<ChainPage> {
    let after = 0
    if (input.cursor !== undefined) {
      if (!/^\d{1,12}$/.test(input.cursor)) {
        throw new AppError('validation_failed', 'invalid cursor', {
          issues: [{ loc: ['query', 'cursor'], msg: 'Invalid pagination cursor', type: 'value_error' }],
        })
      }
      after = Number(input.cursor)
    }
    const rows =
      input.ticketId !== undefined && input.partition === undefined
        ? await this.#firstPartitionOf(input.ticketId, after, input.limit + 1)
        : await this.#store.repos.chains.list({
            chain: input.partition ?? TRACKER_AUDIT_CHAIN,
            afterPosition: after,
            limit: input.limit + 1,
            ...(input.ticketId !== undefined && { ticketId: input.ticketId }),
          })
    const lines = rows.slice(0, input.limit)
    const last = lines[lines.length - 1]
    return { lines, nextCursor: rows.length > input.limit && last ? String(last.position) : null }
  }

  /** The tracker-audit partitions (docs/scaling.md), the legacy one first, each with its head. */
  async partitions(): Promise<Array<{ readonly chain: string; readonly length: number; readonly headHash: string }>> {
    const heads = await this.#store.repos.chains.heads(TRACKER_AUDIT_CHAIN)
    return heads.sort((a, b) => comparePartitions(TRACKER_AUDIT_CHAIN)(a.chain, b.chain))
  }

  /** One page of the partitions by name (the legacy one first: it is every other one's prefix), after `cursor`. */
  async partitionPage(input: { limit: number; cursor?: string }): Promise<PartitionPage> {
    const heads = await this.#store.repos.chains.heads(TRACKER_AUDIT_CHAIN, {
      limit: input.limit + 1,
      ...(input.cursor !== undefined && { after: input.cursor }),
    })
    const partitions = heads.slice(0, input.limit)
    const last = partitions[partitions.length - 1]
    return { partitions, nextCursor: heads.length > input.limit && last ? last.chain : null }
  }

  /**
   * A ticket's entries after `after` in the first partition (legacy first) that holds any, at most `limit`: a ticket
   * spans two partitions only when the shard count changed during its life; its envelope (`entries`) carries all.
   */
  async #firstPartitionOf(ticketId: string, after: number, limit: number): Promise<ChainLine[]> {
    const lines = await this.#ticketLines(ticketId)
    const first = lines[0]?.chain
    return lines.filter((l) => l.chain === first && l.position > after).slice(0, limit)
  }

  /** Every entry of a ticket, in the partitions' own order (stable: each partition's in chain order), whatever the collation. */
  async #ticketLines(ticketId: string): Promise<Array<{ readonly chain: string } & ChainLine>> {
    const byPartition = comparePartitions(TRACKER_AUDIT_CHAIN)
    return (await this.#store.repos.chains.ticketLines(TRACKER_AUDIT_CHAIN, ticketId)).sort((a, b) => byPartition(a.chain, b.chain))
  }

  /** The stored entries of one ticket (or all), partition by partition (legacy first), each in chain order. */
  async entries(ticketId?: string): Promise<TrackerAuditEntry[]> {
    if (ticketId !== undefined) return (await this.#ticketLines(ticketId)).map((l) => parseStoredTrackerLine(l.line))
    const entries: TrackerAuditEntry[] = []
    for (const { chain } of await this.partitions()) {
      const lines = await this.#store.repos.chains.list({ chain })
      for (const l of lines) entries.push(parseStoredTrackerLine(l.line))
    }
    return entries
  }

  /** The `bernstein.lineage_v2` envelope of one ticket's entries (or all), issued as this node. */
  async envelope(ticketId?: string): Promise<LineageEnvelope> {
    return wrapLineageChain(await this.entries(ticketId), { sourceIssuer: this.#issuer, ...(ticketId !== undefined && { ticketId }) })
  }

  /**
   * Walks every partition in pages under the operator key, each as a chain of its own; stops at the first failure
   * with Bernstein's text (prefixed with the partition's name for all but the legacy one). `entries` counts all.
   */
  async verify(): Promise<TrackerAuditVerifyResult> {
    const key = this.#requireKey()
    let entries = 0
    for (const { chain } of await this.partitions()) {
      const verifier = new TrackerAuditVerifier(key)
      for await (const line of this.#store.repos.chains.stream(chain)) {
        if (verifier.push(line.line) !== null) break
      }
      const result = verifier.result()
      if (!result.ok) {
        const detail = chain === TRACKER_AUDIT_CHAIN ? result.detail : `partition ${chain}: ${result.detail}`
        return fail(result.code, detail, { entries: entries + result.entries })
      }
      entries += result.value.entries
    }
    return ok({ entries })
  }

  /** One partition (the legacy one by default) as Bernstein's JSONL file: every line followed by `\n`. */
  async *exportJsonl(partition: string = TRACKER_AUDIT_CHAIN): AsyncGenerator<string> {
    for await (const line of this.#store.repos.chains.stream(partition)) yield line.line + '\n'
  }

  /**
   * Appends a Bernstein JSONL log (its physical lines, as `readByteLines` gives them) to the chain, all or nothing:
   * the log must verify under the operator key as a continuation of the stored chain, its first entry linking to
   * the head. A failure is the verifier's text, and nothing is appended.
   */
  async importJsonl(lines: AsyncIterable<Uint8Array>): Promise<ImportResult> {
    const key = this.#requireKey()
    try {
      const imported = await this.#store.transaction(async (repos) => {
        let head = await repos.chains.lockHead(TRACKER_AUDIT_CHAIN, GENESIS_PREV_HASH)
        // Verify as a continuation of the stored chain: the first line must link to our head.
        const verifier = new TrackerAuditVerifier(key, { prevEntryHash: head.headHash })
        let count = 0
        for await (const raw of lines) {
          const failure = verifier.push(raw)
          // Throwing rolls back every line appended so far: an import is all or nothing.
          if (failure !== null) throw new ImportRefused(failure)
          const text = decodeUtf8Strict(raw).trim()
          if (text === '') continue
          const entry = parseStoredTrackerLine(text)
          await repos.chains.append(TRACKER_AUDIT_CHAIN, head, {
            entryHash: entry.entry_hash,
            ticketId: entry.ticket_id,
            trackerName: entry.tracker_name,
            line: text,
          })
          head = { headHash: entry.entry_hash, length: head.length + 1 }
          count += 1
        }
        return count
      })
      return ok({ imported })
    } catch (error) {
      if (error instanceof ImportRefused) return fail(error.failure.code, error.failure.detail)
      throw error
    }
  }

  #requireKey(): Uint8Array {
    if (this.#key === null) throw new TypeError('this LineageService was built without the operator key')
    return this.#key
  }
}
