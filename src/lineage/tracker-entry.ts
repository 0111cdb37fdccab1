/**
 * Bernstein's tracker-audit entry (behaviour doc §7.1): the exact field set, the signing payload, the entry hash and
 * the HMAC, and a schema check that fails with the texts Bernstein's `_entry_from_payload` produces.
 *
 * @module
 */
import { createHmac, randomUUID } from 'node:crypto'
import { PyFloat, isPyFloat, isPyInt, isPyObject, pythonCanonicalBytes, pythonRepr, pythonStr, pythonTypeName } from '../canonical/python-json.js'
import type { PyObject, PyValue } from '../canonical/python-json.js'
import { sha256Prefixed } from '../crypto/sha256-prefixed.js'
import { type Result, fail, ok } from '../result.js'

/** The only entry schema version Bernstein writes and accepts. */
export const TRACKER_AUDIT_SCHEMA_VERSION = 1

/** The five tracker actions (`TRACKER_AUDIT_ACTIONS`). */
export const TRACKER_AUDIT_ACTIONS = ['claim', 'comment', 'transition', 'attach', 'fail'] as const

export type TrackerAuditAction = (typeof TRACKER_AUDIT_ACTIONS)[number]

/** `prev_entry_hash` of the first entry of a log. */
export const GENESIS_PREV_HASH = 'sha256:' + '0'.repeat(64)

/** The agent that performed the tracker action. */
export interface TrackerActor {
  session_id: string
  role: string
  model: string
}

/**
 * One signed tracker-audit entry, with Bernstein's wire names. Ints that can exceed 2^53 (`ts_ns`) are bigints;
 * `cost_usd` is a {@link PyFloat} (a plain integral number only when a foreign writer stored a Python int there).
 */
export interface TrackerAuditEntry {
  schema_version: 1
  id: string
  ts_ns: bigint
  prev_entry_hash: string
  entry_hash: string
  tracker_name: string
  ticket_id: string
  etag_before: string | null
  etag_after: string | null
  action: TrackerAuditAction
  actor: TrackerActor
  input_prompt_hash: string
  output_blob_hash: string
  cost_usd: PyFloat | number
  tokens_in: number | bigint
  tokens_out: number | bigint
  idempotency_key: string | null
  lifecycle_event_id: string | null
  signature: string
  failure_category: string | null
  failure_detail: string | null
}

/** Outcome of {@link parseTrackerEntry}: the entry, or `invalid_entry` with the text of the exception Bernstein would raise. */
export type TrackerEntryParseResult = Result<TrackerAuditEntry, 'invalid_entry'>

/** The entry as the JSON object Bernstein canonicalises (`dataclasses.asdict`). */
export function trackerEntryBody(entry: TrackerAuditEntry): PyObject {
  return {
    schema_version: entry.schema_version,
    id: entry.id,
    ts_ns: entry.ts_ns,
    prev_entry_hash: entry.prev_entry_hash,
    entry_hash: entry.entry_hash,
    tracker_name: entry.tracker_name,
    ticket_id: entry.ticket_id,
    etag_before: entry.etag_before,
    etag_after: entry.etag_after,
    action: entry.action,
    actor: { session_id: entry.actor.session_id, role: entry.actor.role, model: entry.actor.model },
    input_prompt_hash: entry.input_prompt_hash,
    output_blob_hash: entry.output_blob_hash,
    cost_usd: entry.cost_usd,
    tokens_in: entry.tokens_in,
    tokens_out: entry.tokens_out,
    idempotency_key: entry.idempotency_key,
    lifecycle_event_id: entry.lifecycle_event_id,
    signature: entry.signature,
    failure_category: entry.failure_category,
    failure_detail: entry.failure_detail,
  }
}

/** Canonical bytes of the whole entry (signature and entry hash included): a log line without its `\n`. */
export function trackerEntryBytes(entry: TrackerAuditEntry): Buffer {
  return pythonCanonicalBytes(trackerEntryBody(entry))
}

/** The JSONL line Bernstein appends: canonical JSON plus `\n`. */
export function trackerEntryLine(entry: TrackerAuditEntry): string {
  return trackerEntryBytes(entry).toString('utf8') + '\n'
}

/** The bytes both the entry hash and the HMAC cover: canonical JSON with `signature` and `entry_hash` set to `""`. */
export function trackerSigningPayload(entry: TrackerAuditEntry): Buffer {
  const body = trackerEntryBody(entry)
  body['signature'] = ''
  body['entry_hash'] = ''
  return pythonCanonicalBytes(body)
}

