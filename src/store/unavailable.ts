import { AppError } from '../errors.js'
import { STORAGE_RETRY_AFTER_S } from './storage-fault.js'

/**
 * The database could not be reached or gave up on a statement (connection refused or reset, server shutting
 * down, connect or statement timeout). An `AppError('unavailable')`, so the HTTP layer answers
 * 503 `{"detail":"Service Unavailable"}` with `Retry-After` without knowing anything about drivers; `reason` is a short,
 * address-free classification for readiness probes, and `cause` keeps the driver's error for the log.
 */
export class DatabaseUnavailable extends AppError {
  readonly reason: string

  constructor(reason: string, cause: unknown) {
    super('unavailable', 'Service Unavailable', { cause, headers: { 'Retry-After': String(STORAGE_RETRY_AFTER_S) } })
    this.reason = reason
  }
}

const ERRNO_REASON: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ECONNABORTED: 'connection aborted',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connect timeout',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
}

/** SQLSTATEs that mean "not now" rather than "wrong": the server is going away, full, or gave up waiting. */
const SQLSTATE_REASON: Readonly<Record<string, string>> = {
  '57P01': 'server shutting down (admin_shutdown)',
  '57P02': 'server crashed (crash_shutdown)',
  '57P03': 'server not accepting connections yet (cannot_connect_now)',
  '53300': 'too many connections',
  '57014': 'statement timeout',
  '55P03': 'lock timeout',
}

const MESSAGE_REASON: readonly (readonly [RegExp, string])[] = [
  [/connection timeout|timeout exceeded when trying to connect/i, 'connect timeout'],
  [/^Query read timeout/, 'query timeout'],
  [/^Connection terminated/, 'connection terminated'],
  [/not queryable|Client was closed/, 'connection closed'],
]

/**
 * Recognises the driver errors that mean the database is unreachable (node-postgres and the network stack), and
 * names them. `undefined` for everything else: constraint violations and bugs must stay errors.
 */
export function connectionLossReason(error: unknown): string | undefined {
  if (error instanceof DatabaseUnavailable) return error.reason
  if (typeof error !== 'object' || error === null) return undefined
  const { code, message } = error as { code?: unknown; message?: unknown }
  if (typeof code === 'string') {
    const reason = ERRNO_REASON[code] ?? SQLSTATE_REASON[code]
    if (reason) return reason
    if (/^08[0-9A-Z]{3}$/.test(code)) return `connection exception (${code})`
  }
  if (typeof message === 'string') {
    for (const [pattern, reason] of MESSAGE_REASON) if (pattern.test(message)) return reason
  }
  const errors = (error as { errors?: unknown }).errors
  // Node reports a failed connect to a host with several addresses as an AggregateError of ECONNREFUSEDs.
  if (Array.isArray(errors) && errors.length > 0) return connectionLossReason(errors[0])
  return undefined
}

/** `error` as a `DatabaseUnavailable` when it is a connection loss, else unchanged. */
export function asUnavailable(error: unknown): unknown {
  if (error instanceof DatabaseUnavailable) return error
  const reason = connectionLossReason(error)
  return reason === undefined ? error : new DatabaseUnavailable(reason, error)
}
