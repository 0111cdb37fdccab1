/**
 * The one error thrown when key material from outside (a PEM, a JWK, raw bytes) cannot be used.
 *
 * @module
 */

/** Stable reasons; callers branch on `code`, never on the message. */
export type KeyRejectedCode = 'malformed_key' | 'not_ed25519' | 'wrong_key_type'

/**
 * Bad key data: unparseable, not Ed25519, or a private key where a public one was expected (or the reverse).
 * Programmer misuse (passing a number instead of a PEM string) is a TypeError instead.
 */
export class KeyRejected extends Error {
  readonly code: KeyRejectedCode

  constructor(code: KeyRejectedCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'KeyRejected'
    this.code = code
  }
}
