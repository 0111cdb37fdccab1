/**
 * Streaming verification of a tracker-audit log (behaviour doc §7.1): walks the lines once, keeping only the
 * previous entry hash, and stops at the first failure with Bernstein's exact message.
 *
 * @module
 */
import { createHmac } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { parsePythonJson, pythonJsonDecodeError } from '../canonical/python-json.js'
import type { PyValue } from '../canonical/python-json.js'
import type { Schema } from '../contract.js'
import { constantTimeEqual } from '../crypto/constant-time.js'
import { sha256Prefixed } from '../crypto/sha256-prefixed.js'
import { type Fail, type Result, fail, ok } from '../result.js'
import { decodeUtf8Strict } from '../text/utf8.js'
import { GENESIS_PREV_HASH, parseTrackerEntry, trackerSigningPayload } from './tracker-entry.js'
import type { TrackerAuditEntry } from './tracker-entry.js'
import { readCanonicalTrackerLine } from './tracker-fast-path.js'

/**
 * Why a log line failed, in the order the checks run: it is not JSON (or not UTF-8), not a tracker-audit entry, does
 * not link to the previous entry, its `entry_hash` does not recompute (tampered payload), or its HMAC does not
 * verify under the key.
 */
export type TrackerAuditFailure = 'invalid_json' | 'invalid_entry' | 'prev_hash_mismatch' | 'entry_hash_mismatch' | 'signature_mismatch'

/**
 * Outcome of verifying a log: `{ ok: true, value: { entries } }`, or the first failure with Bernstein's text as
 * `detail` (`line 3: signature mismatch (HMAC failed)`) and `entries`, how many entries verified before it.
 */
export type TrackerAuditVerifyResult = Result<{ readonly entries: number }, TrackerAuditFailure, { entries: number }>

/** A failed line: its code and Bernstein's text. */
export type TrackerLineFailure = Fail<TrackerAuditFailure>

/**
 * The verdict as the HTTP API and the CLI's `--json` print it (the contract's `ChainVerification`):
 * `{ ok, entries, failure }`, `failure` being the failure's text or null.
 *
 * @example chainVerificationBody(await verifyTrackerAuditFile(path, key)) // { ok: true, entries: 5, failure: null }
 */
export function chainVerificationBody(result: TrackerAuditVerifyResult): Schema<'ChainVerification'> {
  return result.ok ? { ok: true, entries: result.value.entries, failure: null } : { ok: false, entries: result.entries, failure: result.detail }
}

/** A log line as text, or as the raw bytes read from disk (decoded strictly as UTF-8). */
export type TrackerAuditLine = string | Uint8Array

// Python's bytes.strip() removes exactly these (space, \t, \n, \v, \f, \r); String.prototype.trim would also eat
// U+FEFF and U+00A0.
function isPyWhitespace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d)
}

function stripText(line: string): string {
  let start = 0
  let end = line.length
  while (start < end && isPyWhitespace(line.charCodeAt(start))) start++
  while (end > start && isPyWhitespace(line.charCodeAt(end - 1))) end--
  return start === 0 && end === line.length ? line : line.slice(start, end)
}

function stripBytes(line: Uint8Array): Uint8Array {
  let start = 0
  let end = line.length
  while (start < end && isPyWhitespace(line[start] ?? 0)) start++
  while (end > start && isPyWhitespace(line[end - 1] ?? 0)) end--
  return line.subarray(start, end)
}

/** One parsed log line: null for a blank line, else the entry or the failure with Bernstein's text for line `n`. */
export type TrackerLineParseResult = Result<TrackerAuditEntry, 'invalid_json' | 'invalid_entry'> | null

/** A stripped, decoded line: null for a blank line, or the failure with Bernstein's text for line `n`. */
type DecodedLine = Result<string, 'invalid_json'> | null

function decodeTrackerLine(rawLine: TrackerAuditLine, n: number): DecodedLine {
  if (typeof rawLine === 'string') {
    const text = stripText(rawLine)
    return text.length === 0 ? null : ok(text)
  }
  const bytes = stripBytes(rawLine)
  if (bytes.length === 0) return null
  try {
    return ok(decodeUtf8Strict(bytes))
  } catch {
    // Bernstein crashes here (UnicodeDecodeError escapes its verify); a failed line is the honest result.
    return fail('invalid_json', `line ${n}: invalid JSON (invalid UTF-8)`)
  }
}

