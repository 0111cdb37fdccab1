/**
 * Detached compact JWS with Ed25519 (RFC 7515 Appendix F, RFC 8037): `b64url(JCS(header)) + ".." + b64url(sig)`,
 * the framing of Bernstein's capability cards (`a2a-capability+jws`) and v1.0 agent cards (`agent-card+jws`).
 *
 * The algorithm is pinned to jose's `EdDSA` on both sides; the protected header is always JCS, produced by the
 * same {@link jcsText} the verifier's callers use for the payload.
 *
 * @module
 */
import { type KeyObject, verify as nodeVerify } from 'node:crypto'
import { FlattenedSign } from 'jose'
import { jcsText } from '../canonical/jcs.js'
import { type Fail, type Result, fail, ok } from '../result.js'
import { decodeUtf8Strict } from '../text/utf8.js'
import { decodeBase64urlStrict, encodeBase64url } from './base64url.js'
import { assertEd25519KeyObject } from './ed25519.js'

/** The only JWS algorithm accepted or produced (jose's name for Ed25519, RFC 8037 §3.1). */
export const JWS_ALG = 'EdDSA'

/** A protected header; `alg` is always {@link JWS_ALG}. */
export interface JwsProtectedHeader {
  alg: typeof JWS_ALG
  kid?: string
  typ?: string
  [member: string]: unknown
}

/** Why a detached JWS was refused: bad framing, an algorithm other than EdDSA, or a signature that does not verify. */
export type DetachedJwsFailure = 'malformed' | 'unknown_alg' | 'signature'

/** A detached JWS split and decoded (not verified): the parsed header, both segments, the 64 signature bytes. */
export interface DecodedDetachedJws {
  readonly header: Record<string, unknown>
  readonly headerSegment: string
  readonly signatureSegment: string
  readonly signature: Uint8Array
}

export type DetachedJwsDecoded = Result<DecodedDetachedJws, 'malformed'>

/** The verified protected header, or why the JWS was refused. */
export type DetachedJwsVerification = Result<JwsProtectedHeader, DetachedJwsFailure>

/** A JCS Ed25519 header is about 100 characters; a header segment this long is refused unparsed. */
const MAX_HEADER_SEGMENT = 4096
/** base64url of a 64-byte Ed25519 signature. */
const SIGNATURE_SEGMENT_LENGTH = 86

/**
 * Signs `payload` and returns the detached compact JWS (empty middle segment).
 *
 * @throws TypeError when `header.alg` is not `EdDSA`, the header is not JCS-serialisable, or the key is not an
 *   Ed25519 private key.
 * @example await signDetachedJws(jcs(body), { alg: 'EdDSA', kid, typ: 'a2a-capability+jws' }, privateKey)
 */
export async function signDetachedJws(payload: Uint8Array, header: JwsProtectedHeader, privateKey: KeyObject): Promise<string> {
  assertEd25519KeyObject(privateKey, 'private')
  if (!(payload instanceof Uint8Array)) throw new TypeError('payload must be a Uint8Array')
  if (header?.alg !== JWS_ALG) throw new TypeError(`header.alg must be "${JWS_ALG}"`)
  const canonicalHeader = jcsText(header)
  const expectedSegment = encodeBase64url(new TextEncoder().encode(canonicalHeader))
  const jws = await new FlattenedSign(payload).setProtectedHeader(JSON.parse(canonicalHeader) as JwsProtectedHeader).sign(privateKey)
  // jose serialises the header with JSON.stringify; that equals JCS unless a member name looks like an array
  // index (JavaScript then reorders it). Refuse rather than emit a header the verifier side would not rebuild.
  if (jws.protected !== expectedSegment) throw new TypeError('header cannot be serialised canonically')
  return `${expectedSegment}..${jws.signature}`
}

/**
 * Splits a detached compact JWS and parses its protected header without verifying anything: exactly three
 * segments, an empty middle one, a header that is a base64url JSON object, a 64-byte base64url signature.
 * Never throws.
 */
