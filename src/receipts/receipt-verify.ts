/**
 * Offline verification of an A2A task receipt (behaviour doc §3.3, Bernstein's `verify_task_receipt` and
 * `verify_head_signature`), plus a kid consistency check Bernstein lacks. The Ed25519 primitive is injected.
 *
 * @module
 */
import { isPyObject, pythonRepr, pythonStr } from '../canonical/python-json.js'
import type { PyObject, PyValue } from '../canonical/python-json.js'
import { type Result, fail, ok } from '../result.js'
import { HEAD_SIGNATURE_ALG, canonicalResponseBytes, contentHash, receiptBindingDigest } from './receipt.js'
import type { A2ATaskReceipt } from './receipt.js'

/** Verifies an Ed25519 signature; must return false (not throw) for a bad one. */
export type Ed25519Verifier = (args: { publicKey: Uint8Array; message: Uint8Array; signature: Uint8Array }) => boolean | Promise<boolean>

/** Options of {@link verifyReceipt}. */
export interface VerifyReceiptOptions {
  /** Pin the signing key: the embedded JWK's `x` must equal this JWK's (and its `kid` too, when it has one). */
  trustedJwk?: Readonly<Record<string, unknown>>
  verifyEd25519: Ed25519Verifier
  /**
   * Require `kid`, `head_signature.key_id` and the JWK's `kid` (when present) to agree. Default true; false gives
   * Bernstein's behaviour exactly.
   */
  checkKid?: boolean
}

/** What a receipt that verified tells: {@link verifyReceipt}'s `value`. */
export interface VerifiedReceipt {
  /** `head_signature.key_id` (Bernstein's `verified_key_id`); null when the receipt names none. */
  readonly verifiedKeyId: string | null
  /** Whether a trusted key was supplied. */
  readonly keyPinned: boolean
  /** Set without a pinned key: the signature only proves the receipt's own embedded key. */
  readonly warning?: string
  /** The content hash recomputed from the response (equal to the receipt's). */
  readonly recomputedContentHash: string
}

/**
 * The checks of a receipt, by name: the response was supplied and can be hashed (`response`), it hashes to the
 * receipt's `content_hash`, the head signature is present and verifies (`signature`), the signing key is the pinned
 * one (`trusted_issuer`), and the receipt's kid, key_id and JWK kid agree (`kid`).
 */
export type ReceiptCheck = 'response' | 'content_hash' | 'signature' | 'trusted_issuer' | 'kid'

/** What a receipt that failed carries beside `code` and `detail`: every failed check. */
export interface ReceiptFailures {
  /** Bernstein's texts, in Bernstein's order; ours (kid) come last. `detail` is them joined with `"; "`. */
  readonly failures: readonly string[]
  /** The check each of `failures` is about (the same length and order). */
  readonly failedChecks: readonly ReceiptCheck[]
  /** Whether a trusted key was supplied. */
  readonly keyPinned: boolean
  /** The content hash recomputed from the response, when one could be computed. */
  readonly recomputedContentHash: string | null
}

/** Outcome of {@link verifyReceipt}: the receipt verified, or `receipt_invalid` with every failed check. */
export type ReceiptVerification = Result<VerifiedReceipt, 'receipt_invalid', ReceiptFailures>

/** Bernstein's warning for a receipt verified against its own embedded key. */
export const UNPINNED_KEY_WARNING =
  "signature verified against the receipt's own embedded key (trust-on-first-use); the key is not pinned. " +
  "Pass --trusted-jwk to verify provenance against the operator's published key."

/** Decoded bytes, or Python's error text. */
type Decoded = Result<Buffer, 'invalid_base64' | 'invalid_jwk'>

const STRICT_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

// base64.b64decode(s, validate=True), with Python 3.11's messages.
function decodeStrictBase64(text: string): Decoded {
  if (!STRICT_BASE64.test(text)) return fail('invalid_base64', 'Only base64 data is allowed')
  const data = text.replace(/=+$/, '')
  const pads = text.length - data.length
  if (data.length % 4 === 1) return fail('invalid_base64', oneMoreThanAMultipleOfFour(data.length))
  if ((data.length + pads) % 4 !== 0) return fail('invalid_base64', 'Incorrect padding')
  return ok(Buffer.from(data, 'base64'))
}

