import { AppError } from '../errors.js'
import { type LineageEnvelope, wrapLineageChain } from './envelope.js'
import { type TrackerAuditVerifyResult, TrackerAuditVerifier } from './tracker-audit.js'
import type { ChainLine } from '../store/chain.repository.js'
import type { Store } from '../store/store.js'
import { TRACKER_AUDIT_CHAIN, parseTrackerLine } from './audit-trail.js'

export interface ChainPage {
  readonly lines: readonly ChainLine[]
  readonly nextCursor: string | null
}

/** Reads of the node's tracker-audit chain: pages, envelopes, verification and export. */
export class LineageService {
  readonly #store: Store
  readonly #key: Uint8Array
  readonly #issuer: string

  constructor(store: Store, key: Uint8Array, issuer: string) {
    this.#store = store
    this.#key = key
    this.#issuer = issuer
  }

  get issuer(): string {
    return this.#issuer
  }

  async page(input: { ticketId?: string; limit: number; cursor?: string }): Promise<ChainPage> {
    let after = 0
    if (input.cursor !== undefined) {
      if (!/^\d{1,12}$/.test(input.cursor)) {
        throw new AppError('validation_failed', 'invalid cursor', { issues: [{ loc: ['query', 'cursor'], msg: 'Invalid pagination cursor', type: 'value_error' }] })
      }
      after = Number(input.cursor)
    }
    const rows = await this.#store.repos.chains.list({
      chain: TRACKER_AUDIT_CHAIN,
      afterPosition: after,
      limit: input.limit + 1,
      ...(input.ticketId !== undefined && { ticketId: input.ticketId }),
    })
    const lines = rows.slice(0, input.limit)
    const last = lines[lines.length - 1]
    return { lines, nextCursor: rows.length > input.limit && last ? String(last.position) : null }
  }

  /** The `bernstein.lineage_v2` envelope of one ticket's entries (or all), issued as this node. */
  async envelope(ticketId?: string): Promise<LineageEnvelope> {
    const lines = await this.#store.repos.chains.list({ chain: TRACKER_AUDIT_CHAIN, ...(ticketId !== undefined && { ticketId }) })
    return wrapLineageChain(
      lines.map((l) => parseTrackerLine(l.line)),
      { sourceIssuer: this.#issuer, ...(ticketId !== undefined && { ticketId }) },
    )
  }

  /** Walks the whole chain in pages under the operator key; stops at the first failure with Bernstein's text. */
  async verify(): Promise<TrackerAuditVerifyResult> {
    const verifier = new TrackerAuditVerifier(this.#key)
    for await (const line of this.#store.repos.chains.stream(TRACKER_AUDIT_CHAIN)) {
      if (verifier.push(line.line) !== null) break
    }
    return verifier.result()
  }

  /** The chain as Bernstein's JSONL file: every line followed by `\n`. */
  async *exportJsonl(): AsyncGenerator<string> {
    for await (const line of this.#store.repos.chains.stream(TRACKER_AUDIT_CHAIN)) yield line.line + '\n'
  }
}
