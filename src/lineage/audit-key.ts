/**
 * The operator's audit HMAC key file (behaviour doc §3.2): 64 hex characters whose ASCII bytes ARE the key, created
 * 0600 in a 0700 directory.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { TrustError } from '../errors.js'

/** Why an audit key file cannot be used: absent, readable by others, or empty. */
export type AuditKeyErrorCode = 'missing' | 'insecure_permissions' | 'empty'

/** Why a key file could not be used. */
export class AuditKeyError extends TrustError<AuditKeyErrorCode> {
  override readonly name = 'AuditKeyError'
}

const PY_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d, 0x0b, 0x0c])

function stripAscii(data: Buffer): Buffer {
  let start = 0
  let end = data.length
  while (start < end && PY_WHITESPACE.has(data[start] ?? 0)) start++
  while (end > start && PY_WHITESPACE.has(data[end - 1] ?? 0)) end--
  return data.subarray(start, end)
}

/** Options of {@link readAuditKey}. */
export interface ReadAuditKeyOptions {
  /** Refuse a file with group or world permission bits, as Bernstein does on POSIX. Default true (off on Windows). */
  enforcePermissions?: boolean
}

/**
 * Reads the key: the file's bytes with surrounding ASCII whitespace (the trailing newline) removed. The hex text is
 * not decoded: Bernstein keys its HMACs with those ASCII bytes.
 *
 * @throws AuditKeyError when the file is missing, empty or readable by others (`code` `missing`, `empty`,
 *   `insecure_permissions`).
 * @example
 * const key = readAuditKey('.sdd/audit.key') // the node's key; BERNSTEIN_AUDIT_KEY_PATH when set
 * console.log(await verifyTrackerAuditFile('tracker-audit.jsonl', key))
 */
export function readAuditKey(path: string, options: ReadAuditKeyOptions = {}): Buffer {
  let mode: number
  try {
    mode = statSync(path).mode & 0o777
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') {
      throw new AuditKeyError('missing', `No audit HMAC key at ${path}.`)
    }
    throw error
  }
  const enforce = options.enforcePermissions ?? process.platform !== 'win32'
  if (enforce && (mode & 0o077) !== 0) {
    throw new AuditKeyError(
      'insecure_permissions',
      `Audit key ${path} has insecure permissions ${mode.toString(8).padStart(4, '0')}; required 0600 (owner-only).`,
    )
  }
  const key = stripAscii(readFileSync(path))
  if (key.length === 0) throw new AuditKeyError('empty', `Audit key ${path} is empty.`)
  return Buffer.from(key)
}

/**
 * Returns the key at `path`, creating it first if absent: 32 random bytes written as 64 hex characters into a
 * temporary file opened with `wx` and mode 0600 (never widened then narrowed), inside a directory created 0700,
 * and only then linked under its real name. Replicas sharing a data directory may start at the same moment: the
 * name never shows a partly written key, and the process that loses the link race reads the winner's key.
 */
export function ensureAuditKey(path: string): Buffer {
  try {
    return readAuditKey(path)
  } catch (error) {
    if (!(error instanceof AuditKeyError) || error.code !== 'missing') throw error
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const key = Buffer.from(randomBytes(32).toString('hex'), 'ascii')
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  const fd = openSync(temporary, 'wx', 0o600)
  try {
    writeSync(fd, key)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    // The umask can only remove bits, but re-assert in case the filesystem ignored the mode.
    chmodSync(temporary, 0o600)
    linkSync(temporary, path)
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST') return readAuditKey(path)
    throw error
  } finally {
    unlinkSync(temporary)
  }
  return key
}