function oneMoreThanAMultipleOfFour(length: number): string {
  return `Invalid base64-encoded string: number of data characters (${length}) cannot be 1 more than a multiple of 4`
}

// base64.urlsafe_b64decode(x + padding): the non-validating decoder drops characters outside the alphabet.
function decodeLooseBase64Url(text: string): Decoded {
  const data = text.replace(/[^A-Za-z0-9_-]/g, '')
  if (data.length % 4 === 1) return fail('invalid_base64', oneMoreThanAMultipleOfFour(data.length))
  return ok(Buffer.from(data, 'base64url'))
}

function jwkPublicKey(jwk: PyObject): Decoded {
  if (jwk['kty'] !== 'OKP' || jwk['crv'] !== 'Ed25519') {
    return fail('invalid_jwk', `expected kty=OKP, crv=Ed25519; got ${pythonRepr(jwk)}`)
  }
  const x = jwk['x']
  if (typeof x !== 'string') return fail('invalid_jwk', "JWK 'x' is missing or not a string")
  const decoded = decodeLooseBase64Url(x)
  if (!decoded.ok) return fail('invalid_jwk', `invalid base64url: ${decoded.detail}`)
  if (decoded.value.length !== 32) return fail('invalid_jwk', `Ed25519 public key must be 32 bytes (got ${decoded.value.length})`)
  return decoded
}

/** Bernstein's `verify_head_signature` over a hex digest: the key id, or its error text (unprefixed). */
async function verifyHeadSignature(
  digestHex: string,
  headSignature: PyObject,
  trustedJwk: Readonly<Record<string, unknown>> | undefined,
  verify: Ed25519Verifier,
): Promise<Result<string | null, 'head_signature' | 'untrusted_key'>> {
  const refused = (detail: string): Result<string | null, 'head_signature'> => fail('head_signature', detail)
  const alg = headSignature['alg']
  if (alg !== HEAD_SIGNATURE_ALG) return refused(`unsupported head_signature alg: ${pythonRepr(alg)} (expected EdDSA)`)
  const sigB64 = headSignature['signature_b64']
  const jwk = headSignature['public_key_jwk']
  if (typeof sigB64 !== 'string' || sigB64.length === 0) return refused('head_signature.signature_b64 missing or not a string')
  if (!isPyObject(jwk)) return refused('head_signature.public_key_jwk missing or not an object')
  if (trustedJwk !== undefined) {
    const trustedX = trustedJwk['x']
    if (typeof trustedX !== 'string' || trustedX.length === 0 || trustedX !== jwk['x']) {
      return fail('untrusted_key', 'head_signature.public_key_jwk does not match the trusted JWK (verifier was given an explicit trusted key)')
    }
  }
  const publicKey = jwkPublicKey(jwk)
  if (!publicKey.ok) return refused(`head_signature.public_key_jwk invalid: ${publicKey.detail}`)
  const signature = decodeStrictBase64(sigB64)
  if (!signature.ok) return refused(`head_signature.signature_b64 not valid base64: ${signature.detail}`)
  let valid = false
  // An Ed25519 signature is 64 bytes; anything else cannot verify (Python's cryptography raises InvalidSignature).
  if (signature.value.length === 64) {
    try {
      valid = await verify({
        publicKey: publicKey.value,
        message: Buffer.from(digestHex, 'hex'),
        signature: signature.value,
      })
    } catch {
      valid = false
    }
  }
  if (!valid) return refused('head_signature.signature_b64 does not verify against head_sha256')
  const keyId = Object.hasOwn(headSignature, 'key_id') ? pythonStr(headSignature['key_id'] as PyValue) : ''
  return ok(keyId || null)
}

function shown(value: unknown): string {
  return value === undefined ? '(missing)' : typeof value === 'string' ? value : pythonRepr(value as PyValue)
}

/** A failed check: its name and Bernstein's (or our) text. */
interface Failed {
  readonly check: ReceiptCheck
  readonly text: string
}

