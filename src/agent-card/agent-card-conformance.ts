/**
 * Checks on an inbound v1.0 agent card (Bernstein `check_agent_card_v1_conformance` /
 * `verify_inbound_agent_card_v1`, §6.4), in Bernstein's order, each with a stable reason code.
 *
 * @module
 */
import { jcs, jcsText } from '../canonical/jcs.js'
import { decodeDetachedJws, JWS_ALG, verifyDetachedJws } from '../crypto/detached-jws.js'
import { encodeBase64url } from '../crypto/base64url.js'
import { keyFingerprint } from '../crypto/fingerprint.js'
import { findJwk } from '../crypto/jwks.js'
import { decodeUtf8Strict } from '../text/utf8.js'
import type { KeyObject } from 'node:crypto'
import { AGENT_CARD_TYP, agentCardSigningBytes } from './sign-agent-card.js'

/** Why a card is refused; the reason of the first failing check. */
export type AgentCardRejection =
  | 'required_fields'
  | 'missing_kid'
  | 'malformed'
  | 'unknown_alg'
  | 'unresolvable_jwks'
  | 'signature'
  | 'expired'
  | 'untrusted_issuer'

export type AgentCardCheckName =
  | 'required_v1_fields'
  | 'signatures_present'
  | 'jcs_canonical'
  | 'jws_header'
  | 'kid_resolves'
  | 'signature'
  | 'expiry'
  | 'trusted_issuer'

/** `skip`: not evaluated because an earlier check it depends on failed (e.g. no key resolved, so no signature). */
export interface AgentCardCheck {
  name: AgentCardCheckName
  outcome: 'pass' | 'fail' | 'skip'
  detail: string
  /** Set when `outcome` is `fail`. */
  reason?: AgentCardRejection
}

export interface AgentCardConformanceReport {
  /** True only when every check passed (a skipped check is never a pass). */
  ok: boolean
  reason: AgentCardRejection | null
  /** kid and key fingerprint of the first signature entry, when they can be read. */
  kid: string | null
  fingerprint: string | null
  checks: AgentCardCheck[]
}

export interface AgentCardConformanceOptions {
  /** Unix seconds. */
  now: number
  /**
   * Fingerprints (`sha256:…`) of trusted card keys. When given (even empty), a `trusted_issuer` check is added and
   * every signing key must be in the set; when omitted the report covers conformance only, not trust.
   */
  trustedFingerprints?: Iterable<string>
}

interface Entry {
  kid: string
  alg: string
  typ: string
  jws: string
}

/** A served card is a few kilobytes; larger inputs are refused unparsed. */
const MAX_CARD_BYTES = 1024 * 1024

/**
 * Runs the §6.4 checks: `required_v1_fields`, `signatures_present`, `jcs_canonical`, `jws_header`,
 * `kid_resolves`, `signature`, `expiry`, then `trusted_issuer` when a trust set is given. Every signature entry
 * must pass. The signature is verified against the header the entry should have
 * (`{"alg":"EdDSA","kid":<kid>,"typ":"agent-card+jws"}` in JCS), so a JWS signed under any other header fails
 * `signature` as well as `jws_header`.
 *
 * `card` is the parsed card, or its raw bytes/text; raw input must also be byte-identical to its own JCS form.
 * Never throws on bad data.
 *
 * @example const report = await checkAgentCardConformance(cardBytes, jwks, { now, trustedFingerprints: [fp] })
 */
