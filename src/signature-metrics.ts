/**
 * Observation hooks for features that sign or verify. Features call these small methods and never import a
 * metrics library; the server plugs in the Prometheus implementation (`src/http/prometheus-metrics.ts`), and
 * everything else gets the no-op default.
 *
 * @module
 */

/** What was signed or checked: A2A receipts, capability cards, signed agent cards. */
export type SignatureKind = 'receipt' | 'capability_card' | 'agent_card'

export interface Metrics {
  /** One signature was produced (a receipt minted, a card issued or re-signed). */
  signatureMade(kind: SignatureKind): void
  /** One signature was checked; `valid` is the verdict. */
  signatureVerified(kind: SignatureKind, valid: boolean): void
}

/** The default: observes nothing. */
export const noMetrics: Metrics = {
  signatureMade() {},
  signatureVerified() {},
}
