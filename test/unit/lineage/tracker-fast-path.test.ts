/**
 * The verifier's fast path for canonical lines (src/lineage/tracker-fast-path.ts) must give exactly the verdict of
 * the reference path (`fastPath: false`): same per-line return, same result, same head hash, on every input. Real
 * HMAC keys and hashes throughout.
 *
 * The property test builds valid chains with arbitrary field values, mutates one line (spacing, key order, number
 * forms, unknown and duplicate keys, escapes, lone surrogates, truncation, flipped characters), often re-signs it so
 * the reference path accepts the mutated form, and compares both verifiers. Reproducible with a fixed seed; a longer
 * campaign:
 *
 *   FUZZ_RUNS=20000 FUZZ_SEED=$RANDOM npx vitest run test/unit/lineage/tracker-fast-path.test.ts
 */
import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { dumpsPython, parsePythonJson, pythonCanonical } from '../../../src/canonical/python-json.js'
import type { PyObject, PyValue } from '../../../src/canonical/python-json.js'
import { sha256Prefixed } from '../../../src/crypto/sha256-prefixed.js'
import {
  GENESIS_PREV_HASH,
  TRACKER_AUDIT_ACTIONS,
  TrackerAuditVerifier,
  buildTrackerEntry,
  chainVerificationBody,
  parseTrackerLine,
  trackerEntryLine,
  trackerSigningPayload,
} from '../../../src/lineage/tracker-audit.js'
import type { TrackerAuditEntry, TrackerAuditLine, TrackerEntryInput, TrackerLineFailure } from '../../../src/lineage/tracker-audit.js'
import { vectorText } from '../../helpers/vectors.js'
import { sourceKey } from './source-log.js'
import { fuzzSettings } from '../../helpers/fuzz.js'

const { runs: RUNS, seed: SEED } = fuzzSettings(1000)
const TIMEOUT_MS = Math.max(60_000, RUNS * 50)

/** The verdict in the flat form the checks read (the API's `{ ok, entries, failure }`), with the failure code. */
interface Verdict {
  returns: Array<TrackerLineFailure | null>
  ok: boolean
  entries: number
  failure: string | null
  code: string | null
  headHash: string
}

function verify(lines: readonly TrackerAuditLine[], fastPath: boolean): { verdict: Verdict; fastPathLines: number } {
  const verifier = new TrackerAuditVerifier(sourceKey, { fastPath })
  const returns = lines.map((line) => verifier.push(line))
  const result = verifier.result()
  const verdict = { returns, ...chainVerificationBody(result), code: result.ok ? null : result.code, headHash: verifier.headHash }
  return { verdict, fastPathLines: verifier.fastPathLines }
}

/** Verifies with and without the fast path, asserts the same verdict, and says how many lines took the fast path. */
function verifyBothWays(lines: readonly TrackerAuditLine[]): { verdict: Verdict; fastPathLines: number } {
  const reference = verify(lines, false)
  const fast = verify(lines, true)
  expect(reference.fastPathLines).toBe(0)
  expect(fast.verdict).toEqual(reference.verdict)
  return fast
}

function textLines(...parts: string[]): string[] {
  return vectorText(...parts)
    .split('\n')
    .filter((line) => line.length > 0)
}

/**
 * Gives a line the entry_hash and signature the reference path computes for it (optionally after setting its
 * prev_entry_hash), so a mutated but still acceptable form really is accepted there. Lines it cannot parse are
 * returned as they are.
 */
function resign(line: string, prevEntryHash?: string): string {
  let text = line
  if (prevEntryHash !== undefined) text = text.replace(/("prev_entry_hash"\s*:\s*)"[^"\\]*"/g, `$1"${prevEntryHash}"`)
  const parsed = parseTrackerLine(text, 1)
  if (parsed === null || !parsed.ok) return text
  let payload: Buffer
  try {
    payload = trackerSigningPayload(parsed.value)
  } catch {
    return text
  }
  const entryHash = sha256Prefixed(payload)
  const signature = createHmac('sha256', sourceKey).update(payload).digest('hex')
  return text.replace(/("entry_hash"\s*:\s*)"[^"\\]*"/g, `$1"${entryHash}"`).replace(/("signature"\s*:\s*)"[^"\\]*"/g, `$1"${signature}"`)
}