function parseTrackerText(text: string, n: number): NonNullable<TrackerLineParseResult> {
  let payload: PyValue
  try {
    payload = parsePythonJson(text)
  } catch (error) {
    return fail('invalid_json', `line ${n}: invalid JSON (${pythonJsonDecodeError(error, text).msg})`)
  }
  const parsed = parseTrackerEntry(payload)
  if (!parsed.ok) return fail('invalid_entry', `line ${n}: schema invalid (${parsed.detail})`)
  return parsed
}

/**
 * Strips, decodes and parses one physical log line as Bernstein's reader does, with its failure texts
 * (`line N: invalid JSON (…)`, `line N: schema invalid (…)`). Byte lines are decoded as strict UTF-8.
 */
export function parseTrackerLine(rawLine: TrackerAuditLine, n: number): TrackerLineParseResult {
  const decoded = decodeTrackerLine(rawLine, n)
  if (decoded === null || !decoded.ok) return decoded
  return parseTrackerText(decoded.value, n)
}

/** Options of {@link TrackerAuditVerifier}. */
export interface TrackerAuditVerifierOptions {
  /** Verify lines that continue an existing chain whose last entry hash is this. */
  prevEntryHash?: string
  /**
   * Read exactly canonical lines without the full Python-JSON parse (default true). Off, every line takes the
   * reference path; the results are the same either way (tests compare the two).
   */
  fastPath?: boolean
}

/**
 * An incremental verifier: feed it lines in order with {@link TrackerAuditVerifier.push}; it holds only the previous
 * entry hash and the count, so memory does not grow with the chain.
 */
export class TrackerAuditVerifier {
  readonly #key: Uint8Array
  readonly #fastPath: boolean
  #prevHash = GENESIS_PREV_HASH
  #lineNo = 0
  #entries = 0
  #fastPathLines = 0
  #failure: TrackerLineFailure | null = null

  constructor(key: Uint8Array, options: TrackerAuditVerifierOptions = {}) {
    if (!(key instanceof Uint8Array)) throw new TypeError('key must be a Buffer or Uint8Array')
    this.#key = key
    if (options.prevEntryHash !== undefined) this.#prevHash = options.prevEntryHash
    this.#fastPath = options.fastPath ?? true
  }

  /** True once a line has failed; later lines are ignored. */
  get failed(): boolean {
    return this.#failure !== null
  }

  /** How many lines were read by the fast path (canonical lines), whether they then verified or not. */
  get fastPathLines(): number {
    return this.#fastPathLines
  }

