/**
 * The consume side: may we delegate to the peer that presents this card? (Bernstein `consume_peer_card` and the
 * issuer check of `accept_inbound_task`, §5.4.)
 *
 * @module
 */
import { pythonRepr } from '../canonical/python-json.js'
import { keyFingerprint } from '../crypto/fingerprint.js'
import { TrustError } from '../errors.js'
import type { SignedCapabilityCard } from './capability-card.js'
import { policiesMeetRequirements } from './policy-gate.js'
import type { PolicyRequirements } from './policy-gate.js'
import { verifyCapabilityCard } from './verify-capability-card.js'

/**
 * Why a peer card is refused, in the order the checks run: its issuer is not the one expected (`issuer_mismatch`),
 * its signature is invalid or it has expired (`signature`), its key is not pinned (`untrusted_issuer`), its policies
 * do not meet the requirements (`policy`).
 */
export type PeerCardRejection = 'issuer_mismatch' | 'signature' | 'untrusted_issuer' | 'policy'

/** The peer's card is not acceptable; `code` is stable, `detail` is Bernstein's text. */
export class PeerCardRejected extends TrustError<PeerCardRejection> {
  override readonly name = 'PeerCardRejected'
  readonly detail: string

  constructor(code: PeerCardRejection, detail: string) {
    super(code, `peer card rejected (${code}): ${detail}`)
    this.detail = detail
  }
}

/** What {@link consumePeerCard} checks the card against. */
export interface ConsumePeerCardOptions {
  /** Fingerprints (`sha256:…`) of the card keys the operator trusts. Carrying a key is not trust. */
  trustedIssuerFingerprints: Iterable<string>
  requirements: PolicyRequirements
  /** Unix seconds; defaults to the current time. */
  now?: number
  /** The origin the inbound message claims; when given, the card's issuer must equal it (checked first). */
  expectedIssuer?: string
  /** Told the signature verdict (metrics); optional. */
  metrics?: { signatureVerified(kind: 'capability_card', valid: boolean): void }
}

/** The accepted card and the fingerprint (`sha256:…`) of its key, which was among the trusted ones. */
export interface AcceptedPeerCard {
  readonly card: SignedCapabilityCard
  readonly fingerprint: string
}

/**
 * Accepts a peer card or throws {@link PeerCardRejected}, checking in this order and stopping at the first
 * failure: `issuer_mismatch` (only with `expectedIssuer`), `signature` (invalid, malformed or expired),
 * `untrusted_issuer`, `policy` (all gate failures joined with `"; "`).
 *
 * `bernstein-a2a/client`'s `fetchAndVerifyPeerCard` fetches a peer's card and runs these checks, answering with data.
 *
 * @example
 * const signed = parseCardFile(readFileSync('peer-card.json', 'utf8'))
 * try {
 *   const { fingerprint } = await consumePeerCard(signed, {
 *     trustedIssuerFingerprints: ['sha256:10ba682c8ad13513971e8b56881aab8bd702bb807796eca81932c735a94d6e6d'],
 *     requirements: { maxCostCapUsd: 20, minRedactionTier: 'standard', minSandboxProfile: 'container' },
 *   })
 *   console.log('may delegate to the holder of', fingerprint)
 * } catch (error) {
 *   if (!(error instanceof PeerCardRejected)) throw error
 *   console.error(error.code, error.detail) // e.g. policy: sandbox profile: peer profile 'process' is weaker than required 'container'
 * }
 */
export async function consumePeerCard(
  signed: SignedCapabilityCard,
  { trustedIssuerFingerprints, requirements, now = Date.now() / 1000, expectedIssuer, metrics }: ConsumePeerCardOptions,
): Promise<AcceptedPeerCard> {
  if (expectedIssuer !== undefined) {
    const issuer: unknown = (signed as { card?: { issuer?: unknown } } | null)?.card?.issuer
    if (issuer !== expectedIssuer) {
      const shown = typeof issuer === 'string' ? pythonRepr(issuer) : 'None'
      throw new PeerCardRejected('issuer_mismatch', `card issuer ${shown} does not match the message origin ${pythonRepr(expectedIssuer)}`)
    }
  }
  const verified = await verifyCapabilityCard(signed, { now })
  metrics?.signatureVerified('capability_card', verified.ok)
  if (!verified.ok) throw new PeerCardRejected('signature', 'card signature is invalid or the card has expired')
  const card = verified.value
  // verifyCapabilityCard has already loaded this PEM as an Ed25519 key, so this cannot throw.
  const fingerprint = keyFingerprint(card.card.public_key_pem)
  if (!new Set(trustedIssuerFingerprints).has(fingerprint)) {
    throw new PeerCardRejected('untrusted_issuer', `card key fingerprint ${fingerprint} is not in the trusted-issuer set`)
  }
  const gate = policiesMeetRequirements(card.card.policies, requirements)
  if (!gate.ok) throw new PeerCardRejected('policy', gate.detail)
  return { card, fingerprint }
}
