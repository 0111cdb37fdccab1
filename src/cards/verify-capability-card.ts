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
 * the embedded PEM is not an Ed25519 public key (`key`), the JWS does not verify (`signature`); or the card is
 * authentic but its times are wrong: an `expires_at` that is not after `created_at` (`invalid_lifetime`), a
 * `created_at` further in the future than the clock skew allows (`not_yet_valid`), or past `expires_at` (`expired`).
 */
export type CardVerifyFailure = 'malformed' | 'alg' | 'typ' | 'kid_mismatch' | 'key' | 'signature' | 'invalid_lifetime' | 'not_yet_valid' | 'expired'

/** How far in the future a card's `created_at` may be, in seconds: the clocks of two nodes differ a little. */
export const DEFAULT_CARD_CLOCK_SKEW_SECONDS = 300

/** The verified card (re-validated, so safe to use), or why it failed. */
export type CardVerification = Result<SignedCapabilityCard, CardVerifyFailure>

/** Options of {@link verifyCapabilityCard}. */
export interface VerifyCapabilityCardOptions {
  /** Verification time in Unix seconds; defaults to the current time. */
  now?: number
  /** Set to false to check only authenticity (conformance reports the times separately). */
  checkExpiry?: boolean
  /** How far in the future `created_at` may be, in seconds; {@link DEFAULT_CARD_CLOCK_SKEW_SECONDS} by default. */
  clockSkewSeconds?: number
}

/**
 * Verifies a signed card: the card is re-validated (so a value that only claims to be a
 * {@link SignedCapabilityCard} is safe to pass), the signature is a detached EdDSA JWS with
 * `typ: a2a-capability+jws` and the body's `kid` over the JCS of the typed body, made by the embedded key; and,
 * unless `checkExpiry` is false, the times: a positive `expires_at` must be after `created_at`, `created_at` may
 * not be more than `clockSkewSeconds` ahead of `now`, and `expires_at > 0 && now > expires_at` means expired (so
 * `now == expires_at` still passes; `0` and, as Bernstein reads them, negative values never expire). Never throws
 * on bad data. The signature is checked first, so a time failure is only reported for authentic cards.
 *
 * @throws TypeError when `now` is not a number (a caller's mistake, not bad data).
 * @example
 * const verdict = await verifyCapabilityCard(parseCardFile(readFileSync('card.json', 'utf8')))
 * if (verdict.ok) console.log('authentic, issued by', verdict.value.card.issuer)
 * else console.error(verdict.code, verdict.detail) // e.g. expired: card expired at 1700003600.0
 */
export async function verifyCapabilityCard(
  signed: SignedCapabilityCard,
  { now = Date.now() / 1000, checkExpiry = true, clockSkewSeconds = DEFAULT_CARD_CLOCK_SKEW_SECONDS }: VerifyCapabilityCardOptions = {},
): Promise<CardVerification> {
  if (typeof now !== 'number' || Number.isNaN(now)) throw new TypeError('now must be a number of Unix seconds')
  if (typeof clockSkewSeconds !== 'number' || !(clockSkewSeconds >= 0)) throw new TypeError('clockSkewSeconds must be a non-negative number')
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
  if (checkExpiry) {
    const times = cardTimeFailure(card.card, now, clockSkewSeconds)
    if (times !== null) return fail(times.code, times.detail)
  }
  return ok(card)
}

/** What is wrong with an authentic card's times at `now`, or null. Shared with the conformance report. */
export function cardTimeFailure(
  { created_at: createdAt, expires_at: expiresAt }: { readonly created_at: number; readonly expires_at: number },
  now: number,
  clockSkewSeconds: number = DEFAULT_CARD_CLOCK_SKEW_SECONDS,
): { code: 'invalid_lifetime' | 'not_yet_valid' | 'expired'; detail: string } | null {
  const shown = (n: number): string => pythonRepr(new PyFloat(n))
  if (expiresAt > 0 && expiresAt <= createdAt) {
    return { code: 'invalid_lifetime', detail: `expires_at ${shown(expiresAt)} is not after created_at ${shown(createdAt)}` }
  }
  if (createdAt > now + clockSkewSeconds) {
    return { code: 'not_yet_valid', detail: `created_at ${shown(createdAt)} is more than ${clockSkewSeconds} s in the future` }
  }
  if (isExpired(expiresAt, now)) return { code: 'expired', detail: `card expired at ${shown(expiresAt)}` }
  return null
}

/** Bernstein's expiry rule: `0` never expires; otherwise expired strictly after `expires_at`. */
export function isExpired(expiresAt: number, now: number): boolean {
  return expiresAt > 0 && now > expiresAt
}
