/**
 * The node's chain partitions as one verifiable whole (docs/scaling.md): a signed checkpoint of every partition
 * head of the tracker-audit chain and the receipt spine, written periodically, and the verification of the whole
 * node: every partition as a Bernstein chain of its own (Bernstein's verifiers and texts), its stored head against
 * its rows, and every checkpoint's signature and recorded heads against the partitions as they are now, so that a
 * partition dropped or rolled back (or rewritten) after a checkpoint is reported.
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import { jcs, jcsText } from '../canonical/jcs.js'
import { decodeDetachedJws, signDetachedJws, verifyDecodedDetachedJws } from '../crypto/detached-jws.js'
import { type Jwks, findJwk } from '../crypto/jwks.js'
import { RECEIPT_SPINE_CHAIN } from '../receipts/receipt-attestor.js'
import { runPeriodically } from '../periodic.js'
import type { Clock, Ids } from '../runtime.js'
import type { StoredCheckpoint } from '../store/checkpoint.repository.js'
import type { Store } from '../store/store.js'
import { TRACKER_AUDIT_CHAIN } from './audit-trail.js'
import { comparePartitions } from './partitions.js'
import { verifySpine } from './spine.js'
import { TrackerAuditVerifier } from './tracker-verify.js'

/** `typ` of a checkpoint's JWS header, and `type` of its body. */
export const CHECKPOINT_TYP = 'bernstein-a2a-checkpoint+jws'
export const CHECKPOINT_TYPE = 'bernstein-a2a.chain-checkpoint.v1'

/** The two partitioned chains, by the legacy name their partitions are prefixed with. */
export const PARTITIONED_CHAINS = { 'tracker-audit': TRACKER_AUDIT_CHAIN, 'receipt-spine': RECEIPT_SPINE_CHAIN } as const
export type PartitionedChain = keyof typeof PARTITIONED_CHAINS

/** One partition head as a checkpoint records it. */
export interface CheckpointHead {
  readonly chain: string
  readonly length: number
  readonly head_hash: string
}

/** What a checkpoint signs (JCS): the issuer, when, and every partition head of both chains at that moment. */
export interface CheckpointBody {
  readonly type: typeof CHECKPOINT_TYPE
  readonly id: string
  readonly issuer: string
  readonly created_at: number
  readonly partitions: readonly CheckpointHead[]
}

/** One partition's verdict: Bernstein's verifier over its rows, and its stored head against the rows. */
export interface PartitionVerification {
  readonly kind: PartitionedChain
  readonly chain: string
  readonly entries: number
  readonly ok: boolean
  readonly failure: string | null
}

export interface NodeVerification {
  readonly ok: boolean
  readonly partitions: readonly PartitionVerification[]
  readonly checkpoints: {
    readonly count: number
    readonly latest: { readonly id: string; readonly created_at: number; readonly partitions: number } | null
    readonly failures: readonly string[]
  }
}

export interface ChainCheckpointsDeps {
  readonly store: Store
  readonly issuer: string
  readonly clock: Clock
  readonly ids: Ids
  /** The signing key (the receipt key) and its kid in the JWKS; null for a node that only verifies. */
  readonly key: { readonly kid: string; readonly privateKey: KeyObject } | null
  /** The node's JWKS (current and archived keys): checkpoints are verified against it by `kid`. */
  readonly jwks: () => Jwks
  /** The operator HMAC master key: tracker-audit partitions use it as is, the spine its HKDF derivation. */
  readonly auditKey: Uint8Array
}

const PARTITION_ORDER = (kind: PartitionedChain) => comparePartitions(PARTITIONED_CHAINS[kind])

/** Writes and verifies checkpoints; verifies the node's partitions. */
export class ChainCheckpoints {
  readonly #deps: ChainCheckpointsDeps
  /** The heads of the last checkpoint this process wrote, as JCS text. */
  #lastHeads: string | null = null

  constructor(deps: ChainCheckpointsDeps) {
    this.#deps = deps
  }

