import { AppError } from '../errors.js'

/**
 * How long a client is asked to wait after a storage fault (`Retry-After`), and how long readiness stays red after
 * the last one unless a write commits first.
 */
export const STORAGE_RETRY_AFTER_S = 5

/**
 * The database is there but cannot keep what it is given: the disk is full, an I/O error, or the storage is
 * read-only. An `AppError('storage_unavailable')`: 503 with `Retry-After`, a `detail` that says storage is
 * unavailable and why in a few words (never a path or an address); the driver's error stays in `cause` for the log.
 * The transaction that met it was rolled back: nothing of the request was written.
 */
export class StorageUnavailable extends AppError {
  readonly reason: string

  constructor(reason: string, cause: unknown) {
    super('storage_unavailable', `Storage unavailable (${reason}): nothing was written, retry later`, {
      cause,
      headers: { 'Retry-After': String(STORAGE_RETRY_AFTER_S) },
    })
    this.reason = reason
  }
}

/** SQLite result codes (better-sqlite3's `code`, extended codes included) that mean the storage cannot take writes. */
const SQLITE_REASON: readonly (readonly [RegExp, string])[] = [
  [/^SQLITE_FULL$/, 'disk full'],
  [/^SQLITE_IOERR(_|$)/, 'I/O error'],
  [/^SQLITE_READONLY(_|$)/, 'read-only storage'],
]

/** PostgreSQL SQLSTATEs of the same kind. 53300 (too many connections) is a connection problem, not storage. */
const SQLSTATE_REASON: Readonly<Record<string, string>> = {
  '53100': 'disk full',
  '58030': 'I/O error',
  '25006': 'read-only storage',
  '53200': 'out of memory',
  '53400': 'configuration limit exceeded',
}

/** Why `error` is a storage fault, in a few words; undefined when it is something else (a bug, a constraint, an outage). */
export function storageFaultReason(error: unknown): string | undefined {
  if (error instanceof StorageUnavailable) return error.reason
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { code?: unknown }).code
  if (typeof code !== 'string') return undefined
  if (code.startsWith('SQLITE_')) {
    for (const [pattern, reason] of SQLITE_REASON) if (pattern.test(code)) return reason
    return undefined
  }
  const reason = SQLSTATE_REASON[code]
  if (reason !== undefined) return reason
  if (/^53[0-9A-Z]{3}$/.test(code) && code !== '53300') return `insufficient resources (${code})`
  return undefined
}

/** `error` as a `StorageUnavailable` when it is a storage fault, else undefined. */
export function asStorageFault(error: unknown): StorageUnavailable | undefined {
  if (error instanceof StorageUnavailable) return error
  const reason = storageFaultReason(error)
  return reason === undefined ? undefined : new StorageUnavailable(reason, error)
}

/** Told the reason of each storage fault a transaction meets. */
export type StorageObserver = (reason: string) => void
