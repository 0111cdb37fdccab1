/**
 * Bernstein's content address: `"sha256:" + hex(SHA-256(data))`, for entry hashes, content hashes, chain digests
 * and key fingerprints alike.
 *
 * @module
 */
import { createHash } from 'node:crypto'

/**
 * `"sha256:"` followed by the lowercase hex SHA-256 of `data` (a string is hashed as UTF-8). Given several parts,
 * it hashes them in order as one message, without joining them first.
 *
 * @example sha256Prefixed('') // 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
 */
export function sha256Prefixed(data: Uint8Array | string | Iterable<Uint8Array | string>): string {
  const hash = createHash('sha256')
  if (typeof data === 'string' || data instanceof Uint8Array) hash.update(data)
  else for (const part of data) hash.update(part)
  return 'sha256:' + hash.digest('hex')
}
