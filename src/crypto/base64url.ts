/**
 * base64url without padding (RFC 4648 §5), as JWS uses it (RFC 7515 §2).
 *
 * @module
 */

const BASE64URL_ALPHABET = /^[A-Za-z0-9_-]*$/

/** base64url of `bytes`, unpadded. */
export function encodeBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')
}

/**
 * Strict base64url decoding: only the alphabet, no padding, and canonical (the unused low bits of the last
 * character are zero), so one byte string has exactly one spelling. Node's own decoder silently skips junk, which
 * would make signatures malleable as text. Returns `undefined` for anything else.
 */
export function decodeBase64urlStrict(text: string): Uint8Array | undefined {
  if (!BASE64URL_ALPHABET.test(text)) return undefined
  const bytes = Buffer.from(text, 'base64url')
  if (bytes.toString('base64url') !== text) return undefined
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