export async function checkAgentCardConformance(
  card: unknown,
  jwks: unknown,
  { now, trustedFingerprints }: AgentCardConformanceOptions,
): Promise<AgentCardConformanceReport> {
  if (typeof now !== 'number' || Number.isNaN(now)) throw new TypeError('now must be a number of Unix seconds')
  const checks: AgentCardCheck[] = []
  const pass = (name: AgentCardCheckName, detail: string): void => void checks.push({ name, outcome: 'pass', detail })
  const fail = (name: AgentCardCheckName, reason: AgentCardRejection, detail: string): void => void checks.push({ name, outcome: 'fail', detail, reason })
  const skip = (name: AgentCardCheckName, detail: string): void => void checks.push({ name, outcome: 'skip', detail })

  const decoded = decodeCard(card)
  const value = decoded.value
  const body = isObject(value) ? value : {}

  // 1. required_v1_fields
  const missing = requiredFieldProblems(body)
  if (decoded.error) fail('required_v1_fields', 'required_fields', decoded.error)
  else if (missing.length > 0) fail('required_v1_fields', 'required_fields', missing.join('; '))
  else pass('required_v1_fields', 'protocolVersion 1.0 with name, url, supportedInterfaces and securitySchemes')

  // 2. signatures_present
  const entries = readEntries(body['signatures'])
  if (!entries.ok) fail('signatures_present', entries.reason, entries.detail)
  else pass('signatures_present', `${entries.entries.length} signature entr${entries.entries.length === 1 ? 'y' : 'ies'}`)

  // 3. jcs_canonical
  let signingBytes: Uint8Array | undefined
  if (decoded.error === undefined && isObject(value)) {
    try {
      signingBytes = agentCardSigningBytes(value)
      if (decoded.raw !== undefined && jcsText(value) !== decoded.raw) {
        fail('jcs_canonical', 'malformed', 'card bytes are not their own RFC 8785 JCS form')
      } else pass('jcs_canonical', 'body re-canonicalises under RFC 8785 JCS')
    } catch (error) {
      fail('jcs_canonical', 'malformed', `body does not canonicalise: ${(error as Error).message}`)
    }
  } else skip('jcs_canonical', 'not checked: the card is not a JSON object')

  const list = entries.ok ? entries.entries : []
  const firstKid = list[0]?.kid ?? null

  // 4. jws_header
  if (!entries.ok) skip('jws_header', 'not checked: no usable signature entries')
  else {
    const problem = list.map(headerProblem).find((p) => p !== undefined)
    if (problem) fail('jws_header', problem.reason, problem.detail)
    else pass('jws_header', `EdDSA, ${AGENT_CARD_TYP}, header kid matches the entry kid`)
  }

  // 5. kid_resolves (one resolved key per entry, in entry order)
  const keys: Array<KeyObject | undefined> = []
  if (!entries.ok) skip('kid_resolves', 'not checked: no usable signature entries')
  else {
    const unresolved: string[] = []
    for (const entry of list) {
      const found = findJwk(jwks, entry.kid)
      keys.push(found.ok ? found.value.publicKey : undefined)
      if (!found.ok) unresolved.push(found.detail)
    }
    if (unresolved.length > 0) fail('kid_resolves', 'unresolvable_jwks', unresolved.join('; '))
    else pass('kid_resolves', 'every signature kid is in the JWKS')
  }

  // 6. signature
  if (!entries.ok || keys.some((key) => key === undefined) || signingBytes === undefined) {
    skip('signature', 'not checked: no key or no canonical body to verify against')
  } else {
    let failure: string | undefined
    for (const [index, entry] of list.entries()) {
      const jws = expectedJws(entry)
      const key = keys[index] as KeyObject
      const result = jws === undefined ? undefined : await verifyDetachedJws(jws, signingBytes, key)
      if (!result?.ok) {
        failure = `signature of kid ${JSON.stringify(entry.kid)} does not verify over the JCS body`
        break
      }
    }
    if (failure) fail('signature', 'signature', failure)
    else pass('signature', `detached Ed25519 JWS verifies (${AGENT_CARD_TYP})`)
  }

  // 7. expiry
  const expiresAt = body['expiresAt'] !== undefined ? body['expiresAt'] : body['expires_at']
  if (expiresAt === undefined) pass('expiry', 'card carries no expiry')
  else if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) fail('expiry', 'malformed', 'expiresAt is not a number')
  else if (expiresAt > 0 && now > expiresAt) fail('expiry', 'expired', `card expired at ${expiresAt}`)
  else pass('expiry', expiresAt > 0 ? `card is valid until ${expiresAt}` : 'card does not expire')

  // Trust (only when a trust set is supplied)
  const fingerprints = keys.map((key) => (key ? keyFingerprint(key) : undefined))
  if (trustedFingerprints !== undefined) {
    const trusted = new Set(trustedFingerprints)
    if (!entries.ok || fingerprints.some((fp) => fp === undefined)) skip('trusted_issuer', 'not checked: signing key not resolved')
    else {
      const untrusted = fingerprints.find((fp) => !trusted.has(fp as string))
      if (untrusted) fail('trusted_issuer', 'untrusted_issuer', `card key fingerprint ${untrusted} is not in the trusted-issuer set`)
      else pass('trusted_issuer', 'every signing key is trusted')
    }
  }

  const firstFailure = checks.find((check) => check.outcome === 'fail')
  return {
    // Fail closed: a skipped check is not a pass, even if no check reported a failure.
    ok: checks.every((check) => check.outcome === 'pass'),
    reason: firstFailure?.reason ?? null,
    kid: firstKid,
    fingerprint: fingerprints[0] ?? null,
    checks,
  }
}

