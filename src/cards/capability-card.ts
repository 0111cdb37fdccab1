/**
 * The capability card body (Bernstein §5.1), its parser, and the one canonicalisation both signing and
 * verification use.
 *
 * Field names are Bernstein's JSON names. Parsing is Bernstein's (`CapabilityCard.from_dict` and the messages of
 * its `ValueError`s) plus three stricter rules (§10 "do better"): `schema_version` must be `"1"`, unknown fields
 * are refused instead of silently dropped, and the JWS header `kid` must equal the body `kid`.
 *
 * @module
 */
import { jcsNumber, jcsString } from '../canonical/jcs.js'
import { pythonRepr } from '../canonical/python-json.js'
import type { Schema } from '../contract.js'
import { type DetachedJwsDecoded, decodeDetachedJws } from '../crypto/detached-jws.js'
import { keyFingerprint } from '../crypto/fingerprint.js'
import { TrustError } from '../errors.js'

/** Protected-header `typ` of a capability card, distinct from the agent card's `agent-card+jws` (§5.2). */
export const CAPABILITY_CARD_TYP = 'a2a-capability+jws'
export const CAPABILITY_CARD_SCHEMA_VERSION = '1'

/**
 * The signed body, exactly the ten fields Bernstein signs: `public_key_pem` is the SPKI PEM of the Ed25519 key that
 * signs the card, `created_at` and `expires_at` are Unix seconds (Python floats on disk; `expires_at` 0 never
 * expires). Wider than the contract's `CapabilityCardBody` in one field: the parser accepts only `"1"`, but signing
 * bytes and verification take any `schema_version`, so that a card changed after parsing fails verification.
 */
export type CapabilityCardBody = Omit<Schema<'CapabilityCardBody'>, 'schema_version'> & { schema_version: string }

/** `policies` of a card: what the issuer promises to enforce (`cost_cap_usd` in USD, a Python float on disk). */
export type CardPolicies = CapabilityCardBody['policies']

/**
 * A card with its detached JWS, as in the card file `{"alg", "card", "signature"}` (§5.3). Wider than the
 * contract's `SignedCapabilityCard`, which describes the card this node serves: a peer's card may name another
 * `alg`, which parsing keeps for the verifier to refuse, and its body is the wider {@link CapabilityCardBody}.
 */
export type SignedCapabilityCard = Omit<Schema<'SignedCapabilityCard'>, 'alg' | 'card'> & { alg: string; card: CapabilityCardBody }

/** `kid_mismatch`: well-formed, but the JWS header names another key than the body; `invalid_card`: the rest. */
export type CapabilityCardInvalidCode = 'invalid_card' | 'kid_mismatch'

/** A card that does not have the required shape; `message` is Bernstein's `ValueError` text where it has one. */
export class CapabilityCardInvalid extends TrustError<CapabilityCardInvalidCode> {
  override readonly name = 'CapabilityCardInvalid'

  constructor(message: string, code: CapabilityCardInvalidCode = 'invalid_card') {
    super(code, message)
  }
}

const BODY_FIELDS = [
  'schema_version',
  'issuer',
  'name',
  'description',
  'advertised_tools',
  'policies',
  'public_key_pem',
  'kid',
  'created_at',
  'expires_at',
] as const
const UTF8 = new TextEncoder()
const POLICY_FIELDS = ['cost_cap_usd', 'redaction_tier', 'sandbox_profile'] as const
const SIGNED_FIELDS = ['alg', 'card', 'signature'] as const

/**
 * Validates an untrusted body value and returns a fresh, typed body (nothing aliased to the input).
 *
 * @throws CapabilityCardInvalid with Bernstein's message for the first problem found.
 */
export function parseCapabilityCardBody(value: unknown): CapabilityCardBody {
  const body = requireObject(value, 'CapabilityCard must be an object')
  rejectUnknown(body, BODY_FIELDS, 'CapabilityCard')
  const schemaVersion = nonEmptyString(body, 'schema_version', 'CapabilityCard')
  if (schemaVersion !== CAPABILITY_CARD_SCHEMA_VERSION) {
    throw new CapabilityCardInvalid(`CapabilityCard 'schema_version' must be ${pythonRepr(CAPABILITY_CARD_SCHEMA_VERSION)}, got ${pythonRepr(schemaVersion)}`)
  }
  const issuer = nonEmptyString(body, 'issuer', 'CapabilityCard')
  const name = nonEmptyString(body, 'name', 'CapabilityCard')
  const description = body['description'] === undefined ? '' : body['description']
  if (typeof description !== 'string') throw new CapabilityCardInvalid("CapabilityCard 'description' must be a string")
  const tools = body['advertised_tools']
  if (!Array.isArray(tools) || !tools.every((tool) => typeof tool === 'string')) {
    throw new CapabilityCardInvalid("CapabilityCard 'advertised_tools' must be a list of strings")
  }
  const policies = parsePolicies(body['policies'])
  const publicKeyPem = nonEmptyString(body, 'public_key_pem', 'CapabilityCard')
  // Bernstein defaults a missing kid to a2a-<issuer> (§5.1).
  const kid = body['kid'] === undefined ? `a2a-${issuer}` : nonEmptyString(body, 'kid', 'CapabilityCard')
  const createdAt = finiteNumber(body, 'created_at', 'CapabilityCard')
  const expiresAt = finiteNumber(body, 'expires_at', 'CapabilityCard')
  return {
    schema_version: schemaVersion,
    issuer,
    name,
    description,
    advertised_tools: [...(tools as string[])],
    policies,
    public_key_pem: publicKeyPem,
    kid,
    created_at: createdAt,
    expires_at: expiresAt,
  }
}

