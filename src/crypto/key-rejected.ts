/**
 * The one error thrown when key material from outside (a PEM, a JWK, raw bytes) cannot be used.
 *
 * @module
 */
import { TrustError } from '../errors.js'

/** Stable reasons; callers branch on `code`, never on the message. */
export type KeyRejectedCode = 'malformed_key' | 'not_ed25519' | 'wrong_key_type'

/**
 * Bad key data: unparseable, not Ed25519, or a private key where a public one was expected (or the reverse).
 * Programmer misuse (passing a number instead of a PEM string) is a TypeError instead.
 */
export class KeyRejected extends TrustError<KeyRejectedCode> {
  override readonly name = 'KeyRejected'
}
