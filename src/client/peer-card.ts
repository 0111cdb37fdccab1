import { CapabilityCardInvalid } from '../cards/capability-card.js'
import type { SignedCapabilityCard } from '../cards/capability-card.js'
import { parseCardFile } from '../cards/card-file.js'
import { type ConsumePeerCardOptions, consumePeerCard, PeerCardRejected, type PeerCardRejection } from '../cards/consume-peer-card.js'
import type { PolicyRequirements } from '../cards/policy-gate.js'
import { createApiClient } from './api-client.js'

export type { PolicyRequirements } from '../cards/policy-gate.js'
export type { SignedCapabilityCard } from '../cards/capability-card.js'

export interface FetchPeerCardOptions {
  /** Fingerprints (`sha256:…`) of the card keys you trust, pinned out of band. Carrying a key is not trust. */
  readonly trustedIssuerFingerprints: Iterable<string>
  /** The policies the peer must advertise (cost ceiling, minimum redaction tier and sandbox profile). */
  readonly requirements: PolicyRequirements
  /** When given, the card's issuer must be exactly this. */
  readonly expectedIssuer?: string
  readonly fetch?: typeof globalThis.fetch
  /** Unix seconds for the expiry check; defaults to now. */
  readonly now?: number
  /** Told the card signature's verdict. */
  readonly metrics?: ConsumePeerCardOptions['metrics']
}

export type PeerCardResult =
  | { readonly ok: true; readonly card: SignedCapabilityCard; readonly fingerprint: string }
  | {
      readonly ok: false
      /** `http`: the peer answered an error status; `malformed`: not a capability card; else the trust check that failed. */
      readonly reason: 'http' | 'malformed' | PeerCardRejection
      readonly detail: string
      readonly httpStatus: number | null
    }

/**
 * Fetches a peer's signed capability card (`/.well-known/a2a-capability-card.json`) and decides whether you may
 * delegate to it: signature and expiry, a pinned key fingerprint, then your policy requirements (the same checks
 * as the server's own delegation, `consumePeerCard`). Refusals are data; only a network failure throws.
 *
 * @example
 * const verdict = await fetchAndVerifyPeerCard('https://peer.example', {
 *   trustedIssuerFingerprints: ['sha256:c397…'],
 *   requirements: { maxCostCapUsd: 20, minRedactionTier: 'standard', minSandboxProfile: 'container' },
 * })
 * if (!verdict.ok) throw new Error(`not delegating: ${verdict.reason}: ${verdict.detail}`)
 */
export async function fetchAndVerifyPeerCard(baseUrl: string, options: FetchPeerCardOptions): Promise<PeerCardResult> {
  const client = createApiClient({ baseUrl, ...(options.fetch && { fetch: options.fetch }), headers: { accept: 'application/json' } })
  const { data, response } = await client.GET('/.well-known/a2a-capability-card.json', { parseAs: 'text' })
  // The contract documents 200 alone; an empty 200 is a malformed card, not an HTTP failure.
  if (response.status !== 200) {
    return { ok: false, reason: 'http', detail: `GET /.well-known/a2a-capability-card.json answered ${response.status}`, httpStatus: response.status }
  }
  let signed: SignedCapabilityCard
  try {
    signed = parseCardFile(data ?? '')
  } catch (cause) {
    if (!(cause instanceof CapabilityCardInvalid)) throw cause
    return { ok: false, reason: 'malformed', detail: cause.message, httpStatus: response.status }
  }
  try {
    const accepted = await consumePeerCard(signed, {
      trustedIssuerFingerprints: options.trustedIssuerFingerprints,
      requirements: options.requirements,
      ...(options.now !== undefined && { now: options.now }),
      ...(options.expectedIssuer !== undefined && { expectedIssuer: options.expectedIssuer }),
      ...(options.metrics !== undefined && { metrics: options.metrics }),
    })
    return { ok: true, card: accepted.card, fingerprint: accepted.fingerprint }
  } catch (cause) {
    if (!(cause instanceof PeerCardRejected)) throw cause
    return { ok: false, reason: cause.code, detail: cause.detail, httpStatus: response.status }
  }
}