/** The entry_hash of a line as the reference path reads it, for relinking the next line. */
function entryHashOf(line: string): string | undefined {
  const parsed = parseTrackerLine(line, 1)
  return parsed?.ok ? parsed.value.entry_hash : undefined
}

function hex4(code: number, upper: boolean): string {
  const hex = code.toString(16).padStart(4, '0')
  return '\\u' + (upper ? hex.toUpperCase() : hex)
}

// ---------------------------------------------------------------------------------------------------------------
// Targeted cases: each says whether the fast path must take the line, and the reference verdict

describe('the fast path on Bernstein’s vectors', () => {
  it('takes every line of source_log.jsonl, escaped quotes included, as bytes and as text', () => {
    const lines = textLines('tracker_audit', 'source_log.jsonl')
    expect(lines[4]).toContain('\\"etag\\"')
    for (const input of [lines, lines.map((line) => Buffer.from(`${line}\n`, 'utf8'))]) {
      const { verdict, fastPathLines } = verifyBothWays(input)
      expect(verdict.ok).toBe(true)
      expect(verdict.entries).toBe(5)
      expect(fastPathLines).toBe(5)
    }
  })

  it('leaves the non-canonical 0.00150 of t5 to the reference path, which accepts it', () => {
    const { verdict, fastPathLines } = verifyBothWays(textLines('tracker_audit', 't5_number_lexeme_line2.jsonl'))
    expect(verdict).toMatchObject({ ok: true, entries: 5, failure: null })
    expect(fastPathLines).toBe(4)
  })

  it.each([
    ['t1_payload_ticket_id_line3', 'line 3: entry_hash mismatch (tampered payload)'],
    ['t2_forged_entry_hash_line3', 'line 3: signature mismatch (HMAC failed)'],
    ['t3_line2_removed', 'line 2: prev_entry_hash mismatch'],
    ['t4_line4_truncated', "line 4: invalid JSON (Expecting ',' delimiter)"],
  ])('%s fails the same way with and without it', (name, failure) => {
    const { verdict } = verifyBothWays(textLines('tracker_audit', `${name}.jsonl`))
    expect(verdict.ok).toBe(false)
    expect(verdict.failure?.startsWith(failure)).toBe(true)
  })
})

