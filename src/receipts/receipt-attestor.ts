import type { KeyObject } from 'node:crypto'
import type { A2ATaskResponseBody, AttestationKind, Attestor } from './attestation.js'
import { fromPyValue, toPyValue } from '../canonical/python-json.js'
import { exportPublicJwk, signBytes } from '../crypto/ed25519.js'
import { type PartitionScheme, partitionFor } from '../lineage/partitions.js'
import { A2A_RECEIPT_RUN_ID, SPINE_GENESIS_HASH, type SpineRow, deriveLineageKey, spineRowLine } from '../lineage/spine.js'
import { type Metrics, noMetrics } from '../signature-metrics.js'
import { buildReceipt, buildReceiptSpineRow, canonicalResponseBytes, receiptToDict } from './receipt.js'
import type { Clock } from '../runtime.js'
import type { ChainHead } from '../store/chain.repository.js'
import type { Repositories } from '../store/store.js'

/** The receipt spine (run `a2a-inbound-responses`) in `chain_entries` before partitioning: its legacy partition. */
export const RECEIPT_SPINE_CHAIN = `spine:${A2A_RECEIPT_RUN_ID}`

export interface ReceiptAttestorDeps {
  /** The receipt key and the kid it is published under in the JWKS. */
  readonly key: { readonly kid: string; readonly privateKey: KeyObject; readonly publicKey: KeyObject }
  /** The HMAC master key (the audit key); the spine uses its HKDF derivation, as Bernstein does. */
  readonly masterKey: Uint8Array
  readonly clock: Clock
  /** Counts every receipt signed. */
  readonly metrics?: Metrics
  /** Spine partitions per tenant (default 1). */
  readonly partitions?: PartitionScheme
}

/**
 * Mints Bernstein-format receipts (bernstein-behaviour.md §3.2) over A2A task responses: a spine row in the
 * database (appended under the spine head's lock), then the Ed25519 head signature over the binding digest.
 * The key is published in the JWKS under its kid, and `kid`, `key_id` and the JWK's `kid` agree.
 */
export class ReceiptAttestor implements Attestor {
  readonly #deps: ReceiptAttestorDeps
  readonly #lineageKey: Buffer
  readonly #kid: string
  readonly #publicJwk: { kty: 'OKP'; crv: 'Ed25519'; alg: 'EdDSA'; x: string; kid: string }

  constructor(deps: ReceiptAttestorDeps) {
    this.#deps = deps
    this.#lineageKey = deriveLineageKey(deps.masterKey)
    this.#kid = deps.key.kid
    const jwk = exportPublicJwk(deps.key.publicKey)
    this.#publicJwk = { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', x: jwk.x, kid: this.#kid }
  }

  get kid(): string {
    return this.#kid
  }

  async attest(repos: Repositories, body: A2ATaskResponseBody, kind: AttestationKind, tenantId: string): Promise<Readonly<Record<string, unknown>>> {
    const { partition, build, response } = this.#spineAppend(body, kind, tenantId)
    const { value: row } = await repos.chains.appendNext(partition, SPINE_GENESIS_HASH, build)
    return this.#receipt(body.id, response, row)
  }

  async attestAtCommit(
    repos: Repositories,
    body: A2ATaskResponseBody,
    kind: AttestationKind,
    tenantId: string,
    then: (receipt: Readonly<Record<string, unknown>> | null) => Promise<void>,
  ): Promise<void> {
    const { partition, build, response } = this.#spineAppend(body, kind, tenantId)
    // First among the appends at COMMIT: the spine head is locked before the tracker-audit head, as everywhere else.
    repos.chains.appendAtCommit(partition, SPINE_GENESIS_HASH, build, {
      first: true,
      afterAppend: async (row) => then(await this.#receipt(body.id, response, row)),
    })
  }

  /** The receipt's spine row, built on whatever head its partition has when it is appended. */
  #spineAppend(body: A2ATaskResponseBody, kind: AttestationKind, tenantId: string) {
    // Integral numbers are ints and others floats, exactly as a verifier parsing our JSON wire body will see them.
    // Canonicalised once: the spine row's content hash and the receipt's check of it hash the same bytes.
    const response = canonicalResponseBytes(toPyValue(body))
    const partition = partitionFor(RECEIPT_SPINE_CHAIN, this.#deps.partitions ?? { shards: 1 }, tenantId, body.id)
    const build = (head: ChainHead) => {
      const row = buildReceiptSpineRow(
        {
          response,
          taskId: body.id,
          prevHash: head.headHash,
          timestampNs: this.#deps.clock.nowNs(),
          ...(kind === 'completion' ? { stepId: `a2a:${body.id}:completed` } : {}),
        },
        this.#lineageKey,
      )
      return { entry: { entryHash: row.entry_hash, ticketId: body.id, trackerName: kind, line: spineRowLine(row).slice(0, -1) }, value: row }
    }
    return { partition, build, response }
  }

  async #receipt(taskId: string, response: Uint8Array, row: SpineRow): Promise<Readonly<Record<string, unknown>>> {
    const receipt = await buildReceipt({
      response,
      taskId,
      spineRow: row,
      kid: this.#kid,
      sign: (message) => signBytes(this.#deps.key.privateKey, message),
      publicJwk: this.#publicJwk,
    })
    ;(this.#deps.metrics ?? noMetrics).signatureMade('receipt')
    return fromPyValue(receiptToDict(receipt)) as Record<string, unknown>
  }
}
