import { type A2AReceiptResult, verifyA2AReceipt } from '../receipts/verify-a2a-receipt.js'

export type { A2AReceiptResult } from '../receipts/verify-a2a-receipt.js'

/** Pin the receipt signer: the node's JWKS (`/.well-known/agent.json/keys`), or one JWK. */
export type ReceiptTrust = { readonly jwks: unknown; readonly trustedJwk?: never } | { readonly trustedJwk: Readonly<Record<string, unknown>>; readonly jwks?: never }

/**
 * Verifies the receipt carried by an A2A task response, offline, against the exact response bytes: the content
 * hash, the spine entry, and the Ed25519 head signature under a pinned key (kid, key_id and the JWK's kid must
 * agree). A response without a receipt is unattested and fails. Never throws on bad data.
 *
 * Give it the send's 201 response or a finished task's response: a task still in progress is read with its
 * acceptance receipt (`Bernstein-Attestation: acceptance`), which covers the 201 body, not the body it comes with.
 *
 * @example
 * const jwks = await (await fetch(`${base}/.well-known/agent.json/keys`)).json()
 * const verdict = await verifyTaskReceipt(result.responseText, { jwks })
 * if (!verdict.ok) console.error(verdict.parsed ? verdict.failures : verdict.error)
 */
export async function verifyTaskReceipt(responseText: string, trust: ReceiptTrust): Promise<A2AReceiptResult> {
  let receipt: unknown
  try {
    receipt = (JSON.parse(responseText) as { receipt?: unknown } | null)?.receipt
  } catch (error) {
    return { parsed: false, ok: false, error: `could not parse response: ${(error as Error).message}` }
  }
  if (receipt === undefined || receipt === null) return { parsed: false, ok: false, error: 'the response carries no receipt (unattested)' }
  return verifyA2AReceipt(receipt, responseText, trust.trustedJwk !== undefined ? { trustedJwk: trust.trustedJwk } : { jwks: trust.jwks })
}
