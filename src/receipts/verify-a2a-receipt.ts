/**
 * Receipt verification as callers use it: from the wire (response text or bytes, a receipt as JSON), pinned
 * through a JWK or the node's JWKS, with src/crypto's Ed25519. The check itself, over parsed values and with the
 * primitive injected, is receipt-verify.ts.
 *
 * @module
 */
import { type PyValue, isPyObject, parsePythonJson } from '../canonical/python-json.js'
import { publicKeyFromRaw, verifyBytes } from '../crypto/ed25519.js'
import { findJwk } from '../crypto/jwks.js'
import { type Fail, fail } from '../result.js'
import { type Ed25519Verifier, type ReceiptVerification, verifyReceipt } from './receipt-verify.js'
import { parseReceipt } from './receipt.js'

/** The key a receipt must be signed with ({@link verifyA2AReceipt}): `trustedJwk` or `jwks`. */
export interface VerifyA2AReceiptOptions {
  /** Pin the signer: a JWK (its `x`, and `kid` when present, must match). */
  readonly trustedJwk?: Readonly<Record<string, unknown>>
  /** Or pin through a JWKS (the node's `/.well-known/agent.json/keys`): the key whose kid is the receipt's. */
  readonly jwks?: unknown
}

/**
 * Why a receipt could not even be checked: the receipt or the response does not parse (`malformed_receipt`,
 * `malformed_response`), the response carries no receipt (`unattested`), or the call itself is wrong
 * (`invalid_argument`, e.g. from JavaScript without types), or the keys to check it against could not be fetched
 * (`jwks_unavailable`).
 */
export type ReceiptUnchecked = 'malformed_receipt' | 'malformed_response' | 'unattested' | 'invalid_argument' | 'jwks_unavailable'

/**
 * The outcome of {@link verifyA2AReceipt} and {@link verifyTaskReceipt}: the {@link ReceiptVerification} (`ok`, or
 * `receipt_invalid` listing every failed check in `failures`), or a receipt that could not be checked.
 */
export type A2AReceiptResult = ReceiptVerification | Fail<ReceiptUnchecked>

/**
 * The Ed25519 primitive {@link verifyReceipt} is given everywhere in this package (the server, the client, the CLI):
 * src/crypto's, over the raw 32-byte key the receipt's JWK carries. A key that does not parse verifies nothing.
 */
export const ed25519Verifier: Ed25519Verifier = async ({ publicKey, message, signature }) => {
  try {
    return await verifyBytes(publicKeyFromRaw(publicKey), message, signature)
  } catch {
    return false
  }
}

/** The response as a receipt attests it: a top-level `receipt` (the receipt cannot cover its own bytes) dropped. */
export function withoutReceipt(value: PyValue): PyValue {
  if (!isPyObject(value) || !('receipt' in value)) return value
  const { receipt: _dropped, ...rest } = value
  return rest
}

/**
 * Verifies an A2A task receipt offline against the response it attests (bernstein-behaviour.md §3.3, plus kid
 * consistency). `response` is the raw wire body (text or bytes: parsed losslessly, a top-level `receipt` dropped)
 * or an already-parsed Python-typed value. Never throws, on bad data or bad arguments.
 *
 * @example
 * const response = readFileSync('final.json', 'utf8') // the exact bytes of GET /a2a/tasks/{id}
 * const jwks: unknown = JSON.parse(readFileSync('jwks.json', 'utf8')) // the node's /.well-known/agent.json/keys
 * const verdict = await verifyA2AReceipt(JSON.parse(response).receipt, response, { jwks })
 * if (verdict.ok) console.log('attested by', verdict.value.verifiedKeyId)
 * else console.error(verdict.code, verdict.detail) // receipt_invalid also lists every failed check in `failures`
 */
