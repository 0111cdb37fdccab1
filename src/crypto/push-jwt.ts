/**
 * The signature of an A2A v1.0 push delivery: a compact JWT (RFC 7519) signed with Ed25519 by one of the node's
 * published keys (`kid` in its JWKS, `jku` pointing there), carried in the `A2A-Notification-Signature` header. It
 * binds the exact body bytes (`request_body_sha256`, hex, as the A2A samples' push authentication does), the
 * receiver's URL (`aud`), the task (`taskId`) and the delivery (`jti`, the same on every retry, for de-duplication),
 * and expires (`exp`) so a captured delivery cannot be replayed later.
 *
 * @module
 */
import { createHash, type KeyObject } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import { type Result, fail, ok } from '../result.js'
import { assertEd25519KeyObject } from './ed25519.js'
import { findJwk } from './jwks.js'

/** The `typ` of a delivery's JWT. */
export const PUSH_JWT_TYPE = 'JWT'

export interface PushJwtClaims {
  /** The node (its public base URL). */
  readonly iss: string
  /** The receiver's URL, as configured. */
  readonly aud: string
  /** The delivery id: the same for every attempt of one delivery. */
  readonly jti: string
  readonly taskId: string
  /** Seconds since the epoch. */
  readonly iat: number
  readonly exp: number
  /** Lowercase hex SHA-256 of the body bytes. */
  readonly request_body_sha256: string
}

export function bodySha256Hex(body: Uint8Array | string): string {
  return createHash('sha256').update(body).digest('hex')
}

/** Signs a delivery of `body` (exact bytes sent). */
export async function signPushJwt(
  body: string,
  claims: Omit<PushJwtClaims, 'request_body_sha256'>,
  key: { readonly kid: string; readonly privateKey: KeyObject },
  jku: string,
): Promise<string> {
  assertEd25519KeyObject(key.privateKey, 'private')
  return new SignJWT({ taskId: claims.taskId, request_body_sha256: bodySha256Hex(body) })
    .setProtectedHeader({ alg: 'EdDSA', typ: PUSH_JWT_TYPE, kid: key.kid, jku })
    .setIssuer(claims.iss)
    .setAudience(claims.aud)
    .setJti(claims.jti)
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .sign(key.privateKey)
}

export type PushJwtFailure = 'malformed' | 'unknown_kid' | 'signature' | 'body_mismatch' | 'claims'

/**
 * What a receiver does: finds the JWT's `kid` in the sender's JWKS, verifies the signature (EdDSA only), the
 * expiry at `nowSeconds` (±`toleranceSeconds`), the audience when given, and that the body it received hashes to
 * `request_body_sha256`. Never throws.
 */
export async function verifyPushJwt(
  jwt: string,
  body: Uint8Array | string,
  jwks: unknown,
  options: { readonly nowSeconds: number; readonly audience?: string; readonly toleranceSeconds?: number },
): Promise<Result<PushJwtClaims, PushJwtFailure>> {
  const header = decodeHeader(jwt)
  if (header === undefined || typeof header['kid'] !== 'string') return fail('malformed', 'not a compact JWS with a kid')
  const found = findJwk(jwks, header['kid'])
  if (!found.ok) return fail('unknown_kid', found.detail)
  let payload: Record<string, unknown>
  try {
    const verified = await jwtVerify(jwt, found.value.publicKey, {
      algorithms: ['EdDSA'],
      currentDate: new Date(options.nowSeconds * 1000),
      clockTolerance: options.toleranceSeconds ?? 30,
      ...(options.audience !== undefined && { audience: options.audience }),
    })
    payload = verified.payload as Record<string, unknown>
  } catch (error) {
    const code = (error as { code?: unknown }).code
    return code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' ? fail('signature', 'signature does not verify') : fail('claims', String((error as Error).message))
  }
  if (payload['request_body_sha256'] !== bodySha256Hex(body)) return fail('body_mismatch', 'the body is not the one signed')
  return ok(payload as unknown as PushJwtClaims)
}

function decodeHeader(jwt: string): Record<string, unknown> | undefined {
  const segment = jwt.split('.')[0]
  if (segment === undefined || jwt.split('.').length !== 3) return undefined
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