function decodeCard(card: unknown): { value: unknown; raw?: string; error?: string } {
  if (typeof card !== 'string' && !(card instanceof Uint8Array)) return { value: card }
  if (card.length > MAX_CARD_BYTES) return { value: undefined, error: 'card is larger than 1 MiB' }
  let raw: string
  try {
    raw = typeof card === 'string' ? card : decodeUtf8Strict(card, { dropBom: true })
  } catch {
    return { value: undefined, error: 'card is not UTF-8' }
  }
  try {
    return { value: JSON.parse(raw) as unknown, raw }
  } catch {
    return { value: undefined, raw, error: 'card is not JSON' }
  }
}

function requiredFieldProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = []
  if (body['protocolVersion'] !== '1.0') problems.push('protocolVersion must be "1.0"')
  if (!nonEmptyString(body['name'])) problems.push('name must be a non-empty string')
  if (!nonEmptyString(body['url'])) problems.push('url must be a non-empty string')
  for (const key of ['supportedInterfaces', 'securitySchemes']) {
    const list = body[key]
    if (!Array.isArray(list) || list.length === 0) problems.push(`${key} must be a non-empty list`)
  }
  return problems
}

type EntriesResult = { ok: true; entries: Entry[] } | { ok: false; reason: 'missing_kid' | 'malformed'; detail: string }

function readEntries(signatures: unknown): EntriesResult {
  if (!Array.isArray(signatures) || signatures.length === 0) {
    return { ok: false, reason: 'malformed', detail: 'signatures must be a non-empty list' }
  }
  const entries: Entry[] = []
  for (const [index, entry] of signatures.entries()) {
    if (!isObject(entry)) return { ok: false, reason: 'malformed', detail: `signatures[${index}] is not an object` }
    if (!nonEmptyString(entry['kid'])) return { ok: false, reason: 'missing_kid', detail: `signatures[${index}] has no kid` }
    for (const key of ['alg', 'typ', 'jws'] as const) {
      if (!nonEmptyString(entry[key])) return { ok: false, reason: 'malformed', detail: `signatures[${index}] has no ${key}` }
    }
    entries.push({ kid: entry['kid'] as string, alg: entry['alg'] as string, typ: entry['typ'] as string, jws: entry['jws'] as string })
  }
  return { ok: true, entries }
}

function headerProblem(entry: Entry): { reason: AgentCardRejection; detail: string } | undefined {
  if (entry.alg !== JWS_ALG) return { reason: 'unknown_alg', detail: `entry alg ${JSON.stringify(entry.alg)} is not EdDSA` }
  const decoded = decodeDetachedJws(entry.jws)
  if (!decoded.ok) return { reason: 'malformed', detail: `kid ${JSON.stringify(entry.kid)}: ${decoded.detail}` }
  const { header } = decoded.value
  if (header['alg'] !== JWS_ALG) return { reason: 'unknown_alg', detail: `JWS alg ${JSON.stringify(header['alg'])} is not EdDSA` }
  if (header['typ'] !== AGENT_CARD_TYP || entry.typ !== AGENT_CARD_TYP) {
    return { reason: 'malformed', detail: `JWS typ ${JSON.stringify(header['typ'])} is not ${AGENT_CARD_TYP}` }
  }
  if (header['kid'] !== entry.kid) return { reason: 'malformed', detail: 'JWS header kid does not match the entry kid' }
  return undefined
}

/** The entry's signature under the header it must have, so that any other header fails verification. */
function expectedJws(entry: Entry): string | undefined {
  const decoded = decodeDetachedJws(entry.jws)
  if (!decoded.ok) return undefined
  const header = encodeBase64url(jcs({ alg: JWS_ALG, kid: entry.kid, typ: AGENT_CARD_TYP }))
  return `${header}..${decoded.value.signatureSegment}`
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value !== ''
}