describe('the fast path on edited lines', () => {
  const actor = { session_id: 's', role: 'r', model: 'm' }
  function line(input: Partial<TrackerEntryInput> = {}, tsNs: bigint = 1_700_000_000_000_000_000n): string {
    const entry = buildTrackerEntry(
      { trackerName: 'jira', ticketId: 'PROJ-1', action: 'claim', actor, inputPrompt: 'p', outputBlob: 'o', ...input },
      { prevEntryHash: GENESIS_PREV_HASH, key: sourceKey, id: '0190f5a0000070008000000000000001', tsNs },
    )
    return trackerEntryLine(entry).slice(0, -1)
  }
  const base = line({ costUsd: 0, tokensIn: 1 })

  const flipFirst = (lead: string) => (match: string) => lead + (match.slice(lead.length) === '0' ? '1' : '0')
  const surrogateFailure = (unit: string): string => `line 1: schema invalid ('utf-8' codec can't encode character '\\${unit}' in position`

  // [what, line, fast path taken, reference verdict: true for ok, else the start of the failure text]
  const cases: Array<[string, string, boolean, true | string]> = [
    ['canonical', base, true, true],
    ['ts_ns beyond 2^64', line({}, 2n ** 70n + 1n), true, true],
    ['negative ts_ns and tokens', line({ tokensIn: -5, tokensOut: -(2n ** 80n) }, -123n), true, true],
    ['astral, U+2028 and BOM characters', line({ ticketId: '😀\u2028\ufeffé', failureDetail: '\u{10ffff}' }), true, true],
    ['quotes, backslashes and control characters', line({ ticketId: 'a"b\\c\n\u0000\u001f\u007f', etagBefore: '\b\f\r\t' }), true, true],
    ['cost 1e-07', line({ costUsd: 1e-7 }), true, true],
    ['cost 1e+16', line({ costUsd: 1e16 }), true, true],
    ['cost -0.0', line({ costUsd: -0 }), true, true],
    ['cost 0.1', line({ costUsd: 0.1 }), true, true],
    ['cost 0.0 stored as 0', resign(base.replace('"cost_usd":0.0,', '"cost_usd":0,')), false, true],
    ['cost 0.1 stored as 0.10', resign(line({ costUsd: 0.1 }).replace('"cost_usd":0.1,', '"cost_usd":0.10,')), false, true],
    [
      'tokens_in 1 stored as 1.0',
      resign(base.replace('"tokens_in":1,', '"tokens_in":1.0,')),
      false,
      'line 1: schema invalid (tokens_in must be an int, got float)',
    ],
    ['tokens_in with a leading zero', resign(base.replace('"tokens_in":1,', '"tokens_in":01,')), false, 'line 1: invalid JSON ('],
    ['ts_ns with an exponent', resign(base.replace(/"ts_ns":\d+\}$/, '"ts_ns":1.7e18}')), false, 'line 1: schema invalid (ts_ns must be an int, got float)'],
    ['ts_ns 0 written -0', resign(line({}, 0n).replace('"ts_ns":0}', '"ts_ns":-0}')), false, true],
    [
      'schema_version 1.0',
      resign(base.replace('"schema_version":1,', '"schema_version":1.0,')),
      false,
      'line 1: schema invalid (unsupported tracker-audit schema_version: 1.0)',
    ],
    ['a space after a colon', resign(base.replace('"action":', '"action": ')), false, true],
    ['an unknown key in sorted position', resign(base.replace('{', '{"aaa":1,')), false, true],
    ['an unknown key in the actor', resign(base.replace('"actor":{', '"actor":{"a":1,')), false, true],
    ['a duplicate key with the same value', resign(base.replace(/\}$/, ',"action":"claim"}')), false, true],
    ['é escaped as \\u00e9', resign(line({ ticketId: 'é' }).replace('"é"', '"\\u00e9"')), false, true],
    ['a control character escaped in upper case', resign(line({ ticketId: '\u001f' }).replace('\\u001f', '\\u001F')), false, true],
    ['a newline escaped as \\u000a', resign(line({ ticketId: '\n' }).replace('\\n', '\\u000a')), false, true],
    ['a slash escaped', resign(line({ ticketId: '/' }).replace('"/"', '"\\/"')), false, true],
    ['an escaped surrogate pair', resign(line({ ticketId: '😀' }).replace('😀', '\\ud83d\\ude00')), false, true],
    ['an escaped lone surrogate', base.replace('"ticket_id":"', '"ticket_id":"\\ud800'), false, surrogateFailure('ud800')],
    ['a prev_entry_hash without sha256:', resign(base, 'md5:00'), false, "line 1: schema invalid (prev_entry_hash must start with 'sha256:', got 'md5:00')"],
    ['an unknown action', resign(base.replace('"claim"', '"delete"')), false, "line 1: schema invalid (unknown tracker-audit action: 'delete')"],
    ['a raw control character in a string', base.replace('"ticket_id":"', '"ticket_id":"\u0001'), false, 'line 1: invalid JSON (Invalid control character at)'],
    ['truncated', base.slice(0, -1), false, 'line 1: invalid JSON ('],
    [
      'a flipped entry_hash character',
      base.replace(/"entry_hash":"sha256:./, flipFirst('"entry_hash":"sha256:')),
      true,
      'line 1: entry_hash mismatch (tampered payload)',
    ],
    ['a flipped signature character', base.replace(/"signature":"./, flipFirst('"signature":"')), true, 'line 1: signature mismatch (HMAC failed)'],
    ['a changed last ts_ns digit', base.replace(/\d\}$/, (end) => (end === '0}' ? '1}' : '0}')), true, 'line 1: entry_hash mismatch (tampered payload)'],
    [
      'a wrong prev_entry_hash',
      resign(base, `sha256:${'1'.repeat(64)}`),
      true,
      `line 1: prev_entry_hash mismatch (expected ${GENESIS_PREV_HASH}, got sha256:${'1'.repeat(64)})`,
    ],
  ]

  it.each(cases)('%s', (_what, text, fast, expected) => {
    for (const input of [text, Buffer.from(`${text}\n`, 'utf8')]) {
      const { verdict, fastPathLines } = verifyBothWays([input])
      if (expected === true) expect(verdict).toMatchObject({ ok: true, entries: 1, failure: null })
      else expect(verdict.failure?.startsWith(expected), verdict.failure ?? 'ok').toBe(true)
      expect(fastPathLines).toBe(fast ? 1 : 0)
    }
  })

  it('leaves a raw lone surrogate (possible only in a line given as text) to the reference path', () => {
    const text = base.replace('"ticket_id":"', '"ticket_id":"\udc00')
    const { verdict, fastPathLines } = verifyBothWays([text])
    expect(verdict.failure?.startsWith(surrogateFailure('udc00')), verdict.failure ?? 'ok').toBe(true)
    expect(fastPathLines).toBe(0)
  })
})

