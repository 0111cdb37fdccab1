/**
 * Bernstein's lineage spine, v2 rows (behaviour doc §7.3): a hash-chained, HMAC-tagged JSONL log per run plus a
 * `spine.head` snapshot. Receipts anchor their responses here (run `a2a-inbound-responses`).
 *
 * @module
 */
import { createHmac, hkdfSync } from 'node:crypto'
import {
  dumpsPython,
  isPyInt,
  isPyObject,
  PyFloat,
  parsePythonJson,
  pythonCanonical,
  pythonCanonicalBytes,
  pythonRepr,
  pythonStr,
} from '../canonical/python-json.js'
import type { PyObject, PyValue } from '../canonical/python-json.js'
import { constantTimeEqual } from '../crypto/constant-time.js'
import { sha256Prefixed } from '../crypto/sha256-prefixed.js'
import { decodeUtf8Strict } from '../text/utf8.js'

/** Version stamped on rows written here. */
export const SPINE_ENTRY_VERSION = 2

/** Domain tag prefixed to the v2 entry-hash preimage. */
export const SPINE_V2_DOMAIN_TAG = 'bernstein:lineage:v2'

/** Spine run id under which A2A response receipts are anchored. */
export const A2A_RECEIPT_RUN_ID = 'a2a-inbound-responses'

/** `step_id` prefixes of rows that record no produced artifact (a journal-head seal, an artifact attempt). */
export const NON_ARTIFACT_STEP_PREFIXES = ['replay-journal-head:', 'artifact-attempt:'] as const

/** `prev_hash` of the first row. */
export const SPINE_GENESIS_HASH = ''

/** One spine row with Bernstein's wire names; `timestamp` is an int (nanoseconds for receipts). */
export interface SpineRow {
  v: number
  prev_hash: string
  artifact_path: string
  content_hash: string
  actor: string
  step_id: string
  model: string
  timestamp: bigint
  entry_hash: string
  hmac: string
  traceparent?: string
  tracestate?: string
  baggage?: string
}

/** The `spine.head` snapshot: last entry hash, row count, and an HMAC over both. */
export interface SpineHead {
  head_hash: string
  count: number
  hmac: string
}

/** HKDF-SHA256(master, salt = none, info = "lineage", 32 bytes): the key v2 rows and the head are tagged with. */
export function deriveLineageKey(master: Uint8Array): Buffer {
  // An empty salt is RFC 5869's "not provided" (HashLen zero bytes), which is what Python's salt=None means.
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'lineage', 32))
}

/** Inputs of one row. */
export interface SpineRowInput {
  /** `entry_hash` of the previous row, or `""` for the first. */
  prevHash: string
  artifactPath: string
  /** `sha256:<hex>` of the artifact bytes. */
  contentHash: string
  actor: string
  stepId: string
  model: string
  /** Integer timestamp (ns for receipts); a bigint, since nanosecond times exceed 2^53. */
  timestampNs: bigint | number
  traceparent?: string
  tracestate?: string
  baggage?: string
}

function hashFields(row: Omit<SpineRow, 'entry_hash' | 'hmac' | 'v'>): PyObject {
  const fields: PyObject = {
    prev_hash: row.prev_hash,
    artifact_path: row.artifact_path,
    content_hash: row.content_hash,
    actor: row.actor,
    step_id: row.step_id,
    model: row.model,
    timestamp: row.timestamp,
  }
  if (row.traceparent !== undefined) fields['traceparent'] = row.traceparent
  if (row.tracestate !== undefined) fields['tracestate'] = row.tracestate
  if (row.baggage !== undefined) fields['baggage'] = row.baggage
  return fields
}

/** The row as a JSON object, `hmac` included (omit it for the HMAC preimage). */
export function spineRowBody(row: SpineRow, withHmac = true): PyObject {
  const body: PyObject = { v: row.v, ...hashFields(row), entry_hash: row.entry_hash }
  if (withHmac) body['hmac'] = row.hmac
  return body
}

/** `entry_hash` of a v2 row: SHA-256 of the domain tag followed by the canonical hashed fields. */
export function computeSpineEntryHash(row: Omit<SpineRow, 'entry_hash' | 'hmac' | 'v'>): string {
  return sha256Prefixed([SPINE_V2_DOMAIN_TAG, pythonCanonicalBytes(hashFields(row))])
}

/** Builds a v2 row exactly as Bernstein's `LineageSpine.record_entry`. `lineageKey` is {@link deriveLineageKey}'s. */
export function buildSpineRow(input: SpineRowInput, lineageKey: Uint8Array): SpineRow {
  const row: SpineRow = {
    v: SPINE_ENTRY_VERSION,
    prev_hash: input.prevHash,
    artifact_path: input.artifactPath,
    content_hash: input.contentHash,
    actor: input.actor,
    step_id: input.stepId,
    model: input.model,
    timestamp: BigInt(input.timestampNs),
    entry_hash: '',
    hmac: '',
  }
  if (input.traceparent !== undefined) row.traceparent = input.traceparent
  if (input.tracestate !== undefined) row.tracestate = input.tracestate
  if (input.baggage !== undefined) row.baggage = input.baggage
  row.entry_hash = computeSpineEntryHash(row)
  row.hmac = createHmac('sha256', lineageKey)
    .update(pythonCanonicalBytes(spineRowBody(row, false)))
    .digest('hex')
  return row
}