  /** Every partition head of both chains, as committed now. */
  async #heads(): Promise<CheckpointHead[]> {
    const heads: CheckpointHead[] = []
    for (const kind of Object.keys(PARTITIONED_CHAINS) as PartitionedChain[]) {
      const rows = await this.#deps.store.repos.chains.heads(PARTITIONED_CHAINS[kind])
      rows.sort((a, b) => PARTITION_ORDER(kind)(a.chain, b.chain))
      for (const r of rows) heads.push({ chain: r.chain, length: r.length, head_hash: r.headHash })
    }
    return heads
  }

  /** Signs and stores a checkpoint of every partition head; returns its body. */
  async write(): Promise<CheckpointBody> {
    return this.#write(await this.#heads())
  }

  /**
   * `write`, unless no head moved since the last checkpoint this process wrote (the periodic checkpoint of an idle
   * node adds nothing a verifier could use, only rows: one per replica and interval, each as long as the partitions).
   * Null when skipped.
   */
  async writeIfMoved(): Promise<CheckpointBody | null> {
    const heads = await this.#heads()
    const text = jcsText(heads)
    return text === this.#lastHeads ? null : this.#write(heads, text)
  }

  async #write(heads: CheckpointHead[], headsText = jcsText(heads)): Promise<CheckpointBody> {
    const key = this.#deps.key
    if (key === null) throw new TypeError('these ChainCheckpoints were built without a signing key')
    const createdAt = Number(this.#deps.clock.nowNs() / 1_000_000n)
    const id = `${String(createdAt).padStart(15, '0')}-${this.#deps.ids.shortId()}`
    const body: CheckpointBody = { type: CHECKPOINT_TYPE, id, issuer: this.#deps.issuer, created_at: createdAt, partitions: heads }
    const jws = await signDetachedJws(jcs(body), { alg: 'EdDSA', kid: key.kid, typ: CHECKPOINT_TYP }, key.privateKey)
    await this.#deps.store.transaction((repos) => repos.checkpoints.insert({ id, createdAt, body: jcsText(body), jws }))
    this.#lastHeads = headsText
    return body
  }

  /** Verifies every partition and every checkpoint; never throws on bad data. */
  async verifyNode(): Promise<NodeVerification> {
    const partitions: PartitionVerification[] = []
    const present = new Map<string, number>()
    for (const kind of Object.keys(PARTITIONED_CHAINS) as PartitionedChain[]) {
      const heads = await this.#deps.store.repos.chains.heads(PARTITIONED_CHAINS[kind])
      heads.sort((a, b) => PARTITION_ORDER(kind)(a.chain, b.chain))
      for (const head of heads) {
        present.set(head.chain, head.length)
        partitions.push(await this.#verifyPartition(kind, head.chain, head))
      }
    }
    const failures: string[] = []
    let count = 0
    let latest: NodeVerification['checkpoints']['latest'] = null
    for await (const stored of this.#deps.store.repos.checkpoints.stream()) {
      count += 1
      const body = this.#checkSignature(stored, failures)
      if (body === null) continue
      latest = { id: body.id, created_at: body.created_at, partitions: body.partitions.length }
      for (const recorded of body.partitions) {
        const failure = await this.#checkRecordedHead(body.id, recorded, present)
        if (failure !== null) failures.push(failure)
      }
    }
    return {
      ok: partitions.every((p) => p.ok) && failures.length === 0,
      partitions,
      checkpoints: { count, latest, failures },
    }
  }

  async #verifyPartition(kind: PartitionedChain, chain: string, head: { headHash: string; length: number }): Promise<PartitionVerification> {
    const rows = this.#deps.store.repos.chains.stream(chain)
    let entries = 0
    let lastHash: string | null = null
    let failure: string | null = null
    if (kind === 'tracker-audit') {
      const verifier = new TrackerAuditVerifier(this.#deps.auditKey)
      for await (const row of rows) {
        entries += 1
        lastHash = row.entryHash
        if (verifier.push(row.line) !== null) break
      }
      const result = verifier.result()
      if (!result.ok) failure = result.detail
    } else {
      const lines: string[] = []
      for await (const row of rows) {
        lines.push(row.line)
        lastHash = row.entryHash
      }
      entries = lines.length
      const result = verifySpine(lines.join('\n'), this.#deps.auditKey)
      if (result.status === 'tampered') failure = result.errors.join('; ')
    }
    if (failure === null && (head.length !== entries || (entries > 0 && head.headHash !== lastHash))) {
      failure = `stored head (${head.length} entries, ${head.headHash}) does not match the rows (${entries} entries, ${lastHash ?? 'none'})`
    }
    return { kind, chain, entries, ok: failure === null, failure }
  }

  #checkSignature(stored: StoredCheckpoint, failures: string[]): CheckpointBody | null {
    const decoded = decodeDetachedJws(stored.jws)
    if (!decoded.ok) {
      failures.push(`checkpoint ${stored.id}: malformed signature`)
      return null
    }
    const kid = decoded.value.header['kid']
    const jwk = typeof kid === 'string' ? findJwk(this.#deps.jwks(), kid) : null
    if (jwk === null || !jwk.ok) {
      failures.push(`checkpoint ${stored.id}: signing key ${String(kid)} is not in the node's JWKS`)
      return null
    }
    const payload = new TextEncoder().encode(stored.body)
    const verified = verifyDecodedDetachedJws(decoded.value, payload, jwk.value.publicKey)
    if (!verified.ok || verified.value.typ !== CHECKPOINT_TYP) {
      failures.push(`checkpoint ${stored.id}: signature does not verify`)
      return null
    }
    let body: CheckpointBody
    try {
      body = JSON.parse(stored.body) as CheckpointBody
    } catch {
      failures.push(`checkpoint ${stored.id}: body is not JSON`)
      return null
    }
    if (body.type !== CHECKPOINT_TYPE || body.id !== stored.id || !Array.isArray(body.partitions) || jcsText(body) !== stored.body) {
      failures.push(`checkpoint ${stored.id}: body is not a canonical checkpoint`)
      return null
    }
    return body
  }

  /** A recorded head must still be in its partition at the recorded position: otherwise the partition lost rows. */
  async #checkRecordedHead(id: string, recorded: CheckpointHead, present: ReadonlyMap<string, number>): Promise<string | null> {
    const length = present.get(recorded.chain)
    if (length === undefined) {
      return `partition ${recorded.chain} is missing: checkpoint ${id} recorded it with ${recorded.length} entries`
    }
    if (length < recorded.length) {
      return `partition ${recorded.chain} was rolled back: checkpoint ${id} recorded ${recorded.length} entries, it has ${length}`
    }
    if (recorded.length === 0) return null
    const hash = await this.#deps.store.repos.chains.hashAt(recorded.chain, recorded.length)
    if (hash !== recorded.head_hash) {
      return `partition ${recorded.chain} was rewritten: entry ${recorded.length} is ${hash ?? 'missing'}, checkpoint ${id} recorded ${recorded.head_hash}`
    }
    return null
  }
}

/**
 * Writes a checkpoint every `intervalMs` (0: never), one at a time; `stop` waits for one in progress. A failed one is
 * reported and the next is tried at the next tick (a replica of a cluster writes its own; each is a valid snapshot).
 */
export function startCheckpointing(checkpoints: ChainCheckpoints, intervalMs: number, onError: (error: unknown) => void): { stop(): Promise<void> } {
  return runPeriodically(intervalMs, () => checkpoints.writeIfMoved().then(() => undefined, onError))
}