/** `entry_hash` = `"sha256:" + hex(SHA-256(signing payload))`; unkeyed, so anyone can recompute it. */
export function computeTrackerEntryHash(entry: TrackerAuditEntry): string {
  return sha256Prefixed(trackerSigningPayload(entry))
}

/** `signature` = hex HMAC-SHA256 of the signing payload under the operator key. */
export function computeTrackerSignature(entry: TrackerAuditEntry, key: Uint8Array): string {
  return createHmac('sha256', key).update(trackerSigningPayload(entry)).digest('hex')
}

/** What a caller records; the blobs are hashed on the way in and never stored (Bernstein's `append()` arguments). */
export interface TrackerEntryInput {
  trackerName: string
  ticketId: string
  action: TrackerAuditAction
  actor: TrackerActor
  /** Raw bytes (a string is taken as its UTF-8 bytes). Only the hash is kept. */
  inputPrompt: Uint8Array | string
  /** Raw bytes (a string is taken as its UTF-8 bytes). Only the hash is kept. */
  outputBlob: Uint8Array | string
  etagBefore?: string | null
  etagAfter?: string | null
  /** Always recorded as a Python float (`0` → `0.0`). */
  costUsd?: number
  tokensIn?: number | bigint
  tokensOut?: number | bigint
  idempotencyKey?: string | null
  lifecycleEventId?: string | null
  failureCategory?: string | null
  failureDetail?: string | null
}

/** Chain position and signing material for {@link buildTrackerEntry}. */
export interface TrackerEntryContext {
  /** `entry_hash` of the previous line, or {@link GENESIS_PREV_HASH}. */
  prevEntryHash: string
  /** Operator HMAC key (for the audit key file: the ASCII bytes of its 64 hex characters). */
  key: Uint8Array
  /** 32 hex characters; a fresh UUIDv7 when omitted. */
  id?: string
  /** Nanoseconds since the epoch; the current time when omitted. */
  tsNs?: bigint | number
}

/** A UUIDv7 as 32 lowercase hex characters (what Bernstein uses for entry ids on Python 3.13+). */
export function uuid7Hex(nowMs: number = Date.now()): string {
  const ms = Math.floor(nowMs)
  if (!(ms >= 0 && ms < 2 ** 48)) throw new RangeError(`UUIDv7 timestamp out of range: ${nowMs}`)
  // 48-bit milliseconds, the version digit 7, then the random bits of a version 4 UUID from Node's buffered pool
  // minus its own version digit (its variant digit, 8-b, is already UUIDv7's): 12 + 62 random bits, as RFC 9562
  // asks. A third of the time of randomBytes(16) plus BigInt shifts, and an entry is appended on every change.
  const random = randomUUID()
  return ms.toString(16).padStart(12, '0') + '7' + random.slice(15, 18) + random.slice(19, 23) + random.slice(24)
}

// hrtime anchors a monotonic clock to the wall clock once, so ids made in one burst still get ns resolution.
const CLOCK_ORIGIN_NS = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint()

/** The current time in nanoseconds since the epoch (Python's `time.time_ns()`). */
export function timeNs(): bigint {
  return CLOCK_ORIGIN_NS + process.hrtime.bigint()
}

function bytesOf(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data
}

function assertPrefixed(value: string, label: string): void {
  if (typeof value !== 'string' || !value.startsWith('sha256:')) {
    throw new TypeError(`${label} must start with 'sha256:', got ${pythonRepr(value)}`)
  }
}

/**
 * Builds a signed entry exactly as Bernstein's `TrackerAuditLog.append` does: hashes the blobs, computes
 * `entry_hash` over the payload with both `signature` and `entry_hash` blanked, then the HMAC over the same bytes.
 *
 * @throws TypeError on an unknown action or a malformed `prevEntryHash` (programmer misuse).
 */
export function buildTrackerEntry(input: TrackerEntryInput, context: TrackerEntryContext): TrackerAuditEntry {
  return signTrackerEntry(input, context).entry
}

/**
 * {@link buildTrackerEntry}, with the entry's log line (canonical JSON, without the `\n`) made from the same
 * canonicalisation: the line is the signing payload with the two blanked values filled in, so the entry is
 * printed once instead of twice. Equal to `trackerEntryLine(entry)` minus its newline.
 */
