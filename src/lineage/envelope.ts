/**
 * The `bernstein.lineage_v2` envelope (behaviour doc §7.2): a tracker-audit chain carried inside an A2A message, bound
 * by an unkeyed `chain_digest`.
 *
 * @module
 */
import { isPyInt, isPyObject, PyFloat, pythonCanonicalBytes, pythonRepr, pythonTypeName } from '../canonical/python-json.js'
import type { PyObject, PyValue } from '../canonical/python-json.js'
import type { Schema } from '../contract.js'
import { sha256Prefixed } from '../crypto/sha256-prefixed.js'
import { type Result, fail, ok } from '../result.js'
import { GENESIS_PREV_HASH, computeTrackerEntryHash, parseTrackerEntry, trackerEntryBody, trackerEntryBytes } from './tracker-entry.js'
import type { TrackerAuditEntry } from './tracker-entry.js'

/** Field name of the envelope inside an A2A message. */
export const LINEAGE_ENVELOPE_FIELD = 'bernstein.lineage_v2'

/** Envelope schema version written by {@link wrapLineageChain}. */
export const LINEAGE_ENVELOPE_SCHEMA_VERSION = 1 satisfies Schema<'LineageEnvelope'>['schema_version']

/**
 * A parsed or freshly wrapped envelope: `source_issuer` is the issuer id from the sender's capability card (not
 * verified by Bernstein on import), `chain_digest` is `sha256:` over the canonical bytes of each entry followed by
 * `\n`. It differs from the contract's `LineageEnvelope` in two fields: an imported envelope keeps whatever integer
 * `schema_version` it carries (Bernstein applies `int()` without checking it), and its entries are parsed.
 */
export type LineageEnvelope = Omit<Schema<'LineageEnvelope'>, 'schema_version' | 'entries'> & {
  schema_version: number
  entries: TrackerAuditEntry[]
}

/** Stable codes for the ways an envelope can be rejected. */
export type LineageEnvelopeFailure =
  | 'not_object'
  | 'missing_field'
  | 'missing_source_issuer'
  | 'invalid_chain_digest'
  | 'entries_not_list'
  | 'invalid_entry'
  | 'digest_mismatch'
  | 'invalid_schema_version'
  | 'broken_link'
  | 'entry_hash_mismatch'
  | 'issuer_mismatch'

/**
 * The envelope, or why it was rejected: `detail` is Bernstein's text where Bernstein has the check, `entryIndex` the
 * offending entry's index for entry-level failures.
 */
export type LineageEnvelopeResult = Result<LineageEnvelope, LineageEnvelopeFailure, { entryIndex?: number }>

/** Stricter checks than Bernstein's `from_payload`, all off by default. */
export interface LineageEnvelopeParseOptions {
  /** Require each carried entry's `prev_entry_hash` to equal the previous entry's `entry_hash`. */
  checkLinks?: boolean
  /**
   * With `checkLinks`: when every carried entry has the same ticket id (a per-ticket envelope, which is what a
   * delegation carries), an entry may follow a gap where the sender's other tickets' entries were left out. It must
   * still not link to any carried entry but the one before it (which would mean reordered or missing entries of
   * this ticket). Envelopes spanning several tickets, or none, must link throughout.
   */
  allowTicketGaps?: boolean
  /** Require the first carried entry to start a chain (`prev_entry_hash` = the genesis hash): no truncated head. */
  requireGenesis?: boolean
  /** Require each carried entry's `entry_hash` to recompute (unkeyed: no sender key needed). */
  checkEntryHashes?: boolean
  /** Require `source_issuer` to equal this issuer (from a capability card the caller has verified). */
  expectedIssuer?: string
}

/**
 * `chain_digest`: SHA-256 over `canonical(entry) + "\n"` for every entry in order, i.e. the SHA-256 of the JSONL log
 * holding exactly these entries. Order-sensitive and unkeyed.
 */
export function chainDigest(entries: Iterable<TrackerAuditEntry>): string {
  return sha256Prefixed(jsonlParts(entries))
}

/** The JSONL log of `entries`, a part at a time, so that a long chain is hashed without being joined. */
function* jsonlParts(entries: Iterable<TrackerAuditEntry>): Generator<Uint8Array | string> {
  for (const entry of entries) {
    yield trackerEntryBytes(entry)
    yield '\n'
  }
}

/** Options of {@link wrapLineageChain}: both filters apply together (AND), as in Bernstein. */
export interface WrapLineageChainOptions {
  sourceIssuer: string
  trackerName?: string
  ticketId?: string
}

