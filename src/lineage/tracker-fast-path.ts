/**
 * Fast reading of a tracker-audit line that is already exactly canonical, which is what every writer (ours and
 * Bernstein's) produces. The slow path (lossless parse, schema check, re-serialisation) stays the reference: this
 * one answers only for a line that is byte for byte the canonical form of an entry passing the schema check, and
 * otherwise returns null so the caller takes the slow path. It never produces an error of its own.
 *
 * How: one regular expression, generated from the field table below in the canonical key order, describes the
 * canonical line of a schema-valid entry. For a line it matches, the slow path would parse the same values, accept
 * them, and print the very same text back:
 * - a string literal holds raw characters other than `"`, `\` and U+0000–U+001F, and only the escapes the
 *   canonical printer itself writes for those (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, lowercase `\u00xx` for the
 *   other control characters): JSON.stringify, which the printer uses, maps the denoted string back to the same
 *   literal. No `\u` escape of anything else is allowed, so an escaped surrogate never gets through; a raw lone
 *   surrogate (possible only in a line given as text), which the printer writes raw but cannot encode as UTF-8, is
 *   excluded separately;
 * - ints are written without a sign on 0 and without leading zeros, so they print back as written (any size);
 * - `cost_usd` is accepted only when Python's float repr of its value is its lexeme (so `0` or `0.00150` go slow);
 * - there is no room for whitespace, other keys, duplicate keys, or a different order.
 * Hence the signing payload is the line with the `entry_hash` and `signature` values blanked to `""`.
 *
 * @module
 */
import { compareCodePoints, pythonFloatRepr } from '../canonical/python-json.js'
import { TRACKER_AUDIT_ACTIONS, TRACKER_AUDIT_SCHEMA_VERSION } from './tracker-entry.js'