export async function verifyA2AReceipt(
  receipt: unknown,
  response: string | Uint8Array | PyValue,
  options: VerifyA2AReceiptOptions = {},
): Promise<A2AReceiptResult> {
  if (typeof options !== 'object' || options === null) return fail('invalid_argument', 'options must be an object ({ jwks } or { trustedJwk })')
  if (options.trustedJwk !== undefined && !isPlainObject(options.trustedJwk)) return fail('invalid_argument', 'options.trustedJwk must be a JWK object')
  let receiptValue: PyValue
  try {
    receiptValue = typeof receipt === 'string' ? parsePythonJson(receipt) : (JSON.parse(JSON.stringify(receipt)) as PyValue)
  } catch (error) {
    return fail('malformed_receipt', `could not parse receipt: ${(error as Error).message}`)
  }
  const parsed = parseReceipt(receiptValue)
  if (!parsed.ok) return fail('malformed_receipt', `could not parse receipt: ${parsed.detail}`)
  const kid = parsed.value.kid
  let responseValue: PyValue
  try {
    responseValue = typeof response === 'string' || response instanceof Uint8Array ? parsePythonJson(Buffer.from(response).toString('utf8')) : response
  } catch (error) {
    return fail('malformed_response', `could not parse response: ${(error as Error).message}`)
  }
  let trustedJwk = options.trustedJwk
  if (trustedJwk === undefined && options.jwks !== undefined) {
    const found = findJwk(options.jwks, kid)
    if (!found.ok) {
      const failures = [`receipt kid '${kid}' is not in the JWKS: ${found.detail}`]
      return fail('receipt_invalid', failures.join('; '), { failures, failedChecks: ['trusted_issuer'], keyPinned: true, recomputedContentHash: null })
    }
    trustedJwk = { ...found.value.jwk }
  }
  return verifyReceipt(parsed.value, withoutReceipt(responseValue), { verifyEd25519: ed25519Verifier, ...(trustedJwk !== undefined && { trustedJwk }) })
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Pin the receipt signer: the node's JWKS (`/.well-known/agent.json/keys`), or one JWK. */
export type ReceiptTrust =
  | { readonly jwks: unknown; readonly trustedJwk?: never }
  | { readonly trustedJwk: Readonly<Record<string, unknown>>; readonly jwks?: never }

/**
 * Verifies the receipt carried by an A2A task response, offline, against the exact response bytes: the content
 * hash, the spine entry, and the Ed25519 head signature under a pinned key (kid, key_id and the JWK's kid must
 * agree). A response without a receipt is unattested and fails. Never throws, on bad data or bad arguments.
 *
 * Give it the send's 201 response or a finished task's response: a task still in progress is read with its
 * acceptance receipt (`Bernstein-Attestation: acceptance`), which covers the 201 body, not the body it comes with.
 *
 * @example
 * const jwks = await (await fetch(`${base}/.well-known/agent.json/keys`)).json()
 * const verdict = await verifyTaskReceipt(result.value.responseText, { jwks })
 * if (!verdict.ok) console.error(verdict.code, verdict.detail)
 */
export async function verifyTaskReceipt(responseText: string, trust: ReceiptTrust): Promise<A2AReceiptResult> {
  if (typeof responseText !== 'string') return fail('invalid_argument', 'responseText must be the response body as a string')
  if (!isPlainObject(trust) || (trust.jwks === undefined && trust.trustedJwk === undefined)) {
    return fail('invalid_argument', "trust must be { jwks } (the node's /.well-known/agent.json/keys) or { trustedJwk }")
  }
  let receipt: unknown
  try {
    receipt = (JSON.parse(responseText) as { receipt?: unknown } | null)?.receipt
  } catch (error) {
    return fail('malformed_response', `could not parse response: ${(error as Error).message}`)
  }
  if (receipt === undefined || receipt === null) return fail('unattested', 'the response carries no receipt (unattested)')
  return verifyA2AReceipt(receipt, responseText, trust.trustedJwk !== undefined ? { trustedJwk: trust.trustedJwk } : { jwks: trust.jwks })
}