export function signTrackerEntry(input: TrackerEntryInput, context: TrackerEntryContext): { entry: TrackerAuditEntry; line: string } {
  if (!(TRACKER_AUDIT_ACTIONS as readonly string[]).includes(input.action)) {
    throw new TypeError(`unknown tracker-audit action: ${pythonRepr(input.action)}`)
  }
  assertPrefixed(context.prevEntryHash, 'prev_entry_hash')
  const id = context.id ?? uuid7Hex()
  if (typeof id !== 'string' || id.length === 0) throw new TypeError('id must be a non-empty string')
  const unsigned: TrackerAuditEntry = {
    schema_version: TRACKER_AUDIT_SCHEMA_VERSION,
    id,
    ts_ns: context.tsNs === undefined ? timeNs() : BigInt(context.tsNs),
    prev_entry_hash: context.prevEntryHash,
    entry_hash: '',
    tracker_name: input.trackerName,
    ticket_id: input.ticketId,
    etag_before: input.etagBefore ?? null,
    etag_after: input.etagAfter ?? null,
    action: input.action,
    actor: { session_id: input.actor.session_id, role: input.actor.role, model: input.actor.model },
    input_prompt_hash: sha256Prefixed(bytesOf(input.inputPrompt)),
    output_blob_hash: sha256Prefixed(bytesOf(input.outputBlob)),
    cost_usd: new PyFloat(input.costUsd ?? 0),
    tokens_in: input.tokensIn ?? 0,
    tokens_out: input.tokensOut ?? 0,
    idempotency_key: input.idempotencyKey ?? null,
    lifecycle_event_id: input.lifecycleEventId ?? null,
    signature: '',
    failure_category: input.failureCategory ?? null,
    failure_detail: input.failureDetail ?? null,
  }
  // One canonicalisation serves both: the payload blanks entry_hash and signature anyway.
  const payload = trackerSigningPayload(unsigned)
  unsigned.entry_hash = sha256Prefixed(payload)
  unsigned.signature = createHmac('sha256', context.key).update(payload).digest('hex')
  // In canonical JSON an unescaped `"entry_hash":""` can only be that top-level key and its blank value (quotes
  // inside strings are escaped, and no nested object has these keys); both filled-in values are plain hex text.
  const line = payload
    .toString('utf8')
    .replace('"entry_hash":""', `"entry_hash":"${unsigned.entry_hash}"`)
    .replace('"signature":""', `"signature":"${unsigned.signature}"`)
  return { entry: unsigned, line }
}

// Keys read with payload["..."] in Bernstein's _entry_from_payload, in its order: the first one absent is reported.
const REQUIRED_KEYS = [
  'schema_version',
  'id',
  'ts_ns',
  'prev_entry_hash',
  'entry_hash',
  'tracker_name',
  'ticket_id',
  'action',
  'input_prompt_hash',
  'output_blob_hash',
  'cost_usd',
  'tokens_in',
  'tokens_out',
  'signature',
] as const

const HASH_KEYS = ['prev_entry_hash', 'entry_hash', 'input_prompt_hash', 'output_blob_hash'] as const

const ACTOR_KEYS = ['session_id', 'role', 'model'] as const

function has(obj: PyObject, key: string): boolean {
  return Object.hasOwn(obj, key)
}

function notSubscriptable(value: PyValue): string {
  // The TypeError Python raises for value["session_id"] when value is not a dict.
  if (typeof value === 'string') return "string indices must be integers, not 'str'"
  if (Array.isArray(value)) return 'list indices must be integers or slices, not str'
  return `'${pythonTypeName(value)}' object is not subscriptable`
}

function optionalString(obj: PyObject, key: string): Result<string | null, 'invalid_entry'> {
  const value = has(obj, key) ? obj[key] : null
  if (value === null || value === undefined) return ok(null)
  if (typeof value === 'string') return ok(value)
  return fail('invalid_entry', `${key} must be a string or null, got ${pythonTypeName(value)}`)
}

/**
 * Checks and converts one parsed log line. Texts follow Bernstein (`'schema_version'` for a missing key,
 * `unknown tracker-audit action: 'delete'`, `entry_hash must start with 'sha256:', got 'x'`); beyond Bernstein, the
 * field types are checked too (it would crash or hash whatever it got). Unknown keys are ignored, as in Bernstein,
 * so they drop out of the recomputed hash. Never throws.
 */