/** The `spine.jsonl` line: canonical JSON plus `\n`. */
export function spineRowLine(row: SpineRow): string {
  return pythonCanonical(spineRowBody(row)) + '\n'
}

/** The head after `rows` (the last row's hash, the count, the HMAC of both under the lineage key). */
export function spineHead(rows: readonly SpineRow[], lineageKey: Uint8Array): SpineHead {
  const last = rows[rows.length - 1]
  const body: PyObject = { head_hash: last ? last.entry_hash : SPINE_GENESIS_HASH, count: rows.length }
  const hmac = createHmac('sha256', lineageKey).update(pythonCanonicalBytes(body)).digest('hex')
  return { head_hash: body['head_hash'] as string, count: rows.length, hmac }
}

/** The `spine.head` file text: canonical JSON, no trailing newline. */
export function spineHeadText(head: SpineHead): string {
  return pythonCanonical({ head_hash: head.head_hash, count: head.count, hmac: head.hmac })
}

/** Outcome of {@link verifySpine}: `ok` only with intact rows carrying at least one produced artifact. */
export type SpineStatus = 'ok' | 'no_entries' | 'seal_only' | 'tampered'

export interface SpineVerifyResult {
  status: SpineStatus
  /** Number of lines walked (tampered ones included), as Bernstein counts. */
  count: number
  errors: string[]
}

const REQUIRED_ROW_FIELDS = ['v', 'prev_hash', 'artifact_path', 'content_hash', 'actor', 'step_id', 'model', 'timestamp', 'entry_hash', 'hmac']

// Python's int() of a timestamp value; undefined where Python raises TypeError/ValueError.
function pyIntOf(value: PyValue): bigint | undefined {
  if (typeof value === 'boolean') return value ? 1n : 0n
  if (isPyInt(value)) return BigInt(value)
  if (value instanceof PyFloat || typeof value === 'number') {
    const x = value instanceof PyFloat ? value.value : value
    return Number.isFinite(x) ? BigInt(Math.trunc(x)) : undefined
  }
  if (typeof value === 'string' && /^\s*[+-]?\d+(_\d+)*\s*$/.test(value)) return BigInt(value.replace(/_/g, '').trim())
  return undefined
}

function versionNumber(value: PyValue): number | undefined {
  // Python compares with ==, so 2.0 and True (== 1) count as versions.
  if (typeof value === 'boolean') return value ? 1 : 0
  if (isPyInt(value)) return Number(value)
  if (value instanceof PyFloat) return value.value
  if (typeof value === 'number') return value
  return undefined
}

function splitSpine(content: Uint8Array | string): Array<string | Uint8Array> {
  if (typeof content === 'string') return content.replace(/\n+$/, '').split('\n')
  let end = content.length
  while (end > 0 && content[end - 1] === 0x0a) end--
  const out: Uint8Array[] = []
  let start = 0
  for (let i = 0; i < end; i++) {
    if (content[i] === 0x0a) {
      out.push(content.subarray(start, i))
      start = i + 1
    }
  }
  out.push(content.subarray(start, end))
  return out
}

/** Options of {@link verifySpine}. */
export interface SpineVerifyOptions {
  /**
   * The `spine.head` text. Bernstein's verify ignores the head; when it is given here, its HMAC, hash and count must
   * match the rows too (a tampered or stale head makes the result `tampered`).
   */
  head?: Uint8Array | string
}

/**
 * Verifies `spine.jsonl` content the way Bernstein's `LineageSpine.verify` does, with its texts: every line is
 * checked and every problem reported (`line 2: entry_hash mismatch`, `line 1: hmac mismatch`, …). v2 rows use the
 * HKDF-derived key and the domain tag, v1 rows the raw master key and no tag. Never throws on bad data.
 */