/** What the verifier needs from a canonical line. */
export interface CanonicalTrackerLine {
  prevEntryHash: string
  entryHash: string
  signature: string
  /** The signing payload as text: the line with the `entry_hash` and `signature` values replaced by `""`. */
  signingPayload: string
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

// Characters the canonical printer writes as they are (python-json.ts NEEDS_ESCAPE is the complement).
const RAW_RUN = '[^"\\\\\\u0000-\\u001f]*'
// The escapes it writes (JSON.stringify's): short forms, else \u00xx in lowercase for the other control characters.
const ESCAPE = '\\\\(?:["\\\\bfnrt]|u00(?:0[0-7bef]|1[0-9a-f]))'
// The content of a canonical string literal (written as an unrolled loop, so matching never backtracks).
const CANONICAL_CONTENT = `${RAW_RUN}(?:${ESCAPE}${RAW_RUN})*`
const CANONICAL_STRING = `"${CANONICAL_CONTENT}"`
// The values read out of the match (hashes and signature) are taken only without escapes, so they need no decoding.
const PLAIN_CONTENT = RAW_RUN
// An int lexeme that prints back unchanged (`-0` and `007` would not).
const INT = '(?:0|-?[1-9][0-9]*)'
// Any JSON number; whether it is Python's repr of its value is checked after the match.
const NUMBER = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?'

const ACTOR_FIELDS = ['session_id', 'role', 'model'] as const

/** The keys in canonical order, each with its `{"key":` or `,"key":` lead as a pattern. */
function sortedLeads(keys: readonly string[]): Array<{ key: string; lead: string }> {
  return [...keys].sort(compareCodePoints).map((key, i) => ({ key, lead: `${i === 0 ? '\\{' : ','}${escapeRegExp(JSON.stringify(key))}:` }))
}

const ACTOR_PATTERN =
  sortedLeads(ACTOR_FIELDS)
    .map(({ lead }) => lead + CANONICAL_STRING)
    .join('') + '\\}'
const OPTIONAL_STRING = `(?:null|${CANONICAL_STRING})`

// Each entry key with the pattern of a value that passes the slow path's schema check (parseTrackerEntry).
// entry_hash and signature are not listed: they get the named groups that split the line (see below).
const VALUE_PATTERNS: Readonly<Record<string, string>> = {
  schema_version: String(TRACKER_AUDIT_SCHEMA_VERSION),
  id: CANONICAL_STRING,
  ts_ns: INT,
  prev_entry_hash: `"(?<prevEntryHash>sha256:${PLAIN_CONTENT})"`,
  tracker_name: CANONICAL_STRING,
  ticket_id: CANONICAL_STRING,
  etag_before: OPTIONAL_STRING,
  etag_after: OPTIONAL_STRING,
  action: `"(?:${TRACKER_AUDIT_ACTIONS.map(escapeRegExp).join('|')})"`,
  actor: ACTOR_PATTERN,
  input_prompt_hash: `"sha256:${CANONICAL_CONTENT}"`,
  output_blob_hash: `"sha256:${CANONICAL_CONTENT}"`,
  cost_usd: `(?<cost>${NUMBER})`,
  tokens_in: INT,
  tokens_out: INT,
  idempotency_key: OPTIONAL_STRING,
  lifecycle_event_id: OPTIONAL_STRING,
  failure_category: OPTIONAL_STRING,
  failure_detail: OPTIONAL_STRING,
}

/**
 * The line as head + entry_hash literal + middle + signature literal + tail, so the signing payload is
 * head + `""` + middle + `""` + tail with no index arithmetic (cheaper than the `d` flag's indices).
 */
function canonicalLinePattern(): string {
  const leads = sortedLeads([...Object.keys(VALUE_PATTERNS), 'entry_hash', 'signature'])
  let pattern = '^(?<head>'
  for (const { key, lead } of leads) {
    pattern += lead
    if (key === 'entry_hash') pattern += `)"(?<entryHash>sha256:${PLAIN_CONTENT})"(?<middle>`
    else if (key === 'signature') pattern += `)"(?<signature>${PLAIN_CONTENT})"(?<tail>`
    else pattern += VALUE_PATTERNS[key] ?? ''
  }
  // head, middle, tail in that order only if entry_hash sorts before signature, which it does ('e' < 's').
  if (leads.findIndex(({ key }) => key === 'entry_hash') > leads.findIndex(({ key }) => key === 'signature')) {
    throw new Error('tracker fast path: entry_hash must sort before signature')
  }
  return pattern + '\\})$'
}

/** Matches exactly the canonical lines of schema-valid entries (cost_usd's lexeme is checked separately). */
export const CANONICAL_TRACKER_LINE = new RegExp(canonicalLinePattern())

// Only for lines given as text: bytes decoded strictly cannot hold a lone surrogate.
const LONE_SURROGATE = /[\ud800-\udfff]/u

// Costs repeat from line to line (often 0.0), and Python's float repr is the priciest piece to rebuild.
let lastCost = 0
let lastCostRepr = pythonFloatRepr(0)

function isPythonFloatRepr(lexeme: string): boolean {
  const value = Number(lexeme)
  if (!Number.isFinite(value)) return false
  if (!Object.is(value, lastCost)) {
    lastCostRepr = pythonFloatRepr(value)
    lastCost = value
  }
  return lastCostRepr === lexeme
}

/**
 * Reads a stripped, decoded line if it is exactly canonical and its entry passes the schema check; null otherwise
 * (anything else, valid or not, is for the slow path). `fromBytes`: the text was strictly decoded from UTF-8, so it
 * cannot hold a lone surrogate.
 */
export function readCanonicalTrackerLine(text: string, fromBytes: boolean): CanonicalTrackerLine | null {
  const groups = CANONICAL_TRACKER_LINE.exec(text)?.groups
  if (groups === undefined) return null
  const { head, entryHash, middle, signature, tail, prevEntryHash, cost } = groups
  if (
    head === undefined ||
    entryHash === undefined ||
    middle === undefined ||
    signature === undefined ||
    tail === undefined ||
    prevEntryHash === undefined ||
    cost === undefined
  ) {
    return null
  }
  if (!isPythonFloatRepr(cost)) return null
  if (!fromBytes && LONE_SURROGATE.test(text)) return null
  return { prevEntryHash, entryHash, signature, signingPayload: `${head}""${middle}""${tail}` }
}