export function decodeDetachedJws(jws: unknown): DetachedJwsDecoded {
  if (typeof jws !== 'string') return malformed('JWS must be a string')
  const firstDot = jws.indexOf('.')
  if (firstDot < 0 || firstDot > MAX_HEADER_SEGMENT) return malformed('JWS must have three segments')
  if (jws[firstDot + 1] !== '.') return malformed('JWS payload segment must be empty (detached)')
  const headerSegment = jws.slice(0, firstDot)
  const signatureSegment = jws.slice(firstDot + 2)
  if (signatureSegment.includes('.')) return malformed('JWS must have exactly three segments')
  const signature = signatureSegment.length === SIGNATURE_SEGMENT_LENGTH ? decodeBase64urlStrict(signatureSegment) : undefined
  if (signature === undefined) return malformed('JWS signature must be the base64url of 64 bytes')
  const headerBytes = decodeBase64urlStrict(headerSegment)
  if (!headerBytes || headerBytes.length === 0) return malformed('JWS protected header is not base64url')
  let header: unknown
  try {
    header = JSON.parse(decodeUtf8Strict(headerBytes, { dropBom: true }))
  } catch {
    return malformed('JWS protected header is not JSON')
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    return malformed('JWS protected header is not a JSON object')
  }
  return ok({ header: header as Record<string, unknown>, headerSegment, signatureSegment, signature })
}

/**
 * Verifies a detached compact JWS over `payload` with `publicKey`, allowing only `EdDSA`. Returns the parsed
 * protected header as `value` on success; bad data of any kind gives `{ ok: false, code, detail }`, never an exception. Callers
 * check `typ` and `kid` themselves.
 *
 * @throws TypeError only when `payload` is not a Uint8Array or `publicKey` is not an Ed25519 public key.
 */
export async function verifyDetachedJws(jws: unknown, payload: Uint8Array, publicKey: KeyObject): Promise<DetachedJwsVerification> {
  assertVerifyInputs(payload, publicKey)
  const decoded = decodeDetachedJws(jws)
  return decoded.ok ? verifyDecoded(decoded.value, payload, publicKey) : decoded
}

/**
 * {@link verifyDetachedJws} for a JWS the caller has already decoded with {@link decodeDetachedJws} (a capability
 * card's parser decodes it to compare `kid`s), so the segments are not split and decoded twice. Synchronous.
 *
 * @throws TypeError only when `payload` is not a Uint8Array or `publicKey` is not an Ed25519 public key.
 */
export function verifyDecodedDetachedJws(decoded: DecodedDetachedJws, payload: Uint8Array, publicKey: KeyObject): DetachedJwsVerification {
  assertVerifyInputs(payload, publicKey)
  return verifyDecoded(decoded, payload, publicKey)
}

function assertVerifyInputs(payload: Uint8Array, publicKey: KeyObject): void {
  assertEd25519KeyObject(publicKey, 'public')
  if (!(payload instanceof Uint8Array)) throw new TypeError('payload must be a Uint8Array')
}

/** The checks of both verifiers, once their inputs are asserted. */
function verifyDecoded(decoded: DecodedDetachedJws, payload: Uint8Array, publicKey: KeyObject): DetachedJwsVerification {
  const { header, headerSegment, signature } = decoded
  if (header['alg'] !== JWS_ALG) {
    return fail('unknown_alg', `JWS alg must be "${JWS_ALG}"`)
  }
  // RFC 7797 unencoded payloads would change the signing input; this framing never uses them.
  if ('b64' in header || 'crit' in header) return malformed('JWS header must not use "b64" or "crit"')
  // The algorithm is pinned above (EdDSA) and the key asserted Ed25519, so the JWS signing input (RFC 7515 §5.2:
  // ASCII(header segment '.' base64url(payload))) is checked with node:crypto directly: the same Ed25519
  // verification jose performs, without its asynchronous WebCrypto round trip (about half the cost of a card).
  let valid: boolean
  try {
    valid = nodeVerify(null, Buffer.from(`${headerSegment}.${encodeBase64url(payload)}`, 'ascii'), publicKey, signature)
  } catch {
    return malformed('JWS is invalid')
  }
  if (!valid) return fail('signature', 'JWS signature does not verify')
  return ok(header as JwsProtectedHeader)
}

function malformed(detail: string): Fail<'malformed'> {
  return fail('malformed', detail)
}
