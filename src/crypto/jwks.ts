/**
 * JWKS entries for Ed25519 verification keys (RFC 7517 §5) and lookup by `kid`.
 *
 * Entries have Bernstein's shape `{kty:"OKP",crv:"Ed25519",alg:"EdDSA",use:"sig",kid,x}` (§6.3).
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import type { Schema } from '../contract.js'
import { type Result, fail, ok } from '../result.js'
import { exportPublicJwk, publicKeyFromJwk } from './ed25519.js'
import { KeyRejected } from './key-rejected.js'

export type JwksKey = Schema<'Jwk'>
export type Jwks = Schema<'Jwks'>

/** The key found: its normalised JWK entry and the usable public key. */
export interface JwksMatch {
  readonly jwk: JwksKey
  readonly publicKey: KeyObject
}

export type JwksLookupFailure = 'malformed_jwks' | 'unknown_kid' | 'unusable_key'
export type JwksLookup = Result<JwksMatch, JwksLookupFailure>

/** Real key sets hold a handful of keys; a larger one is treated as malformed rather than scanned. */
const MAX_JWKS_KEYS = 1000

/**
 * The JWKS entry publishing `key` (a private key publishes its public half) under `kid`.
 *
 * @example { keys: [jwksEntry(current, 'agent-bernstein-orchestrator')] }
 */
export function jwksEntry(key: KeyObject, kid: string): JwksKey {
  if (typeof kid !== 'string' || kid === '') throw new TypeError('kid must be a non-empty string')
  const { x } = exportPublicJwk(key)
  return { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid, x }
}

/**
 * Finds the key with `kid` in an untrusted JWKS document. The entry must be an Ed25519 signing key: `alg`, when
 * present, must be `EdDSA` and `use`, when present, `sig`. Never throws.
 */
export function findJwk(jwks: unknown, kid: string): JwksLookup {
  if (typeof jwks !== 'object' || jwks === null) return fail('malformed_jwks', 'JWKS is not an object')
  const keys = (jwks as { keys?: unknown }).keys
  if (!Array.isArray(keys) || keys.length > MAX_JWKS_KEYS) {
    return fail('malformed_jwks', 'JWKS "keys" is not a list')
  }
  const entry: unknown = keys.find((candidate: unknown) => typeof candidate === 'object' && candidate !== null && (candidate as { kid?: unknown }).kid === kid)
  if (entry === undefined) return fail('unknown_kid', `kid ${JSON.stringify(kid)} is not in the JWKS`)
  const { alg, use, x } = entry as Record<string, unknown>
  if ((alg !== undefined && alg !== 'EdDSA') || (use !== undefined && use !== 'sig')) {
    return fail('unusable_key', `JWK ${JSON.stringify(kid)} is not an EdDSA signing key`)
  }
  try {
    const publicKey = publicKeyFromJwk(entry)
    return ok({ publicKey, jwk: { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid, x: x as string } })
  } catch (error) {
    if (!(error instanceof KeyRejected)) throw error
    return fail('unusable_key', `JWK ${JSON.stringify(kid)}: ${error.message}`)
  }
}
