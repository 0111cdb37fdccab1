/**
 * Issuing a signed capability card (Bernstein `issue_capability_card`, §5.2).
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import { signDetachedJws } from '../crypto/detached-jws.js'
import { exportSpkiPem, privateKeyFromPem } from '../crypto/ed25519.js'
import { CAPABILITY_CARD_SCHEMA_VERSION, CAPABILITY_CARD_TYP, capabilityCardSigningBytes, parseCapabilityCardBody } from './capability-card.js'
import type { CardPolicies, SignedCapabilityCard } from './capability-card.js'

/** What {@link issueCapabilityCard} puts in the card, and the key it signs with. */
export interface IssueCapabilityCardOptions {
  issuer: string
  name: string
  description?: string
  tools: readonly string[]
  policies: CardPolicies
  /** Lifetime in seconds; `0` issues a card that never expires (`expires_at` 0). */
  ttlSeconds: number
  /** The signing key, as a `KeyObject` or a PKCS#8 PEM. Its public half is embedded in the card. */
  privateKey: KeyObject | string
  /** Defaults to `a2a-<issuer>`, as in Bernstein. */
  kid?: string
  /** Issue time in Unix seconds (injected for reproducible cards); defaults to the current time. */
  now?: number
}

/**
 * Builds, validates and signs a capability card. Ed25519 is deterministic, so fixed inputs give fixed bytes:
 * seed 11×32, issuer `acme-orch`, now 1700000000, ttl 3600 reproduces Bernstein's `card_a.signed.json`.
 *
 * @throws CapabilityCardInvalid when the inputs make an invalid card (e.g. an empty issuer or a negative cost cap);
 *   KeyRejected when the PEM is not an Ed25519 PKCS#8 key; TypeError for a negative or non-finite TTL or time, or
 *   one that would make `expires_at` negative or not after `created_at`.
 * @example
 * const { privateKey } = generateKeyPairSync('ed25519')
 * const signed = await issueCapabilityCard({
 *   issuer: 'acme-orch',
 *   name: 'Acme Orchestrator',
 *   tools: ['code_review'],
 *   policies: { cost_cap_usd: 10, redaction_tier: 'standard', sandbox_profile: 'container' },
 *   ttlSeconds: 86_400,
 *   privateKey,
 * })
 * writeFileSync('card.json', serializeCardFile(signed))
 * console.log('peers pin', keyFingerprint(signed.card.public_key_pem))
 */
export async function issueCapabilityCard(options: IssueCapabilityCardOptions): Promise<SignedCapabilityCard> {
  const { issuer, name, description = '', tools, policies, ttlSeconds, kid, now = Date.now() / 1000 } = options
  if (typeof ttlSeconds !== 'number' || !Number.isFinite(ttlSeconds) || ttlSeconds < 0) {
    throw new TypeError('ttlSeconds must be a non-negative number')
  }
  if (typeof now !== 'number' || !Number.isFinite(now)) throw new TypeError('now must be a number of Unix seconds')
  const expiresAt = ttlSeconds > 0 ? now + ttlSeconds : 0
  // Bernstein reads a negative expires_at as "never" and a card may not expire before it was made: never issue either.
  if (expiresAt < 0 || (ttlSeconds > 0 && expiresAt <= now)) throw new TypeError('the card would expire before it was created')
  const privateKey = typeof options.privateKey === 'string' ? privateKeyFromPem(options.privateKey) : options.privateKey
  const card = parseCapabilityCardBody({
    schema_version: CAPABILITY_CARD_SCHEMA_VERSION,
    issuer,
    name,
    description,
    advertised_tools: tools,
    policies,
    public_key_pem: exportSpkiPem(privateKey),
    kid: kid ?? `a2a-${issuer}`,
    created_at: now,
    expires_at: expiresAt,
  })
  const signature = await signDetachedJws(capabilityCardSigningBytes(card), { alg: 'EdDSA', kid: card.kid, typ: CAPABILITY_CARD_TYP }, privateKey)
  return { alg: 'EdDSA', card, signature }
}