export function verifySpine(content: Uint8Array | string, masterKey: Uint8Array, options: SpineVerifyOptions = {}): SpineVerifyResult {
  const lines = splitSpine(content)
  if (lines.length === 1 && (lines[0] as string | Uint8Array).length === 0) {
    return { status: 'no_entries', count: 0, errors: [] }
  }
  const derivedKey = deriveLineageKey(masterKey)
  const errors: string[] = []
  let prevHash = SPINE_GENESIS_HASH
  let count = 0
  let sealOnly = true
  for (const [index, raw] of lines.entries()) {
    const n = index + 1
    count += 1
    let row: PyValue
    try {
      row = parsePythonJson(typeof raw === 'string' ? raw : decodeUtf8Strict(raw))
    } catch {
      errors.push(`line ${n}: malformed JSON`)
      continue
    }
    if (!isPyObject(row)) {
      errors.push(`line ${n}: row is not an object`)
      continue
    }
    const present = row
    const missing = REQUIRED_ROW_FIELDS.filter((field) => !Object.hasOwn(present, field)).sort()
    if (missing.length > 0) {
      errors.push(`line ${n}: missing fields ${pythonRepr(missing)}`)
      continue
    }
    const version = versionNumber(row['v'] as PyValue)
    if (version !== 1 && version !== 2) {
      errors.push(`line ${n}: unsupported entry version ${pythonRepr(row['v'] as PyValue)}`)
      continue
    }
    const key = version === 2 ? derivedKey : masterKey
    const prefix = version === 2 ? SPINE_V2_DOMAIN_TAG : ''
    const rowPrev = row['prev_hash'] as PyValue
    if (rowPrev !== prevHash) {
      errors.push(
        `line ${n}: prev_hash break (expected ${pythonRepr(Array.from(prevHash).slice(0, 16).join(''))}, got ${pythonRepr(Array.from(pythonStr(rowPrev)).slice(0, 16).join(''))})`,
      )
    }
    const timestamp = pyIntOf(row['timestamp'] as PyValue)
    if (timestamp === undefined) {
      errors.push(`line ${n}: unhashable field types`)
      continue
    }
    const fields: PyObject = {
      prev_hash: pythonStr(rowPrev),
      artifact_path: pythonStr(row['artifact_path'] as PyValue),
      content_hash: pythonStr(row['content_hash'] as PyValue),
      actor: pythonStr(row['actor'] as PyValue),
      step_id: pythonStr(row['step_id'] as PyValue),
      model: pythonStr(row['model'] as PyValue),
      timestamp,
    }
    for (const optional of ['traceparent', 'tracestate', 'baggage']) {
      const value = row[optional]
      if (value !== undefined && value !== null) fields[optional] = value
    }
    let expectedHash: string
    let expectedHmac: string
    try {
      // Bernstein's json.dumps here keeps the default allow_nan=True.
      const preimage = prefix + dumpsPython(fields, { sortKeys: true, ensureAscii: false, separators: [',', ':'], allowNan: true })
      expectedHash = sha256Prefixed(preimage)
      const body: PyObject = {}
      for (const field of Object.keys(row)) if (field !== 'hmac') body[field] = row[field] as PyValue
      const bodyText = dumpsPython(body, { sortKeys: true, ensureAscii: false, separators: [',', ':'], allowNan: true })
      expectedHmac = createHmac('sha256', key).update(bodyText, 'utf8').digest('hex')
    } catch {
      errors.push(`line ${n}: unhashable field types`)
      continue
    }
    const entryHash = pythonStr(row['entry_hash'] as PyValue)
    if (!constantTimeEqual(entryHash, expectedHash)) errors.push(`line ${n}: entry_hash mismatch`)
    if (!constantTimeEqual(pythonStr(row['hmac'] as PyValue), expectedHmac)) errors.push(`line ${n}: hmac mismatch`)
    const stepId = pythonStr(row['step_id'] as PyValue)
    if (!NON_ARTIFACT_STEP_PREFIXES.some((p) => stepId.startsWith(p))) sealOnly = false
    prevHash = entryHash
  }

  if (options.head !== undefined) {
    const headError = checkHead(options.head, prevHash, count, derivedKey)
    if (headError !== null) errors.push(headError)
  }
  if (errors.length > 0) return { status: 'tampered', count, errors }
  return { status: sealOnly ? 'seal_only' : 'ok', count, errors: [] }
}

function checkHead(head: Uint8Array | string, lastHash: string, count: number, derivedKey: Buffer): string | null {
  let parsed: PyValue
  try {
    parsed = parsePythonJson(typeof head === 'string' ? head : decodeUtf8Strict(head))
  } catch {
    return 'spine.head: malformed JSON'
  }
  if (!isPyObject(parsed)) return 'spine.head: not an object'
  const body: PyObject = {}
  for (const field of Object.keys(parsed)) if (field !== 'hmac') body[field] = parsed[field] as PyValue
  let expected: string
  try {
    expected = createHmac('sha256', derivedKey).update(pythonCanonicalBytes(body)).digest('hex')
  } catch {
    return 'spine.head: hmac mismatch'
  }
  if (!constantTimeEqual(pythonStr(parsed['hmac'] as PyValue), expected)) return 'spine.head: hmac mismatch'
  if (parsed['head_hash'] !== lastHash || parsed['count'] !== count) {
    return `spine.head: does not match the rows (head ${pythonStr(parsed['head_hash'] as PyValue)} / ${pythonStr(parsed['count'] as PyValue)}, rows ${lastHash} / ${count})`
  }
  return null
}