// ---------------------------------------------------------------------------------------------------------------
// The property

const SPECIAL_CHARS = [
  ...['"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u0001', '\u001f', ' ', '\u007f', '\u00e9', '\u2028'],
  ...['\ufeff', '\ue000', '\uffff', '😀', '\u{10ffff}', 'a', 'Z', '0', ':', ',', '{', '}'],
]

const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: fc.constantFrom(...'abcdefXYZ0123456789-_.@'), maxLength: 16 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...SPECIAL_CHARS), maxLength: 8 }) },
)
const optionalText = fc.option(text, { nil: null })
const int = fc.oneof(fc.maxSafeInteger(), fc.bigInt({ min: -(2n ** 90n), max: 2n ** 90n }), fc.constantFrom(0, 1, -1))
const cost = fc.oneof(
  fc.constantFrom(0, -0, 0.1, 1e-7, 1e16, 1.5e16, 1e-5, 0.0001, 12.5, 100, 5e-324, 1.7976931348623157e308),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
)

const entryInput: fc.Arbitrary<TrackerEntryInput & { id: string; tsNs: bigint }> = fc.record({
  trackerName: text,
  ticketId: text,
  action: fc.constantFrom(...TRACKER_AUDIT_ACTIONS),
  actor: fc.record({ session_id: text, role: text, model: text }),
  inputPrompt: text,
  outputBlob: text,
  etagBefore: optionalText,
  etagAfter: optionalText,
  costUsd: cost,
  tokensIn: int,
  tokensOut: int,
  idempotencyKey: optionalText,
  lifecycleEventId: optionalText,
  failureCategory: optionalText,
  failureDetail: optionalText,
  id: text.filter((s) => s.length > 0),
  tsNs: fc.oneof(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), fc.constantFrom(0n, 1_700_000_000_000_000_000n)),
})

const NUMBER_EDITS: ReadonlyArray<readonly [RegExp, string]> = [
  [/"cost_usd":(-?\d+)\.0,/, '"cost_usd":$1,'],
  [/"cost_usd":([^,]*\.[^,e]*),/, '"cost_usd":$10,'],
  [/"cost_usd":(-?\d)(?:\.(\d+))?e([-+])0?(\d+),/, '"cost_usd":$1.$2E$3$4,'],
  [/"tokens_in":(-?\d+),/, '"tokens_in":$1.0,'],
  [/"tokens_out":(-?\d+),/, '"tokens_out":$1e0,'],
  [/"schema_version":1,/, '"schema_version":1.0,'],
  [/"ts_ns":(-?\d+)\}$/, '"ts_ns":$1.0}'],
  [/"ts_ns":(-?)(\d+)\}$/, '"ts_ns":$10$2}'],
  [/"ts_ns":0\}$/, '"ts_ns":-0}'],
]

