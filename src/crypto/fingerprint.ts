/**
 * Key fingerprints as Bernstein writes them: `sha256:` + lowercase hex SHA-256 of the raw 32-byte Ed25519 public
 * key. Hashing the raw key (not the PEM text) keeps the value stable across PEM whitespace and JWK/PEM forms.
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import { rawPublicKey } from './ed25519.js'
import type { Ed25519PublicJwk } from './ed25519.js'
import { sha256Prefixed } from './sha256-prefixed.js'

/**
 * Fingerprint of a public key given as SPKI PEM, public JWK or `KeyObject` (a private key gives its public half's).
 *
 * @throws KeyRejected for malformed or non-Ed25519 key input.
 * @example
 * const signed = parseCardFile(readFileSync('card.json', 'utf8'))
 * console.log(keyFingerprint(signed.card.public_key_pem)) // 'sha256:10ba682c…', what peers pin
 */
export function keyFingerprint(key: KeyObject | string | Ed25519PublicJwk): string {
  return sha256Prefixed(rawPublicKey(key))
}