function kidFailures(receipt: A2ATaskReceipt, trustedJwk: Readonly<Record<string, unknown>> | undefined): Failed[] {
  const failures: Failed[] = []
  const head = receipt.head_signature
  const keyId = Object.hasOwn(head, 'key_id') ? head['key_id'] : undefined
  const jwk = head['public_key_jwk']
  const jwkKid = isPyObject(jwk) && Object.hasOwn(jwk, 'kid') ? jwk['kid'] : undefined
  // A JWK without kid is legal (RFC 7517); key_id is not optional in a receipt.
  if (keyId !== receipt.kid || (jwkKid !== undefined && jwkKid !== receipt.kid)) {
    failures.push({ check: 'kid', text: `kid mismatch: receipt kid ${receipt.kid}, key_id ${shown(keyId)}, jwk kid ${shown(jwkKid)}` })
  }
  const trustedKid = trustedJwk?.['kid']
  if (trustedKid !== undefined && trustedKid !== receipt.kid) {
    failures.push({ check: 'trusted_issuer', text: `trusted JWK kid mismatch: trusted kid ${shown(trustedKid)}, receipt kid ${receipt.kid}` })
  }
  return failures
}

/**
 * Verifies a receipt against the response it attests, offline. `response` is either the parsed response (hashed
 * Python-canonically; remove a top-level `receipt` key first) or the raw bytes (hashed verbatim); `undefined`/`null`
 * means none was supplied. Failure texts are Bernstein's (`content_hash mismatch: …`,
 * `head_signature: head_signature.signature_b64 does not verify against head_sha256`, …); with `checkKid` (default)
 * an inconsistent kid adds `kid mismatch: receipt kid <a>, key_id <b>, jwk kid <c>`. A failure lists every failed
 * check in `failures` (`detail` joins them with `"; "`). Never throws on bad data.
 *
 * @throws TypeError when `options.verifyEd25519` is not a function.
 * @example
 * const verdict = await verifyReceipt(receipt, withoutReceipt(parsedResponse), { verifyEd25519: ed25519Verifier, trustedJwk })
 * if (!verdict.ok) for (const failure of verdict.failures) console.error(failure)
 */
export async function verifyReceipt(
  receipt: A2ATaskReceipt,
  response: PyValue | Uint8Array | undefined,
  options: VerifyReceiptOptions,
): Promise<ReceiptVerification> {
  if (typeof options?.verifyEd25519 !== 'function') throw new TypeError('verifyEd25519 must be a function')
  const keyPinned = options.trustedJwk !== undefined
  const failed = (failures: readonly Failed[], recomputed: string | null): ReceiptVerification => {
    const texts = failures.map((f) => f.text)
    return fail('receipt_invalid', texts.join('; '), {
      failures: texts,
      failedChecks: failures.map((f) => f.check),
      keyPinned,
      recomputedContentHash: recomputed,
    })
  }

  if (response === undefined || response === null) return failed([{ check: 'response', text: 'no response supplied to verify against' }], null)
  let recomputed: string
  if (response instanceof Uint8Array) {
    recomputed = contentHash(response)
  } else {
    try {
      recomputed = contentHash(canonicalResponseBytes(response))
    } catch (error) {
      const text = `A2A response is not canonicalisable: ${error instanceof Error ? error.message : String(error)}`
      return failed([{ check: 'response', text }], null)
    }
  }

  const failures: Failed[] = []
  if (recomputed !== receipt.content_hash) {
    failures.push({ check: 'content_hash', text: `content_hash mismatch: response hashes to ${recomputed}, receipt claims ${receipt.content_hash}` })
  }
  if (Object.keys(receipt.head_signature).length === 0) {
    failures.push({ check: 'signature', text: 'head_signature is missing - the response carries no proof of execution' })
    return failed(failures, recomputed)
  }
  const head = await verifyHeadSignature(receiptBindingDigest(receipt), receipt.head_signature, options.trustedJwk, options.verifyEd25519)
  if (!head.ok) failures.push({ check: head.code === 'untrusted_key' ? 'trusted_issuer' : 'signature', text: `head_signature: ${head.detail}` })
  if (options.checkKid ?? true) failures.push(...kidFailures(receipt, options.trustedJwk))

  if (failures.length > 0 || !head.ok) return failed(failures, recomputed)
  return ok({ verifiedKeyId: head.value, keyPinned, ...(!keyPinned && { warning: UNPINNED_KEY_WARNING }), recomputedContentHash: recomputed })
}
