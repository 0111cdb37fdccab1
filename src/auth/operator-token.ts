import { hash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { constantTimeEqual } from '../crypto/constant-time.js'
import { readOrCreateSecretFile } from './secret-file.js'

export interface OperatorToken {
  readonly token: string
  /** Where the generated token lives, or null when it came from `BERNSTEIN_AUTH_TOKEN`. */
  readonly file: string | null
  readonly created: boolean
}

/** The operator token: the configured one, else the one generated at first start in the data dir. */
export function resolveOperatorToken(configured: string | null, dataDir: string): OperatorToken {
  if (configured !== null) return { token: configured, file: null, created: false }
  const file = join(dataDir, 'auth.token')
  const { value, created } = readOrCreateSecretFile(file, () => randomBytes(32).toString('base64url'))
  return { token: value, file, created }
}

/** One-shot `crypto.hash` (Node ≥ 20.12): a few times cheaper than a `createHash` object for a token this short. */
const digest = (value: string): Buffer => hash('sha256', value, 'buffer')

/**
 * Constant-time comparison of two secrets. Hashing first gives equal-length inputs to {@link constantTimeEqual},
 * so the comparison time does not reveal the secret's length either.
 */
export function secretsEqual(a: string, b: string): boolean {
  return constantTimeEqual(digest(a), digest(b))
}

/**
 * {@link secretsEqual} against one fixed secret, for every request: one comparison of the secret's length in
 * constant time, against the secret itself when the lengths differ, so the time depends on the presented token's
 * own length and never on the secret's content or length. No digest per request: hashing the token went through
 * OpenSSL's digest lookup, ~12 µs per request in a running server against ~2 µs in a loop.
 */
export function secretMatcher(secret: string): (presented: string) => boolean {
  const expected = Buffer.from(secret, 'utf8')
  return (presented) => {
    const bytes = Buffer.from(presented, 'utf8')
    const sameLength = bytes.length === expected.length
    return constantTimeEqual(sameLength ? bytes : expected, expected) && sameLength
  }
}
