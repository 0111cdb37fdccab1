/**
 * A per-check conformance report for a capability card (Bernstein `check_card_conformance`, §5.5
 * `interop a2a conformance --card`). Unlike {@link verifyCapabilityCard} it reports every check, so it takes the
 * raw decoded file value and still says something useful about a malformed card.
 *
 * @module
 */
import { PyFloat, pythonRepr } from '../canonical/python-json.js'
import { keyFingerprint } from '../crypto/fingerprint.js'
import { KeyRejected } from '../crypto/key-rejected.js'
import { CapabilityCardInvalid, capabilityCardSigningBytes, parseCapabilityCard } from './capability-card.js'
import type { SignedCapabilityCard } from './capability-card.js'
import { cardTimeFailure, isExpired, verifyCapabilityCard } from './verify-capability-card.js'

export type CardConformanceCheckName = 'required_fields' | 'jcs_canonical' | 'signature' | 'expiry' | 'issuer'

export interface CardConformanceCheck {
  name: CardConformanceCheckName
  passed: boolean
  detail: string
}

export interface CardConformanceReport {
  ok: boolean
  issuer: string | null
  kid: string | null
  fingerprint: string | null
  checks: CardConformanceCheck[]
}

const NOT_CHECKED = 'not checked: the card is not well-formed'

/**
 * Runs the five checks in Bernstein's order: `required_fields`, `jcs_canonical`, `signature` (expiry ignored),
 * `expiry` (at `now`, Unix seconds), `issuer`. `ok` is true only when all pass. Never throws on bad data.
 *
 * @example (await checkCardConformance(decodeCardFile(text), Date.now() / 1000)).ok
 */
export async function checkCardConformance(signed: unknown, now: number): Promise<CardConformanceReport> {
  if (typeof now !== 'number' || Number.isNaN(now)) throw new TypeError('now must be a number of Unix seconds')
  const raw = rawBody(signed)
  const checks: CardConformanceCheck[] = []

  let parsed: SignedCapabilityCard | undefined
  try {
    parsed = parseCapabilityCard(signed)
    checks.push({ name: 'required_fields', passed: true, detail: 'all required fields present and well-formed' })
  } catch (error) {
    if (!(error instanceof CapabilityCardInvalid)) throw error
    checks.push({ name: 'required_fields', passed: false, detail: error.message })
  }

  if (parsed) {
    try {
      capabilityCardSigningBytes(parsed.card)
      checks.push({ name: 'jcs_canonical', passed: true, detail: 'body re-canonicalises under RFC 8785 JCS' })
    } catch (error) {
      checks.push({ name: 'jcs_canonical', passed: false, detail: `body does not canonicalise: ${(error as Error).message}` })
    }
    const verified = await verifyCapabilityCard(parsed, { now, checkExpiry: false })
    checks.push(
      verified.ok
        ? { name: 'signature', passed: true, detail: 'detached Ed25519 JWS verifies (a2a-capability+jws)' }
        : { name: 'signature', passed: false, detail: `detached JWS does not verify (${verified.code}): ${verified.detail}` },
    )
  } else {
    checks.push({ name: 'jcs_canonical', passed: false, detail: NOT_CHECKED })
    checks.push({ name: 'signature', passed: false, detail: NOT_CHECKED })
  }

  const expiresAt = raw['expires_at']
  const createdAt = raw['created_at']
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) {
    checks.push({ name: 'expiry', passed: false, detail: 'expires_at is missing or not a number' })
  } else {
    const shown = `expires_at=${pythonRepr(new PyFloat(expiresAt))}`
    const times = typeof createdAt === 'number' && Number.isFinite(createdAt) ? cardTimeFailure({ created_at: createdAt, expires_at: expiresAt }, now) : null
    if (isExpired(expiresAt, now)) checks.push({ name: 'expiry', passed: false, detail: `card is expired (${shown})` })
    else if (times !== null) checks.push({ name: 'expiry', passed: false, detail: `${times.detail} (${times.code})` })
    else if (expiresAt <= 0) checks.push({ name: 'expiry', passed: true, detail: `card does not expire (${shown})` })
    else checks.push({ name: 'expiry', passed: true, detail: `card is within its validity window (${shown})` })
  }

  const issuer = typeof raw['issuer'] === 'string' ? raw['issuer'] : null
  checks.push(
    issuer ? { name: 'issuer', passed: true, detail: `issuer=${pythonRepr(issuer)}` } : { name: 'issuer', passed: false, detail: 'issuer is missing or empty' },
  )

  return {
    ok: checks.every((check) => check.passed),
    issuer,
    kid: parsed?.card.kid ?? (typeof raw['kid'] === 'string' ? raw['kid'] : null),
    fingerprint: fingerprintOrNull(raw['public_key_pem']),
    checks,
  }
}

function rawBody(signed: unknown): Record<string, unknown> {
  const card = typeof signed === 'object' && signed !== null ? (signed as { card?: unknown }).card : undefined
  return typeof card === 'object' && card !== null && !Array.isArray(card) ? (card as Record<string, unknown>) : {}
}

function fingerprintOrNull(pem: unknown): string | null {
  if (typeof pem !== 'string') return null
  try {
    return keyFingerprint(pem)
  } catch (error) {
    if (error instanceof KeyRejected) return null
    throw error
  }
}