export function parseTrackerEntry(value: PyValue): TrackerEntryParseResult {
  const invalid = (detail: string): TrackerEntryParseResult => fail('invalid_entry', detail)
  if (!isPyObject(value)) return invalid(`'${pythonTypeName(value)}' object has no attribute 'get'`)

  const actorValue: PyValue = has(value, 'actor') ? (value['actor'] as PyValue) : {}
  if (!isPyObject(actorValue)) return invalid(notSubscriptable(actorValue))
  for (const key of ACTOR_KEYS) if (!has(actorValue, key)) return invalid(`'${key}'`)
  for (const key of REQUIRED_KEYS) if (!has(value, key)) return invalid(`'${key}'`)

  const schemaVersion = value['schema_version'] as PyValue
  if (!isPyInt(schemaVersion) || Number(schemaVersion) !== TRACKER_AUDIT_SCHEMA_VERSION) {
    return invalid(`unsupported tracker-audit schema_version: ${pythonStr(schemaVersion)}`)
  }
  const action = value['action'] as PyValue
  if (Array.isArray(action) || isPyObject(action)) return invalid(`unhashable type: '${pythonTypeName(action)}'`)
  if (typeof action !== 'string' || !(TRACKER_AUDIT_ACTIONS as readonly string[]).includes(action)) {
    return invalid(`unknown tracker-audit action: ${pythonRepr(action)}`)
  }
  for (const key of HASH_KEYS) {
    const hash = value[key] as PyValue
    if (typeof hash !== 'string') return invalid(`'${pythonTypeName(hash)}' object has no attribute 'startswith'`)
    if (!hash.startsWith('sha256:')) return invalid(`${key} must start with 'sha256:', got ${pythonRepr(hash)}`)
  }

  const actor: Partial<TrackerActor> = {}
  for (const key of ACTOR_KEYS) {
    const field = actorValue[key] as PyValue
    if (typeof field !== 'string') return invalid(`actor.${key} must be a string, got ${pythonTypeName(field)}`)
    actor[key] = field
  }
  for (const key of ['id', 'tracker_name', 'ticket_id', 'signature'] as const) {
    const field = value[key] as PyValue
    if (typeof field !== 'string') return invalid(`${key} must be a string, got ${pythonTypeName(field)}`)
  }
  const tsNs = value['ts_ns'] as PyValue
  if (!isPyInt(tsNs)) return invalid(`ts_ns must be an int, got ${pythonTypeName(tsNs)}`)
  for (const key of ['tokens_in', 'tokens_out'] as const) {
    const field = value[key] as PyValue
    if (!isPyInt(field)) return invalid(`${key} must be an int, got ${pythonTypeName(field)}`)
  }
  const cost = value['cost_usd'] as PyValue
  if (!isPyFloat(cost) && !isPyInt(cost)) return invalid(`cost_usd must be a float, got ${pythonTypeName(cost)}`)
  const costNumber = cost instanceof PyFloat ? cost.value : Number(cost)
  if (!Number.isFinite(costNumber)) return invalid('Out of range float values are not JSON compliant')

  const optional: Record<string, string | null> = {}
  for (const key of ['etag_before', 'etag_after', 'idempotency_key', 'lifecycle_event_id', 'failure_category', 'failure_detail']) {
    const field = optionalString(value, key)
    if (!field.ok) return field
    optional[key] = field.value
  }

  const entry: TrackerAuditEntry = {
    schema_version: TRACKER_AUDIT_SCHEMA_VERSION,
    id: value['id'] as string,
    ts_ns: BigInt(tsNs),
    prev_entry_hash: value['prev_entry_hash'] as string,
    entry_hash: value['entry_hash'] as string,
    tracker_name: value['tracker_name'] as string,
    ticket_id: value['ticket_id'] as string,
    etag_before: optional['etag_before'] ?? null,
    etag_after: optional['etag_after'] ?? null,
    action: action as TrackerAuditAction,
    actor: actor as TrackerActor,
    input_prompt_hash: value['input_prompt_hash'] as string,
    output_blob_hash: value['output_blob_hash'] as string,
    // Keep the kind that was read: a float re-prints as a float, an int (foreign writer) as an int.
    cost_usd: cost instanceof PyFloat ? cost : typeof cost === 'bigint' ? Number(cost) : (cost as number),
    tokens_in: value['tokens_in'] as number | bigint,
    tokens_out: value['tokens_out'] as number | bigint,
    idempotency_key: optional['idempotency_key'] ?? null,
    lifecycle_event_id: optional['lifecycle_event_id'] ?? null,
    signature: value['signature'] as string,
    failure_category: optional['failure_category'] ?? null,
    failure_detail: optional['failure_detail'] ?? null,
  }
  return ok(entry)
}
