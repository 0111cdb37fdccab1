/**
 * Offline verification of a signed capability card (Bernstein `verify_capability_card`, §5.2).
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import type { DetachedJwsDecoded } from '../crypto/detached-jws.js'
import { PyFloat, pythonRepr } from '../canonical/python-json.js'
import { JWS_ALG, verifyDecodedDetachedJws } from '../crypto/detached-jws.js'
import { publicKeyFromPem } from '../crypto/ed25519.js'
import { KeyRejected } from '../crypto/key-rejected.js'
import { type Result, fail, ok } from '../result.js'
import { CAPABILITY_CARD_TYP, CapabilityCardInvalid, capabilityCardSigningBytes, parseCapabilityCardAndJws } from './capability-card.js'
import type { SignedCapabilityCard } from './capability-card.js'

/**
 * Why a card failed: not a well-formed card (`malformed`), a top-level or header algorithm other than EdDSA
 * (`alg`), a header `typ` other than `a2a-capability+jws` (`typ`), header and body `kid` differ (`kid_mismatch`),
 * the embedded PEM is not an Ed25519 public key (`key`), the JWS does not verify (`signature`), or the card is
 * authentic but past `expires_at` (`expired`).
 */
export type CardVerifyFailure = 'malformed' | 'alg' | 'typ' | 'kid_mismatch' | 'key' | 'signature' | 'expired'

/** The verified card (re-validated, so safe to use), or why it failed. */
export type CardVerification = Result<SignedCapabilityCard, CardVerifyFailure>

/** Options of {@link verifyCapabilityCard}. */
export interface VerifyCapabilityCardOptions {
  /** Verification time in Unix seconds; defaults to the current time. */
  now?: number
  /** Set to false to check only authenticity (conformance reports expiry separately). */
  checkExpiry?: boolean
}

/**
 * Verifies a signed card: the card is re-validated (so a value that only claims to be a
 * {@link SignedCapabilityCard} is safe to pass), the signature is a detached EdDSA JWS with
 * `typ: a2a-capability+jws` and the body's `kid` over the JCS of the typed body, made by the embedded key; and,
 * unless `checkExpiry` is false, `expires_at > 0 && now > expires_at` means expired (so `now == expires_at` still
 * passes). Never throws on bad data. The signature is checked before expiry, so `expired` is only reported for
 * authentic cards.
 *
 * @throws TypeError when `now` is not a number (a caller's mistake, not bad data).
 * @example
 * const verdict = await verifyCapabilityCard(parseCardFile(readFileSync('card.json', 'utf8')))
 * if (verdict.ok) console.log('authentic, issued by', verdict.value.card.issuer)
 * else console.error(verdict.code, verdict.detail) // e.g. expired: card expired at 1700003600.0
 */
export async function verifyCapabilityCard(
  signed: SignedCapabilityCard,
  { now = Date.now() / 1000, checkExpiry = true }: VerifyCapabilityCardOptions = {},
): Promise<CardVerification> {
  if (typeof now !== 'number' || Number.isNaN(now)) throw new TypeError('now must be a number of Unix seconds')
  let card: SignedCapabilityCard
  let jws: DetachedJwsDecoded
  try {
    ;({ signed: card, jws } = parseCapabilityCardAndJws(signed))
  } catch (error) {
    if (!(error instanceof CapabilityCardInvalid)) throw error
    return fail(error.code === 'kid_mismatch' ? 'kid_mismatch' : 'malformed', error.message)
  }
  if (card.alg !== JWS_ALG) return fail('alg', `card alg must be ${JWS_ALG}`)
  let publicKey: KeyObject
  try {
    publicKey = publicKeyFromPem(card.card.public_key_pem)
  } catch (error) {
    if (!(error instanceof KeyRejected)) throw error
    return fail('key', `public_key_pem: ${error.message}`)
  }
  let signingBytes: Uint8Array
  try {
    signingBytes = capabilityCardSigningBytes(card.card)
  } catch (error) {
    // A lone surrogate (or anything else JCS cannot serialise) makes the card unverifiable, not the verifier crash.
    if (!(error instanceof TypeError)) throw error
    return fail('malformed', error.message)
  }
  const result = jws.ok ? verifyDecodedDetachedJws(jws.value, signingBytes, publicKey) : jws
  if (!result.ok) {
    const code = result.code === 'unknown_alg' ? 'alg' : result.code === 'malformed' ? 'malformed' : 'signature'
    return fail(code, result.detail)
  }
  const header = result.value
  if (header.typ !== CAPABILITY_CARD_TYP) return fail('typ', `JWS typ must be ${CAPABILITY_CARD_TYP}`)
  if (header.kid !== card.card.kid) return fail('kid_mismatch', 'JWS kid does not match the card kid')
  if (checkExpiry && isExpired(card.card.expires_at, now)) {
    return fail('expired', `card expired at ${pythonRepr(new PyFloat(card.card.expires_at))}`)
  }
  return ok(card)
}

/** Bernstein's expiry rule: `0` never expires; otherwise expired strictly after `expires_at`. */
export function isExpired(expiresAt: number, now: number): boolean {
  return expiresAt > 0 && now > expiresAt
}
