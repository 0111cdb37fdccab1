import type { Repositories } from '../store/store.js'

/** The A2A task response exactly as served, without `receipt`: what a receipt attests. */
export interface A2ATaskResponseBody {
  readonly id: string
  readonly bernstein_task_id: string | null
  readonly sender: string
  readonly message: string
  readonly status: string
  readonly artifacts: readonly { readonly name: string; readonly content_type: string; readonly data: string; readonly created_at: number }[]
  readonly created_at: number
  readonly updated_at: number
}

export type AttestationKind = 'acceptance' | 'completion'

/**
 * Mints receipts over A2A task responses. It runs inside the transaction that produced the response, so the
 * receipt's spine row commits with the task. Returns null when the node has no key material (unattested).
 */
export interface Attestor {
  attest(repos: Repositories, response: A2ATaskResponseBody, kind: AttestationKind): Promise<Readonly<Record<string, unknown>> | null>
}

/** A node without key material: every response goes out explicitly unattested. */
export const noAttestation: Attestor = {
  attest: async () => null,
}
