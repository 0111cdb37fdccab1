import { CapabilityCardInvalid } from '../cards/capability-card.js'
import type { SignedCapabilityCard } from '../cards/capability-card.js'
import { parseCardFile } from '../cards/card-file.js'
import { type AcceptedPeerCard, type ConsumePeerCardOptions, consumePeerCard, PeerCardRejected, type PeerCardRejection } from '../cards/consume-peer-card.js'
import { OPEN_REQUIREMENTS, type PolicyRequirements } from '../cards/policy-gate.js'
import { type Fail, type Result, fail, ok } from '../result.js'
import { createApiClient } from './api-client.js'

export type { PolicyRequirements } from '../cards/policy-gate.js'
export type { SignedCapabilityCard } from '../cards/capability-card.js'
export type { AcceptedPeerCard } from '../cards/consume-peer-card.js'

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

/**
 * Why a card was not accepted, stable for branching:
 * - `invalid_argument`: the arguments themselves are wrong (from JavaScript: a base URL or fingerprint that is not
 *   a string, a requirement of the wrong type, a `fetch` that is not a function…); nothing was fetched;
 * - `http`: the peer answered an error status (`httpStatus`);
 * - `malformed`: the peer answered 200 with something that is not a capability card;
 * - `issuer_mismatch`, `signature`, `untrusted_issuer`, `policy`: the trust check that failed, in the order they
 *   run (as `consumePeerCard`'s `PeerCardRejected` codes).
 */
export type PeerCardFailure = 'invalid_argument' | 'http' | 'malformed' | PeerCardRejection

/**
 * `{ ok: true, value: { card, fingerprint } }`, or `{ ok: false, code, detail, httpStatus }`: `httpStatus` is the
 * status the card was served with, null when nothing was fetched (`invalid_argument`).
 */
export type PeerCardResult = Result<AcceptedPeerCard, PeerCardFailure, { readonly httpStatus: number | null }>

type Checked = Result<{ readonly trusted: readonly string[]; readonly requirements: PolicyRequirements }, 'invalid_argument'>

const invalid = (detail: string): Fail<'invalid_argument'> => fail('invalid_argument', detail)
const shown = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : value === null ? 'null' : typeof value)

/** The options as the check takes them, or what is wrong with them (a JavaScript caller's types are not checked). */
function checkOptions(baseUrl: unknown, options: FetchPeerCardOptions): Checked {
  if (typeof baseUrl !== 'string' || !/^https?:$/.test(URL.parse(baseUrl)?.protocol ?? '')) {
    return invalid(`baseUrl must be the peer's http(s) URL (got ${shown(baseUrl)})`)
  }
  if (typeof options !== 'object' || options === null) return invalid('options must be an object')
  const { trustedFingerprints, trustedIssuerFingerprints, requirements, requireCostCapUsd, requireRedactionTier, requireSandboxProfile } = options
  if (trustedFingerprints !== undefined && trustedIssuerFingerprints !== undefined) {
    return invalid('give trustedFingerprints, not also its former name trustedIssuerFingerprints')
  }
  const given: unknown = trustedFingerprints !== undefined ? trustedFingerprints : trustedIssuerFingerprints !== undefined ? trustedIssuerFingerprints : []
  const iterable = typeof given === 'string' || (typeof given === 'object' && given !== null && Symbol.iterator in given)
  const trusted = iterable ? [...(typeof given === 'string' ? [given] : (given as Iterable<unknown>))] : null
  if (trusted === null || !trusted.every((f) => typeof f === 'string')) {
    return invalid('trustedFingerprints must be a fingerprint (sha256:…) or a list of them')
  }
  const individual = requireCostCapUsd !== undefined || requireRedactionTier !== undefined || requireSandboxProfile !== undefined
  if (individual && requirements !== undefined) {
    return invalid('give requireCostCapUsd, requireRedactionTier and requireSandboxProfile, not also the former requirements object')
  }
  const wanted: unknown = individual
    ? {
        maxCostCapUsd: requireCostCapUsd ?? OPEN_REQUIREMENTS.maxCostCapUsd,
        minRedactionTier: requireRedactionTier ?? OPEN_REQUIREMENTS.minRedactionTier,
        minSandboxProfile: requireSandboxProfile ?? OPEN_REQUIREMENTS.minSandboxProfile,
      }
    : requirements === undefined
      ? OPEN_REQUIREMENTS
      : requirements
  if (typeof wanted !== 'object' || wanted === null || Array.isArray(wanted)) return invalid(`requirements must be an object (got ${shown(wanted)})`)
  const { maxCostCapUsd, minRedactionTier, minSandboxProfile } = wanted as Partial<Record<keyof PolicyRequirements, unknown>>
  const name = (modern: string, former: string): string => (individual ? modern : `requirements.${former}`)
  if (typeof maxCostCapUsd !== 'number' || Number.isNaN(maxCostCapUsd) || maxCostCapUsd < 0) {
    return invalid(
      `${name('requireCostCapUsd', 'maxCostCapUsd')} must be a number of USD, 0 or more (got ${JSON.stringify(maxCostCapUsd) ?? typeof maxCostCapUsd})`,
    )
  }
  if (typeof minRedactionTier !== 'string')
    return invalid(`${name('requireRedactionTier', 'minRedactionTier')} must be a string (got ${shown(minRedactionTier)})`)
  if (typeof minSandboxProfile !== 'string')
    return invalid(`${name('requireSandboxProfile', 'minSandboxProfile')} must be a string (got ${shown(minSandboxProfile)})`)
  const { expectedIssuer, now, fetch, metrics } = options as { [K in keyof FetchPeerCardOptions]?: unknown }
  if (expectedIssuer !== undefined && typeof expectedIssuer !== 'string') return invalid(`expectedIssuer must be a string (got ${shown(expectedIssuer)})`)
  if (now !== undefined && (typeof now !== 'number' || !Number.isFinite(now))) return invalid(`now must be a finite number of Unix seconds (got ${shown(now)})`)
  if (fetch !== undefined && typeof fetch !== 'function') return invalid(`fetch must be a function (got ${shown(fetch)})`)
  if (metrics !== undefined && typeof (metrics as { signatureVerified?: unknown } | null)?.signatureVerified !== 'function') {
    return invalid('metrics must have a signatureVerified(kind, valid) method')
  }
  return ok({ trusted: trusted as string[], requirements: { maxCostCapUsd, minRedactionTier, minSandboxProfile } })
}

