/**
 * Equality of MACs, digests and secrets without an early exit: a comparison that stops at the first differing byte
 * tells a forger, by its timing, how much of a guess is right.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto'

/**
 * Whether `a` and `b` hold the same bytes (strings compared as UTF-8), in a time that depends on their length
 * only. Different lengths answer false at once, so the length is not hidden: compare digests of a secret whose
 * length matters (see `secretsEqual` in auth/operator-token.ts).
 *
 * @example constantTimeEqual(expectedHmacHex, presentedHmacHex)
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const x = typeof a === 'string' ? Buffer.from(a, 'utf8') : a
  const y = typeof b === 'string' ? Buffer.from(b, 'utf8') : b
  return x.length === y.length && timingSafeEqual(x, y)
}