/**
 * Validates an untrusted signed-card value `{alg?, card, signature}`. A missing `alg` defaults to `EdDSA` as in
 * Bernstein; a present one is kept for the verifier to judge. When the signature's header decodes, its `kid` must
 * equal the body's.
 *
 * @throws CapabilityCardInvalid
 */
export function parseCapabilityCard(value: unknown): SignedCapabilityCard {
  return parseCapabilityCardAndJws(value).signed
}

/**
 * {@link parseCapabilityCard}, also returning its decoding of the signature, which the verifier then checks
 * instead of splitting and decoding the JWS a second time.
 *
 * @throws CapabilityCardInvalid
 */
export function parseCapabilityCardAndJws(value: unknown): { signed: SignedCapabilityCard; jws: DetachedJwsDecoded } {
  const signed = requireObject(value, 'SignedCapabilityCard must be an object')
  rejectUnknown(signed, SIGNED_FIELDS, 'SignedCapabilityCard')
  const alg = signed['alg'] === undefined ? 'EdDSA' : signed['alg']
  if (typeof alg !== 'string') throw new CapabilityCardInvalid("SignedCapabilityCard 'alg' must be a string")
  const signature = nonEmptyString(signed, 'signature', 'SignedCapabilityCard')
  if (signed['card'] === undefined) throw new CapabilityCardInvalid("SignedCapabilityCard 'card' is required")
  const card = parseCapabilityCardBody(signed['card'])
  const decoded = decodeDetachedJws(signature)
  if (decoded.ok && decoded.value.header['kid'] !== card.kid) {
    throw new CapabilityCardInvalid(`SignedCapabilityCard signature header kid does not match the card kid ${pythonRepr(card.kid)}`, 'kid_mismatch')
  }
  return { signed: { alg, card, signature }, jws: decoded }
}

/**
 * The signed payload: JCS (RFC 8785) of exactly the ten body fields, built from the typed body so that fields a
 * caller added to the object can never slip into, or out of, the signed bytes. Issue and verify both call this.
 *
 * The shape is fixed, so the canonical text is written directly with the keys in JCS (UTF-16) order, each member
 * serialised by the same {@link jcsString}/{@link jcsNumber} as generic JCS: the same bytes as `jcs(body)` (a
 * property test compares them on arbitrary bodies) for a fifth of a card verification's cost.
 *
 * @throws TypeError when a string holds a lone surrogate or a number is not finite (never true of a parsed body).
 */
export function capabilityCardSigningBytes(body: CapabilityCardBody): Uint8Array {
  const { policies } = body
  const text =
    `{"advertised_tools":[${body.advertised_tools.map(jcsString).join(',')}]` +
    `,"created_at":${jcsNumber(body.created_at)}` +
    `,"description":${jcsString(body.description)}` +
    `,"expires_at":${jcsNumber(body.expires_at)}` +
    `,"issuer":${jcsString(body.issuer)}` +
    `,"kid":${jcsString(body.kid)}` +
    `,"name":${jcsString(body.name)}` +
    `,"policies":{"cost_cap_usd":${jcsNumber(policies.cost_cap_usd)}` +
    `,"redaction_tier":${jcsString(policies.redaction_tier)}` +
    `,"sandbox_profile":${jcsString(policies.sandbox_profile)}}` +
    `,"public_key_pem":${jcsString(body.public_key_pem)}` +
    `,"schema_version":${jcsString(body.schema_version)}}`
  return UTF8.encode(text)
}

/**
 * The card key's fingerprint (`sha256:` + hex of the raw Ed25519 key), what operators pin as a trusted issuer.
 *
 * @throws KeyRejected when `public_key_pem` is not an Ed25519 SPKI PEM.
 */
export function capabilityCardFingerprint(signed: SignedCapabilityCard): string {
  return keyFingerprint(signed.card.public_key_pem)
}

function parsePolicies(value: unknown): CardPolicies {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CapabilityCardInvalid("CapabilityCard 'policies' must be an object")
  }
  const policies = value as Record<string, unknown>
  rejectUnknown(policies, POLICY_FIELDS, 'CardPolicies')
  const cap = policies['cost_cap_usd']
  // JSON booleans are not numbers here, unlike Python where bool is an int subclass (Bernstein refuses them too).
  if (typeof cap !== 'number' || !Number.isFinite(cap)) {
    throw new CapabilityCardInvalid("CardPolicies 'cost_cap_usd' must be a number")
  }
  if (cap < 0) throw new CapabilityCardInvalid("CardPolicies 'cost_cap_usd' must be non-negative")
  return {
    cost_cap_usd: cap,
    redaction_tier: nonEmptyString(policies, 'redaction_tier', 'CardPolicies'),
    sandbox_profile: nonEmptyString(policies, 'sandbox_profile', 'CardPolicies'),
  }
}

function requireObject(value: unknown, message: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CapabilityCardInvalid(message)
  return value as Record<string, unknown>
}

function rejectUnknown(object: Record<string, unknown>, known: readonly string[], owner: string): void {
  const unknown = Object.keys(object).filter((key) => !known.includes(key))
  if (unknown.length > 0) {
    throw new CapabilityCardInvalid(
      `${owner} has unknown field(s): ${unknown
        .sort()
        .map((key) => pythonRepr(key))
        .join(', ')}`,
    )
  }
}

function nonEmptyString(object: Record<string, unknown>, key: string, owner: string): string {
  const value = object[key]
  if (typeof value !== 'string' || value === '') {
    throw new CapabilityCardInvalid(`${owner} '${key}' must be a non-empty string`)
  }
  return value
}

function finiteNumber(object: Record<string, unknown>, key: string, owner: string): number {
  const value = object[key]
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new CapabilityCardInvalid(`${owner} '${key}' must be a number`)
  }
  return value
}