/**
 * Wraps a chain (Bernstein's `wrap_lineage_chain`): all entries, or those matching every given filter. A filtered
 * envelope is not a contiguous chain, so its prev links do not line up.
 */
export function wrapLineageChain(entries: Iterable<TrackerAuditEntry>, options: WrapLineageChainOptions): LineageEnvelope {
  if (typeof options.sourceIssuer !== 'string' || options.sourceIssuer.length === 0) {
    throw new TypeError('sourceIssuer must be a non-empty string')
  }
  const selected: TrackerAuditEntry[] = []
  for (const entry of entries) {
    if (options.trackerName !== undefined && entry.tracker_name !== options.trackerName) continue
    if (options.ticketId !== undefined && entry.ticket_id !== options.ticketId) continue
    selected.push(entry)
  }
  return {
    schema_version: LINEAGE_ENVELOPE_SCHEMA_VERSION,
    source_issuer: options.sourceIssuer,
    chain_digest: chainDigest(selected),
    entries: selected,
  }
}

/** The JSON payload (`LineageEnvelope.to_payload`). */
export function lineageEnvelopePayload(envelope: LineageEnvelope): PyObject {
  return {
    schema_version: envelope.schema_version,
    source_issuer: envelope.source_issuer,
    chain_digest: envelope.chain_digest,
    entries: envelope.entries.map((entry) => trackerEntryBody(entry)),
  }
}

/** Python-canonical bytes of the payload: what a cross-org boundary entry's `output_blob_hash` covers. */
export function lineageEnvelopePayloadBytes(envelope: LineageEnvelope): Buffer {
  return pythonCanonicalBytes(lineageEnvelopePayload(envelope))
}

/** `{"bernstein.lineage_v2": payload}`, to splice into an A2A message. */
export function lineageEnvelopeField(envelope: LineageEnvelope): PyObject {
  return { [LINEAGE_ENVELOPE_FIELD]: lineageEnvelopePayload(envelope) }
}

/** Whether every entry carries one and the same non-empty ticket id. */
function isSingleTicket(entries: readonly TrackerAuditEntry[]): boolean {
  const ticket = entries[0]?.ticket_id
  return typeof ticket === 'string' && ticket.length > 0 && entries.every((entry) => entry.ticket_id === ticket)
}

function reject(code: LineageEnvelopeFailure, detail: string, entryIndex?: number): LineageEnvelopeResult {
  return entryIndex === undefined ? fail(code, detail) : fail(code, detail, { entryIndex })
}

// Python's int(x) on the carried schema_version, which Bernstein applies without checking the value.
function pythonInt(value: PyValue): number | string {
  if (typeof value === 'boolean') return value ? 1 : 0
  if (isPyInt(value)) return Number(value)
  if (value instanceof PyFloat || typeof value === 'number') {
    const x = value instanceof PyFloat ? value.value : value
    if (Number.isNaN(x)) return 'cannot convert float NaN to integer'
    if (!Number.isFinite(x)) return 'cannot convert float infinity to integer'
    return Math.trunc(x)
  }
  if (typeof value === 'string') {
    if (/^\s*[+-]?\d+(_\d+)*\s*$/.test(value)) return Number(value.replace(/_/g, '').trim())
    return `invalid literal for int() with base 10: ${pythonRepr(value)}`
  }
  return `int() argument must be a string, a bytes-like object or a real number, not '${pythonTypeName(value)}'`
}

/**
 * Rebuilds an envelope from its payload, with Bernstein's checks and texts (`LineageEnvelope.from_payload`): an
 * object, a non-empty `source_issuer`, a `sha256:` `chain_digest`, a list of well-formed entries, and a digest that
 * recomputes. Carried HMACs are not checked (they need the sender's key); the optional checks add link continuity,
 * entry hashes and the expected issuer. Never throws.
 *
 * Read the payload with {@link parsePythonJson}: `JSON.parse` forgets which numbers were floats (`1700000000.0`),
 * and the digest is over Python's spelling of them.
 *
 * @example
 * const payload = parsePythonJson(readFileSync('envelope.json', 'utf8')) // `bernstein-a2a lineage envelope wrap`
 * const verdict = parseLineageEnvelope(payload, { checkLinks: true, checkEntryHashes: true, expectedIssuer: 'acme-orch' })
 * if (verdict.ok) console.log(verdict.value.source_issuer, verdict.value.entries.length, 'entries')
 * else console.error(verdict.code, verdict.detail, verdict.entryIndex)
 */