/**
 * Fetches a peer's signed capability card (`/.well-known/a2a-capability-card.json`) and decides whether you may
 * delegate to it: signature and expiry, a pinned key fingerprint, then your policy requirements (the same checks
 * as the server's own delegation, `consumePeerCard`, and the CLI's `delegate`). Refusals, and arguments that make
 * no sense, are data ({@link PeerCardFailure}); only a network failure throws.
 *
 * @example
 * const verdict = await fetchAndVerifyPeerCard('https://peer.example', {
 *   trustedFingerprints: ['sha256:c397…'],
 *   requireCostCapUsd: 20,
 *   requireRedactionTier: 'standard',
 *   requireSandboxProfile: 'container',
 * })
 * if (!verdict.ok) throw new Error(`not delegating: ${verdict.code}: ${verdict.detail}`)
 * console.log('trusted', verdict.value.card.card.issuer, verdict.value.fingerprint)
 */
export async function fetchAndVerifyPeerCard(baseUrl: string, options: FetchPeerCardOptions): Promise<PeerCardResult> {
  const checked = checkOptions(baseUrl, options)
  if (!checked.ok) return { ...checked, httpStatus: null }
  const { trusted, requirements } = checked.value
  const client = createApiClient({ baseUrl, ...(options.fetch && { fetch: options.fetch }), headers: { accept: 'application/json' } })
  const { data, response } = await client.GET('/.well-known/a2a-capability-card.json', { parseAs: 'text' })
  // The contract documents 200 alone; an empty 200 is a malformed card, not an HTTP failure.
  if (response.status !== 200) {
    return fail('http', `GET /.well-known/a2a-capability-card.json answered ${response.status}`, { httpStatus: response.status })
  }
  let signed: SignedCapabilityCard
  try {
    signed = parseCardFile(data ?? '')
  } catch (cause) {
    if (!(cause instanceof CapabilityCardInvalid)) throw cause
    return fail('malformed', cause.message, { httpStatus: response.status })
  }
  try {
    const accepted = await consumePeerCard(signed, {
      trustedIssuerFingerprints: trusted,
      requirements,
      ...(options.now !== undefined && { now: options.now }),
      ...(options.expectedIssuer !== undefined && { expectedIssuer: options.expectedIssuer }),
      ...(options.metrics !== undefined && { metrics: options.metrics }),
    })
    return ok(accepted)
  } catch (cause) {
    if (!(cause instanceof PeerCardRejected)) throw cause
    return fail(cause.code, cause.detail, { httpStatus: response.status })
  }
}
