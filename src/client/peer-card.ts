import { CapabilityCardInvalid } from '../cards/capability-card.js'
import type { SignedCapabilityCard } from '../cards/capability-card.js'
import { parseCardFile } from '../cards/card-file.js'
import { type ConsumePeerCardOptions, consumePeerCard, PeerCardRejected, type PeerCardRejection } from '../cards/consume-peer-card.js'
import { OPEN_REQUIREMENTS, type PolicyRequirements } from '../cards/policy-gate.js'
import { createApiClient } from './api-client.js'

export type { PolicyRequirements } from '../cards/policy-gate.js'
export type { SignedCapabilityCard } from '../cards/capability-card.js'

/** The options are named after the CLI's flags (`delegate`, `interop a2a verify`): `--trusted-fingerprint` is `trustedFingerprints`, and so on. */
export interface FetchPeerCardOptions {
  /**
   * Fingerprints (`sha256:…`) of the card keys you trust, pinned out of band (`--trusted-fingerprint`). Carrying a
   * key is not trust: with none, every card is refused as `untrusted_issuer`.
   */
  readonly trustedFingerprints?: string | Iterable<string>
  /** The peer's advertised cost cap must not exceed this, in USD (`--require-cost-cap-usd`); default: no ceiling. */
  readonly requireCostCapUsd?: number
  /** The weakest acceptable redaction tier, of none < basic < standard < strict (`--require-redaction-tier`); default `none`. */
  readonly requireRedactionTier?: string
  /** The weakest acceptable sandbox profile, of none < process < container < microvm (`--require-sandbox-profile`); default `none`. */
  readonly requireSandboxProfile?: string
  /** When given, the card's issuer must be exactly this (`--expected-issuer`). */
  readonly expectedIssuer?: string
  readonly fetch?: typeof globalThis.fetch
  /** Unix seconds for the expiry check; defaults to now. */
  readonly now?: number
  /** Told the card signature's verdict. */
  readonly metrics?: ConsumePeerCardOptions['metrics']
  /** @deprecated The former name of {@link trustedFingerprints}. */
  readonly trustedIssuerFingerprints?: Iterable<string>
  /** @deprecated The former form of `requireCostCapUsd`, `requireRedactionTier` and `requireSandboxProfile`, all three at once. */
  readonly requirements?: PolicyRequirements
}

export type PeerCardResult =
  | { readonly ok: true; readonly card: SignedCapabilityCard; readonly fingerprint: string }
  | {
      readonly ok: false
      /**
       * `http`: the peer answered an error status; `malformed`: not a capability card; `invalid_options`: the
       * options themselves are wrong (nothing was fetched); else the trust check that failed.
       */
      readonly reason: 'http' | 'malformed' | 'invalid_options' | PeerCardRejection
      readonly detail: string
      readonly httpStatus: number | null
    }

type Checked =
  | { readonly ok: true; readonly trusted: readonly string[]; readonly requirements: PolicyRequirements }
  | { readonly ok: false; readonly detail: string }

/** The options as the check takes them, or what is wrong with them (a JavaScript caller's types are not checked). */
function checkOptions(options: FetchPeerCardOptions): Checked {
  if (typeof options !== 'object' || options === null) return { ok: false, detail: 'options must be an object' }
  const { trustedFingerprints, trustedIssuerFingerprints, requirements, requireCostCapUsd, requireRedactionTier, requireSandboxProfile } = options
  if (trustedFingerprints !== undefined && trustedIssuerFingerprints !== undefined) {
    return { ok: false, detail: 'give trustedFingerprints, not also its former name trustedIssuerFingerprints' }
  }
  const given = trustedFingerprints ?? trustedIssuerFingerprints ?? []
  const iterable = typeof given === 'string' || (typeof given === 'object' && given !== null && Symbol.iterator in given)
  const trusted = iterable ? [...(typeof given === 'string' ? [given] : given)] : null
  if (trusted === null || !trusted.every((f) => typeof f === 'string'))
    return { ok: false, detail: 'trustedFingerprints must be a fingerprint (sha256:…) or a list of them' }
  const individual = requireCostCapUsd !== undefined || requireRedactionTier !== undefined || requireSandboxProfile !== undefined
  if (individual && requirements !== undefined) {
    return { ok: false, detail: 'give requireCostCapUsd, requireRedactionTier and requireSandboxProfile, not also the former requirements object' }
  }
  const wanted: PolicyRequirements = individual
    ? {
        maxCostCapUsd: requireCostCapUsd ?? OPEN_REQUIREMENTS.maxCostCapUsd,
        minRedactionTier: requireRedactionTier ?? OPEN_REQUIREMENTS.minRedactionTier,
        minSandboxProfile: requireSandboxProfile ?? OPEN_REQUIREMENTS.minSandboxProfile,
      }
    : (requirements ?? OPEN_REQUIREMENTS)
  if (typeof wanted !== 'object' || wanted === null) return { ok: false, detail: 'requirements must be an object' }
  const { maxCostCapUsd, minRedactionTier, minSandboxProfile } = wanted
  const name = (modern: string, former: string): string => (individual ? modern : `requirements.${former}`)
  if (typeof maxCostCapUsd !== 'number' || Number.isNaN(maxCostCapUsd) || maxCostCapUsd < 0) {
    return {
      ok: false,
      detail: `${name('requireCostCapUsd', 'maxCostCapUsd')} must be a number of USD, 0 or more (got ${JSON.stringify(maxCostCapUsd) ?? typeof maxCostCapUsd})`,
    }
  }
  if (typeof minRedactionTier !== 'string') return { ok: false, detail: `${name('requireRedactionTier', 'minRedactionTier')} must be a string` }
  if (typeof minSandboxProfile !== 'string') return { ok: false, detail: `${name('requireSandboxProfile', 'minSandboxProfile')} must be a string` }
  return { ok: true, trusted, requirements: { maxCostCapUsd, minRedactionTier, minSandboxProfile } }
}

/**
 * Fetches a peer's signed capability card (`/.well-known/a2a-capability-card.json`) and decides whether you may
 * delegate to it: signature and expiry, a pinned key fingerprint, then your policy requirements (the same checks
 * as the server's own delegation, `consumePeerCard`, and the CLI's `delegate`). Refusals, and options that make no
 * sense, are data; only a network failure throws.
 *
 * @example
 * const verdict = await fetchAndVerifyPeerCard('https://peer.example', {
 *   trustedFingerprints: ['sha256:c397…'],
 *   requireCostCapUsd: 20,
 *   requireRedactionTier: 'standard',
 *   requireSandboxProfile: 'container',
 * })
 * if (!verdict.ok) throw new Error(`not delegating: ${verdict.reason}: ${verdict.detail}`)
 */
export async function fetchAndVerifyPeerCard(baseUrl: string, options: FetchPeerCardOptions): Promise<PeerCardResult> {
  const checked = checkOptions(options)
  if (!checked.ok) return { ok: false, reason: 'invalid_options', detail: checked.detail, httpStatus: null }
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
      trustedIssuerFingerprints: checked.trusted,
      requirements: checked.requirements,
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