export function parseLineageEnvelope(payload: PyValue, options: LineageEnvelopeParseOptions = {}): LineageEnvelopeResult {
  if (!isPyObject(payload)) return reject('not_object', 'lineage envelope payload must be an object')
  const sourceIssuer = payload['source_issuer']
  const digest = payload['chain_digest']
  const rawEntries = payload['entries']
  if (typeof sourceIssuer !== 'string' || sourceIssuer.length === 0) {
    return reject('missing_source_issuer', "lineage envelope missing 'source_issuer'")
  }
  if (typeof digest !== 'string' || !digest.startsWith('sha256:')) {
    return reject('invalid_chain_digest', "lineage envelope missing valid 'chain_digest'")
  }
  if (!Array.isArray(rawEntries)) return reject('entries_not_list', "lineage envelope 'entries' must be a list")

  const entries: TrackerAuditEntry[] = []
  for (const [index, raw] of rawEntries.entries()) {
    const parsed = parseTrackerEntry(raw)
    if (!parsed.ok) return reject('invalid_entry', parsed.detail, index)
    entries.push(parsed.value)
  }
  let recomputed: string
  try {
    recomputed = chainDigest(entries)
  } catch (error) {
    return reject('invalid_entry', error instanceof Error ? error.message : String(error))
  }
  if (recomputed !== digest) {
    return reject('digest_mismatch', `lineage envelope chain_digest mismatch (carried ${digest}, recomputed ${recomputed})`)
  }
  const version = pythonInt(Object.hasOwn(payload, 'schema_version') ? (payload['schema_version'] as PyValue) : LINEAGE_ENVELOPE_SCHEMA_VERSION)
  if (typeof version === 'string') return reject('invalid_schema_version', version)

  if (options.checkEntryHashes) {
    for (const [index, entry] of entries.entries()) {
      if (computeTrackerEntryHash(entry) !== entry.entry_hash) {
        return reject('entry_hash_mismatch', `lineage envelope entry ${index}: entry_hash mismatch (tampered payload)`, index)
      }
    }
  }
  if (options.requireGenesis && entries.length > 0 && entries[0]?.prev_entry_hash !== GENESIS_PREV_HASH) {
    return reject(
      'broken_link',
      `lineage envelope entry 0: prev_entry_hash mismatch (expected ${GENESIS_PREV_HASH}, got ${entries[0]?.prev_entry_hash ?? ''})`,
      0,
    )
  }
  if (options.checkLinks) {
    const gapsAllowed = options.allowTicketGaps === true && isSingleTicket(entries)
    const carried = gapsAllowed ? new Set(entries.map((entry) => entry.entry_hash)) : null
    for (let index = 1; index < entries.length; index++) {
      const previous = entries[index - 1] as TrackerAuditEntry
      const entry = entries[index] as TrackerAuditEntry
      const linked = entry.prev_entry_hash === previous.entry_hash
      // A gap: the entry follows one the envelope does not carry (another ticket's).
      const gap = carried !== null && !carried.has(entry.prev_entry_hash)
      if (!linked && !gap) {
        return reject(
          'broken_link',
          `lineage envelope entry ${index}: prev_entry_hash mismatch (expected ${previous.entry_hash}, got ${entry.prev_entry_hash})`,
          index,
        )
      }
    }
  }
  if (options.expectedIssuer !== undefined && sourceIssuer !== options.expectedIssuer) {
    return reject(
      'issuer_mismatch',
      `lineage envelope source_issuer ${pythonRepr(sourceIssuer)} does not match the verified issuer ${pythonRepr(options.expectedIssuer)}`,
    )
  }
  return ok({ schema_version: version, source_issuer: sourceIssuer, chain_digest: digest, entries })
}

/**
 * Extracts and parses the envelope carried in an A2A message (`LineageEnvelope.from_envelope_field`). A message
 * without the field (or with a non-object there) is rejected with Bernstein's text.
 *
 * @example
 * const message = parsePythonJson(readFileSync('inbound-task.json', 'utf8')) // carries LINEAGE_ENVELOPE_FIELD
 * const verdict = parseLineageEnvelopeField(message, { requireGenesis: true })
 * if (!verdict.ok) console.error(verdict.code, verdict.detail) // e.g. missing_field
 */
export function parseLineageEnvelopeField(a2aEnvelope: PyValue, options: LineageEnvelopeParseOptions = {}): LineageEnvelopeResult {
  const payload = isPyObject(a2aEnvelope) ? a2aEnvelope[LINEAGE_ENVELOPE_FIELD] : undefined
  if (!isPyObject(payload)) {
    return reject('missing_field', `A2A envelope missing '${LINEAGE_ENVELOPE_FIELD}' field`)
  }
  return parseLineageEnvelope(payload, options)
}
