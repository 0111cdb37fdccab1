import type { Schema } from '../contract.js'
import type { Repositories } from '../store/store.js'

/** The A2A task response exactly as served, without `receipt`: what a receipt attests. */
export type A2ATaskResponseBody = Readonly<Omit<Schema<'A2ATaskResponse'>, 'receipt'>>

export type AttestationKind = 'acceptance' | 'completion'

/**
 * Mints receipts over A2A task responses. It runs inside the transaction that produced the response, so the
 * receipt's spine row commits with the task. Returns null when the node has no key material (unattested).
 */
export interface Attestor {
  /** `tenantId`: the task's tenant, whose spine partition the receipt's row goes to. */
  attest(repos: Repositories, response: A2ATaskResponseBody, kind: AttestationKind, tenantId: string): Promise<Readonly<Record<string, unknown>> | null>
  /**
   * As `attest`, for a caller that needs the receipt only to store it: the spine row is appended as the transaction's
   * first append at COMMIT (ChainRepository.appendAtCommit), so that on PostgreSQL the spine head is locked for the
   * COMMIT's round trip only, and `then` is handed the receipt right after it, before the COMMIT.
   */
  attestAtCommit(
    repos: Repositories,
    response: A2ATaskResponseBody,
    kind: AttestationKind,
    tenantId: string,
    then: (receipt: Readonly<Record<string, unknown>> | null) => Promise<void>,
  ): Promise<void>
}

/** A node without key material: every response goes out explicitly unattested. */
export const noAttestation: Attestor = {
  attest: async () => null,
  attestAtCommit: (_repos, _response, _kind, _tenantId, then) => then(null),
}