type Mutation =
  | { kind: 'none' }
  | { kind: 'space'; at: number; what: string }
  | { kind: 'reorder' }
  | { kind: 'number'; edit: number }
  | { kind: 'unknownKey'; first: boolean }
  | { kind: 'duplicateKey'; key: string }
  | { kind: 'escape'; field: string; at: number; upper: boolean }
  | { kind: 'loneSurrogate'; escaped: boolean; unit: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'flip'; field: string; at: number; to: string }

const STRING_FIELDS = ['id', 'tracker_name', 'ticket_id', 'etag_before', 'failure_detail'] as const

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'none' as const }) },
  fc.record({
    kind: fc.constant('space' as const),
    at: fc.nat(),
    what: fc.constantFrom(' ', '\t', '\n', '\r\n', '\u00a0'),
  }),
  fc.constant({ kind: 'reorder' as const }),
  fc.record({ kind: fc.constant('number' as const), edit: fc.nat(NUMBER_EDITS.length - 1) }),
  fc.record({ kind: fc.constant('unknownKey' as const), first: fc.boolean() }),
  fc.record({
    kind: fc.constant('duplicateKey' as const),
    key: fc.constantFrom('action', 'ticket_id', 'entry_hash', 'ts_ns', 'actor'),
  }),
  fc.record({
    kind: fc.constant('escape' as const),
    field: fc.constantFrom(...STRING_FIELDS),
    at: fc.nat(),
    upper: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('loneSurrogate' as const),
    escaped: fc.boolean(),
    unit: fc.constantFrom(0xd800, 0xdbff, 0xdc00, 0xdfff),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('flip' as const),
    field: fc.constantFrom('entry_hash', 'signature', 'prev_entry_hash', 'ts_ns', 'any'),
    at: fc.nat(),
    to: fc.constantFrom('0', 'f', 'é', '"', '\\', ' ', '}', '\u0000', '\ud800'),
  }),
)

function replaceAt(s: string, at: number, length: number, by: string): string {
  return s.slice(0, at) + by + s.slice(at + length)
}

function mutate(line: string, entry: TrackerAuditEntry, m: Mutation): string {
  switch (m.kind) {
    case 'none':
      return line
    case 'space': {
      const seps = [...line.matchAll(/[,:{}]/g)].map((match) => match.index)
      const at = seps[m.at % seps.length] ?? 0
      return replaceAt(line, at + 1, 0, m.what)
    }
    case 'reorder': {
      const body = parsePythonJson(line) as PyObject
      const reordered: PyObject = {}
      for (const key of Object.keys(body).reverse()) reordered[key] = body[key] as PyValue
      return dumpsPython(reordered, { separators: [',', ':'], ensureAscii: false })
    }
    case 'number': {
      const [pattern, replacement] = NUMBER_EDITS[m.edit] ?? NUMBER_EDITS[0]!
      return line.replace(pattern, replacement)
    }
    case 'unknownKey':
      return m.first ? line.replace('{', '{"aaa":null,') : line.replace(/\}$/, ',"zzz":[1,{"a":2}]}')
    case 'duplicateKey': {
      const value: PyValue = m.key === 'ts_ns' ? entry.ts_ns : m.key === 'actor' ? { ...entry.actor } : (entry[m.key as 'action'] as string)
      return line.replace(/\}$/, `,"${m.key}":${pythonCanonical(value)}}`)
    }
    case 'escape': {
      const value = entry[m.field as (typeof STRING_FIELDS)[number]]
      if (typeof value !== 'string' || value.length === 0) return line
      const literal = pythonCanonical(value)
      const k = m.at % value.length
      // The code unit at k as \uXXXX between the canonical literals of what precedes and follows it.
      const before = JSON.stringify(value.slice(0, k)).slice(0, -1)
      const after = JSON.stringify(value.slice(k + 1)).slice(1)
      const escaped = before + hex4(value.charCodeAt(k), m.upper) + after
      return line.replace(`"${m.field}":${literal}`, () => `"${m.field}":${escaped}`)
    }
    case 'loneSurrogate': {
      const unit = m.escaped ? hex4(m.unit, false) : String.fromCharCode(m.unit)
      return line.replace('"ticket_id":"', () => `"ticket_id":"${unit}`)
    }
    case 'truncate':
      return line.slice(0, m.at % line.length)
    case 'flip': {
      let at = m.at % line.length
      if (m.field !== 'any') {
        const start = line.indexOf(`"${m.field}":`)
        if (start < 0) return line
        const valueStart = start + m.field.length + 3
        const valueEnd = m.field === 'ts_ns' ? line.length - 1 : line.indexOf('"', valueStart + 1) + 1
        at = valueStart + (m.at % Math.max(1, valueEnd - valueStart))
      }
      const to = line[at] === m.to ? 'a' : m.to
      return replaceAt(line, at, 1, to)
    }
  }
}