  /**
   * Checks the next physical line (blank lines are skipped but still counted in line numbers, as Bernstein counts
   * them). Returns the failure of this line (or of an earlier one), or null.
   */
  push(rawLine: TrackerAuditLine): TrackerLineFailure | null {
    if (this.#failure !== null) return this.#failure
    this.#lineNo += 1
    const n = this.#lineNo
    const decoded = decodeTrackerLine(rawLine, n)
    if (decoded === null) return null
    if (!decoded.ok) return this.#fail(decoded)

    if (this.#fastPath) {
      const canonical = readCanonicalTrackerLine(decoded.value, typeof rawLine !== 'string')
      if (canonical !== null) {
        this.#fastPathLines += 1
        if (canonical.prevEntryHash !== this.#prevHash) return this.#failPrevHash(n, canonical.prevEntryHash)
        const signingPayload = Buffer.from(canonical.signingPayload, 'utf8')
        return this.#checkSigned(n, signingPayload, canonical.entryHash, canonical.signature)
      }
    }

    const parsed = parseTrackerText(decoded.value, n)
    if (!parsed.ok) return this.#fail(parsed)
    const entry = parsed.value
    if (entry.prev_entry_hash !== this.#prevHash) return this.#failPrevHash(n, entry.prev_entry_hash)
    let signingPayload: Buffer
    try {
      signingPayload = trackerSigningPayload(entry)
    } catch (error) {
      // Lone surrogates cannot be encoded as UTF-8; Bernstein would crash, we report the entry as invalid.
      return this.#fail(fail('invalid_entry', `line ${n}: schema invalid (${error instanceof Error ? error.message : String(error)})`))
    }
    return this.#checkSigned(n, signingPayload, entry.entry_hash, entry.signature)
  }

  #failPrevHash(n: number, got: string): TrackerLineFailure {
    return this.#fail(fail('prev_hash_mismatch', `line ${n}: prev_entry_hash mismatch (expected ${this.#prevHash}, got ${got})`))
  }

  // Both paths end here, so the hash and HMAC checks and their texts cannot drift apart.
  #checkSigned(n: number, signingPayload: Buffer, entryHash: string, signature: string): TrackerLineFailure | null {
    if (sha256Prefixed(signingPayload) !== entryHash) {
      return this.#fail(fail('entry_hash_mismatch', `line ${n}: entry_hash mismatch (tampered payload)`))
    }
    const expectedSignature = createHmac('sha256', this.#key).update(signingPayload).digest('hex')
    if (!constantTimeEqual(expectedSignature, signature)) {
      return this.#fail(fail('signature_mismatch', `line ${n}: signature mismatch (HMAC failed)`))
    }
    this.#prevHash = entryHash
    this.#entries += 1
    return null
  }

  /** The verdict so far. */
  result(): TrackerAuditVerifyResult {
    const failure = this.#failure
    return failure === null ? ok({ entries: this.#entries }) : fail(failure.code, failure.detail, { entries: this.#entries })
  }

  /** `entry_hash` of the last verified entry (the genesis hash before any). */
  get headHash(): string {
    return this.#prevHash
  }

  #fail(failure: TrackerLineFailure): TrackerLineFailure {
    this.#failure = failure
    return failure
  }
}

/**
 * Verifies a tracker-audit log given as lines (without or with their `\n`), synchronous or async. O(1) memory in the
 * chain length: only the previous hash is kept. Never throws on bad data.
 *
 * @example
 * const lines = readFileSync('tracker-audit.jsonl', 'utf8').split('\n').filter((line) => line !== '')
 * const verdict = await verifyTrackerAuditLines(lines, readAuditKey('.sdd/audit.key'))
 * if (!verdict.ok) console.error(verdict.code, verdict.detail) // e.g. signature_mismatch: line 3: signature mismatch (HMAC failed)
 */
export async function verifyTrackerAuditLines(
  lines: Iterable<TrackerAuditLine> | AsyncIterable<TrackerAuditLine>,
  key: Uint8Array,
): Promise<TrackerAuditVerifyResult> {
  const verifier = new TrackerAuditVerifier(key)
  for await (const line of lines) {
    if (verifier.push(line) !== null) break
  }
  return verifier.result()
}

/**
 * Yields the lines of a file as raw bytes, split on `\n` only. Python's binary line iteration splits the same way;
 * readline would also split on `\r` and so shift the line numbers of a tampered file. Memory is bounded by the
 * longest line.
 */
export async function* readByteLines(path: string): AsyncGenerator<Buffer> {
  let pending: Buffer[] = []
  for await (const chunk of createReadStream(path)) {
    const buffer = chunk as Buffer
    let start = 0
    let newline = buffer.indexOf(0x0a, start)
    while (newline !== -1) {
      const piece = buffer.subarray(start, newline)
      if (pending.length > 0) {
        pending.push(piece)
        yield Buffer.concat(pending)
        pending = []
      } else {
        yield piece
      }
      start = newline + 1
      newline = buffer.indexOf(0x0a, start)
    }
    if (start < buffer.length) pending.push(buffer.subarray(start))
  }
  if (pending.length > 0) yield Buffer.concat(pending)
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT'
}

/**
 * Verifies a tracker-audit JSONL file by streaming it (Bernstein's log, or `bernstein-a2a lineage tracker-audit
 * export`). A missing file is ok with 0 entries (as in Bernstein).
 *
 * @throws the underlying I/O error for anything but a missing file (a directory, no permission).
 * @example
 * const verdict = await verifyTrackerAuditFile('tracker-audit.jsonl', readAuditKey('.sdd/audit.key'))
 * if (verdict.ok) console.log(verdict.value.entries, 'entries verified')
 * else console.error(`${verdict.code} after ${verdict.entries} good entries: ${verdict.detail}`)
 */
export async function verifyTrackerAuditFile(path: string, key: Uint8Array): Promise<TrackerAuditVerifyResult> {
  const verifier = new TrackerAuditVerifier(key)
  try {
    for await (const line of readByteLines(path)) {
      if (verifier.push(line) !== null) break
    }
  } catch (error) {
    if (isNotFound(error)) return ok({ entries: 0 })
    throw error
  }
  return verifier.result()
}
