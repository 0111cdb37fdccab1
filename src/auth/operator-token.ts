import { hash, randomBytes, timingSafeEqual } from 'node:crypto'
import { join } from 'node:path'
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
 * Constant-time comparison of two secrets. Hashing first gives equal-length inputs to `timingSafeEqual`, so the
 * comparison time does not reveal the secret's length either.
 */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b))
}

/** {@link secretsEqual} against one fixed secret, whose digest is computed once rather than on every request. */
export function secretMatcher(secret: string): (presented: string) => boolean {
  const expected = digest(secret)
  return (presented) => timingSafeEqual(digest(presented), expected)
}