interface Scenario {
  inputs: Array<TrackerEntryInput & { id: string; tsNs: bigint }>
  target: number
  mutation: Mutation
  resigned: boolean
  asBytes: boolean
  ending: string
  blankAt: number | null
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  inputs: fc.array(entryInput, { minLength: 1, maxLength: 4 }),
  target: fc.nat(),
  mutation,
  resigned: fc.boolean(),
  asBytes: fc.boolean(),
  ending: fc.constantFrom('', '\n', '\r\n', ' \t'),
  blankAt: fc.option(fc.nat(), { nil: null }),
})

describe('property: the fast path never changes a verdict', () => {
  it(
    `gives the reference verdict on ${RUNS} generated chains with one edited line (seed ${SEED})`,
    () => {
      let linesTaken = 0
      let linesSeen = 0
      let untouchedCanonicalLines = 0
      fc.assert(
        fc.property(scenario, (s) => {
          let prev = GENESIS_PREV_HASH
          const entries = s.inputs.map(({ id, tsNs, ...input }) => {
            const entry = buildTrackerEntry(input, { prevEntryHash: prev, key: sourceKey, id, tsNs })
            prev = entry.entry_hash
            return entry
          })
          const lines = entries.map((entry) => trackerEntryLine(entry).slice(0, -1))
          const target = s.target % lines.length
          lines[target] = mutate(lines[target] ?? '', entries[target]!, s.mutation)
          if (s.resigned) {
            // Re-sign the edited line and relink (and re-sign) every later one, so the chain stays valid for the
            // reference path whenever it accepts the edited form.
            lines[target] = resign(lines[target] ?? '')
            for (let i = target + 1; i < lines.length; i++) {
              const before = entryHashOf(lines[i - 1] ?? '')
              if (before === undefined) break
              lines[i] = resign(lines[i] ?? '', before)
            }
          }
          const physical: string[] = lines.map((line) => line + s.ending)
          if (s.blankAt !== null) physical.splice(s.blankAt % (physical.length + 1), 0, s.ending)
          const input: TrackerAuditLine[] = s.asBytes ? physical.map((line) => Buffer.from(line, 'utf8')) : physical

          const { verdict, fastPathLines } = verifyBothWays(input)
          linesTaken += fastPathLines
          linesSeen += lines.length
          if (s.mutation.kind === 'none') {
            // Every line a writer produces is canonical: all verify, and all take the fast path.
            untouchedCanonicalLines += lines.length
            expect(verdict).toMatchObject({ ok: true, entries: lines.length, failure: null })
            expect(fastPathLines).toBe(lines.length)
          }
        }),
        { seed: SEED, numRuns: RUNS },
      )
      // The generated inputs exercise both outcomes of the fast path.
      expect(untouchedCanonicalLines).toBeGreaterThan(0)
      expect(linesTaken).toBeGreaterThan(untouchedCanonicalLines)
      expect(linesTaken).toBeLessThan(linesSeen)
    },
    TIMEOUT_MS,
  )
})

describe('fastPathLines', () => {
  it('counts the lines the fast path read, and stays 0 when it is off', () => {
    const lines = textLines('tracker_audit', 'source_log.jsonl')
    const on = new TrackerAuditVerifier(sourceKey)
    const off = new TrackerAuditVerifier(sourceKey, { fastPath: false })
    for (const line of lines) {
      on.push(line)
      off.push(line)
    }
    expect(on.fastPathLines).toBe(5)
    expect(off.fastPathLines).toBe(0)
    expect(on.result()).toEqual(off.result())
  })
})
