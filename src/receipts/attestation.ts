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
}

/** A node without key material: every response goes out explicitly unattested. */
export const noAttestation: Attestor = {
  attest: async () => null,
}
