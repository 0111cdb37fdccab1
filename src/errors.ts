import type { CapabilityCardInvalidCode } from './cards/capability-card.js'
import type { PeerCardRejection } from './cards/consume-peer-card.js'
import type { Schema } from './contract.js'
import type { InsecureKeyFileCode } from './crypto/key-files.js'
import type { KeyRejectedCode } from './crypto/key-rejected.js'
import type { AuditKeyErrorCode } from './lineage/audit-key.js'

/**
 * Errors are data: a stable `code` callers branch on, the `detail` text clients see, and optional extra fields.
 * HTTP statuses for these codes live in one place, `src/http/problem.ts`; the domain never names a status.
 * {@link AppError} is what the HTTP layer answers with; {@link TrustError} is what the trust primitives throw.
 */
export type ErrorCode =
  | 'task_not_found'
  | 'a2a_task_not_found'
  | 'illegal_transition'
  | 'version_conflict'
  | 'invalid_request'
  | 'rejected'
  /** A federated delivery reused a remote task id (its idempotency key) with a different task. */
  | 'delivery_conflict'
  | 'validation_failed'
  | 'unauthenticated'
  | 'forbidden'
  | 'rate_limited'
  | 'payload_too_large'
  /** Refused by Node's HTTP parser before the app sees the request (answered by `http/client-errors.ts`). */
  | 'header_fields_too_large'
  /** The header block or the whole request did not arrive in time (BERNSTEIN_HTTP_*_TIMEOUT_MS; `http/client-errors.ts`). */
  | 'request_timeout'
  | 'unsupported_media_type'
  | 'not_found'
  | 'method_not_allowed'
  | 'expectation_failed'
  | 'unavailable'
  /** The database cannot keep writes (disk full, I/O error, read-only storage): 503 with Retry-After. */
  | 'storage_unavailable'
  | 'internal'

/** One FastAPI-style validation item `{loc, msg, type}`: the contract's `ValidationError` without its optional `input` and `ctx`. */
export type ValidationIssue = Readonly<Pick<Schema<'ValidationError'>, 'msg' | 'type'>> & { readonly loc: Readonly<Schema<'ValidationError'>['loc']> }

export interface AppErrorOptions {
  /** Extra top-level body fields (e.g. `bucket`, `required_permission`). */
  readonly extra?: Readonly<Record<string, unknown>>
  readonly headers?: Readonly<Record<string, string>>
  readonly issues?: readonly ValidationIssue[]
  readonly cause?: unknown
}

export class AppError extends Error {
  override readonly name = 'AppError'
  readonly code: ErrorCode
  readonly extra: Readonly<Record<string, unknown>>
  readonly headers: Readonly<Record<string, string>>
  readonly issues: readonly ValidationIssue[]

  constructor(code: ErrorCode, detail: string, options: AppErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.extra = options.extra ?? {}
    this.headers = options.headers ?? {}
    this.issues = options.issues ?? []
  }
}

export const taskNotFound = (id: string): AppError => new AppError('task_not_found', `Task '${id}' not found`)
export const a2aTaskNotFound = (id: string): AppError => new AppError('a2a_task_not_found', `A2A task '${id}' not found`)

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError
}

/** Every {@link TrustError} code; each subclass owns a disjoint part, so `switch (error.code)` tells them apart. */
export type TrustErrorCode = KeyRejectedCode | InsecureKeyFileCode | CapabilityCardInvalidCode | PeerCardRejection | AuditKeyErrorCode

/**
 * The base of every error thrown for trust data that cannot be used (a key, a key file, a capability card, a peer's
 * card, the audit key), as jose's `JOSEError` is of its errors: catch `TrustError` and branch on `code`. Errors of
 * the caller's own making (a number where a PEM belongs) are TypeErrors instead.
 *
 * @example
 * try {
 *   await consumePeerCard(card, { trustedIssuerFingerprints, requirements })
 * } catch (error) {
 *   if (!(error instanceof TrustError)) throw error
 *   if (error.code === 'untrusted_issuer') console.error('pin the peer first:', error.message)
 * }
 */
export abstract class TrustError<Code extends TrustErrorCode = TrustErrorCode> extends Error {
  readonly code: Code

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }
}
