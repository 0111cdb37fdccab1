import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PyFloat, parsePythonJson, pythonCanonical } from '../../../src/canonical/python-json.js'
import {
  GENESIS_PREV_HASH,
  buildTrackerEntry,
  chainVerificationBody,
  computeTrackerEntryHash,
  computeTrackerSignature,
  parseTrackerEntry,
  trackerEntryLine,
  trackerSigningPayload,
  verifyTrackerAuditFile,
  verifyTrackerAuditLines,
} from '../../../src/lineage/tracker-audit.js'
import { vectorBytes, vectorJson, vectorPath, vectorText } from '../../helpers/vectors.js'
import { buildSourceEntries, sourceKey, sourceMeta } from './source-log.js'

const scratch = mkdtempSync(join(tmpdir(), 'tracker-audit-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

function linesOf(...parts: string[]): string[] {
  return vectorText(...parts).split('\n')
}

describe('building entries (tracker_audit/source_log.meta.json inputs)', () => {
  const entries = buildSourceEntries()

  it('reproduces source_log.jsonl byte for byte', () => {
    const text = entries.map((entry) => trackerEntryLine(entry)).join('')
    expect(Buffer.from(text, 'utf8')).toEqual(vectorBytes('tracker_audit', 'source_log.jsonl'))
  })

  it('matches every signing payload, entry hash and signature of the meta file', () => {
    expect(GENESIS_PREV_HASH).toBe(sourceMeta.genesis_prev_entry_hash)
    entries.forEach((entry, index) => {
      const expected = sourceMeta.per_entry[index]
      expect(trackerSigningPayload(entry).toString('utf8')).toBe(expected?.signing_payload_utf8)
      expect(entry.entry_hash).toBe(expected?.entry_hash)
      expect(entry.signature).toBe(expected?.signature)
      expect(computeTrackerEntryHash(entry)).toBe(entry.entry_hash)
      expect(computeTrackerSignature(entry, sourceKey)).toBe(entry.signature)
    })
  })

  it('prints cost_usd as a Python float and big token counts exactly', () => {
    const costs = entries.map((entry) => /"cost_usd":([^,]+),/.exec(trackerEntryLine(entry))?.[1])
    expect(costs).toEqual(['0.0', '0.0015', '12.5', '1e-07', '100.0'])
    expect(trackerEntryLine(entries[3]!)).toContain('"tokens_in":1099511627776,')
    expect(trackerEntryLine(entries[0]!)).toContain('"ts_ns":1700000000000000000}')
  })

  it('refuses an unknown action when building (programmer misuse)', () => {
    expect(() =>
      buildTrackerEntry(
        {
          trackerName: 'jira',
          ticketId: 'X-1',
          action: 'delete' as never,
          actor: { session_id: 's', role: 'r', model: 'm' },
          inputPrompt: '',
          outputBlob: '',
        },
        { prevEntryHash: GENESIS_PREV_HASH, key: sourceKey },
      ),
    ).toThrow("unknown tracker-audit action: 'delete'")
  })

  it('defaults the id to a UUIDv7 and ts_ns to now', () => {
    const before = BigInt(Date.now()) * 1_000_000n
    const entry = buildTrackerEntry(
      {
        trackerName: 'jira',
        ticketId: 'X-1',
        action: 'claim',
        actor: { session_id: 's', role: 'r', model: 'm' },
        inputPrompt: 'a',
        outputBlob: 'b',
      },
      { prevEntryHash: GENESIS_PREV_HASH, key: sourceKey },
    )
    expect(entry.id).toMatch(/^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/)
    expect(entry.ts_ns >= before - 1_000_000_000n).toBe(true)
    expect(entry.cost_usd).toBeInstanceOf(PyFloat)
  })
})

describe('verifyTrackerAuditFile on the shared vectors', () => {
  const meta = vectorJson<{
    tampered_variants: Record<string, { file: string; verify_with_source_key: { ok: boolean; entry_count: number; failures: string[] } }>
  }>('tracker_audit', 'source_log.meta.json')

  it('source_log.jsonl verifies with the source key: ok, 5 entries', async () => {
    expect(await verifyTrackerAuditFile(vectorPath('tracker_audit', 'source_log.jsonl'), sourceKey)).toEqual({ ok: true, value: { entries: 5 } })
  })

  it('a wrong key fails on line 1', async () => {
    const wrong = Buffer.from('fedcba9876543210'.repeat(4), 'ascii')
    expect(await verifyTrackerAuditFile(vectorPath('tracker_audit', 'source_log.jsonl'), wrong)).toEqual({
      ok: false,
      code: 'signature_mismatch',
      detail: 'line 1: signature mismatch (HMAC failed)',
      entries: 0,
    })
  })

  it.each(Object.entries(meta.tampered_variants))('%s gives Bernstein’s result', async (name, variant) => {
    // The API's view of the verdict ({ ok, entries, failure }) is what the vectors record.
    const result = chainVerificationBody(await verifyTrackerAuditFile(vectorPath(variant.file), sourceKey))
    const expected = variant.verify_with_source_key
    expect(result.ok).toBe(expected.ok)
    expect(result.entries).toBe(expected.entry_count)
    if (name === 't4_line4_truncated') {
      // The text in parentheses is Python's decoder message; only the prefix is pinned.
      expect(result.failure?.startsWith('line 4: invalid JSON (')).toBe(true)
      expect(result.failure).toBe(expected.failures[0])
    } else {
      expect(result.failure).toBe(expected.failures[0] ?? null)
    }
  })

  it('t5 (0.00150 for 0.0015) verifies because the parsed value is re-printed', async () => {
    expect(vectorText('tracker_audit', 't5_number_lexeme_line2.jsonl')).toContain('"cost_usd":0.00150,')
    const result = await verifyTrackerAuditFile(vectorPath('tracker_audit', 't5_number_lexeme_line2.jsonl'), sourceKey)
    expect(result).toEqual({ ok: true, value: { entries: 5 } })
  })

  it('a missing file is ok with 0 entries', async () => {
    expect(await verifyTrackerAuditFile(join(scratch, 'absent.jsonl'), sourceKey)).toEqual({ ok: true, value: { entries: 0 } })
  })
})

describe('verifyTrackerAuditLines', () => {
  it('accepts sync and async iterables of lines', async () => {
    const lines = linesOf('tracker_audit', 'source_log.jsonl')
    expect(await verifyTrackerAuditLines(lines, sourceKey)).toEqual({ ok: true, value: { entries: 5 } })
    async function* gen(): AsyncGenerator<string> {
      for (const line of lines) yield line
    }
    expect(await verifyTrackerAuditLines(gen(), sourceKey)).toEqual({ ok: true, value: { entries: 5 } })
  })

  it('skips blank lines but counts them in line numbers', async () => {
    const lines = linesOf('tracker_audit', 't1_payload_ticket_id_line3.jsonl')
    lines.splice(1, 0, '', '   \t')
    expect(await verifyTrackerAuditLines(lines, sourceKey)).toEqual({
      ok: false,
      code: 'entry_hash_mismatch',
      detail: 'line 5: entry_hash mismatch (tampered payload)',
      entries: 2,
    })
  })

  it('strips surrounding whitespace such as a CRLF ending', async () => {
    const lines = linesOf('tracker_audit', 'source_log.jsonl').map((line) => (line ? `${line}\r` : line))
    expect(await verifyTrackerAuditLines(lines, sourceKey)).toEqual({ ok: true, value: { entries: 5 } })
  })

  it('reports schema errors with the text of the exception Bernstein raises', async () => {
    const first = linesOf('tracker_audit', 'source_log.jsonl')[0] as string
    const cases: Array<[string, string]> = [
      [first.replace('"signature":', '"signaturx":'), "line 1: schema invalid ('signature')"],
      [first.replace('"session_id":', '"sessionid":'), "line 1: schema invalid ('session_id')"],
      [first.replace('"action":"claim"', '"action":"delete"'), "line 1: schema invalid (unknown tracker-audit action: 'delete')"],
      [first.replace('"schema_version":1', '"schema_version":2'), 'line 1: schema invalid (unsupported tracker-audit schema_version: 2)'],
      [
        first.replace('"output_blob_hash":"sha256:', '"output_blob_hash":"md5:'),
        "line 1: schema invalid (output_blob_hash must start with 'sha256:', got 'md5:7ad131b1aa2ca61d50c57673649e5810e009fe7fe361b78c999ef6f4171d0e89')",
      ],
      ['[1,2]', "line 1: schema invalid ('list' object has no attribute 'get')"],
      [first.replace(/"actor":\{[^}]*\}/, '"actor":"me"'), "line 1: schema invalid (string indices must be integers, not 'str')"],
      [first.replace('"tokens_in":0', '"tokens_in":"0"'), 'line 1: schema invalid (tokens_in must be an int, got str)'],
    ]
    for (const [line, failure] of cases) {
      expect(await verifyTrackerAuditLines([line], sourceKey), failure).toEqual({ ok: false, code: 'invalid_entry', detail: failure, entries: 0 })
    }
  })

  it('reports invalid JSON with Python’s decoder message', async () => {
    const first = linesOf('tracker_audit', 'source_log.jsonl')[0] as string
    expect(await verifyTrackerAuditLines([first.slice(0, 40)], sourceKey)).toMatchObject({
      code: 'invalid_json',
      detail: 'line 1: invalid JSON (Unterminated string starting at)',
    })
    expect(await verifyTrackerAuditLines([`${first} x`], sourceKey)).toMatchObject({ code: 'invalid_json', detail: 'line 1: invalid JSON (Extra data)' })
  })

  it('ignores unknown keys as Bernstein does: they are not part of the entry and drop out of the hash', async () => {
    const first = linesOf('tracker_audit', 'source_log.jsonl')[0] as string
    const withExtra = first.replace('{', '{"approved_by":"cfo",')
    expect(await verifyTrackerAuditLines([withExtra], sourceKey)).toEqual({ ok: true, value: { entries: 1 } })
    const parsed = parseTrackerEntry(parsePythonJson(withExtra))
    expect(parsed.ok && trackerEntryLine(parsed.value)).toBe(`${first}\n`)
  })

  it('fails an invalid UTF-8 line instead of crashing', async () => {
    const first = Buffer.from(linesOf('tracker_audit', 'source_log.jsonl')[0] as string, 'utf8')
    const broken = Buffer.concat([first.subarray(0, 20), Buffer.from([0xff]), first.subarray(21)])
    expect(await verifyTrackerAuditLines([broken], sourceKey)).toEqual({
      ok: false,
      code: 'invalid_json',
      detail: 'line 1: invalid JSON (invalid UTF-8)',
      entries: 0,
    })
  })
})

describe('verifyTrackerAuditFile line splitting', () => {
  it('splits on \\n only, as Python does: a bare \\r joins two lines into one', async () => {
    const lines = linesOf('tracker_audit', 'source_log.jsonl')
    const path = join(scratch, 'cr.jsonl')
    writeFileSync(path, `${lines[0]}\r${lines.slice(1).join('\n')}`)
    expect(await verifyTrackerAuditFile(path, sourceKey)).toEqual({
      ok: false,
      code: 'invalid_json',
      detail: 'line 1: invalid JSON (Extra data)',
      entries: 0,
    })
  })

  it('handles a last line without a newline and lines split across read chunks', async () => {
    const entries = buildSourceEntries()
    const path = join(scratch, 'no-trailing-newline.jsonl')
    writeFileSync(
      path,
      entries
        .map((entry) => trackerEntryLine(entry))
        .join('')
        .slice(0, -1),
    )
    expect(await verifyTrackerAuditFile(path, sourceKey)).toEqual({ ok: true, value: { entries: 5 } })
  })
})

describe('parseTrackerEntry', () => {
  it('round-trips every source entry to the same canonical line', () => {
    for (const line of linesOf('tracker_audit', 'source_log.jsonl').filter(Boolean)) {
      const parsed = parseTrackerEntry(parsePythonJson(line))
      expect(parsed.ok).toBe(true)
      if (parsed.ok) expect(trackerEntryLine(parsed.value)).toBe(`${line}\n`)
    }
  })

  it('keeps an int cost_usd an int (a foreign writer’s int stays hashable as written)', () => {
    const first = linesOf('tracker_audit', 'source_log.jsonl')[0] as string
    const parsed = parseTrackerEntry(parsePythonJson(first.replace('"cost_usd":0.0', '"cost_usd":0')))
    expect(parsed.ok).toBe(true)
    if (parsed.ok) expect(pythonCanonical(parsed.value.cost_usd)).toBe('0')
  })

  it('defaults absent optional fields to null, as Bernstein’s payload.get does', () => {
    const first = linesOf('tracker_audit', 'source_log.jsonl')[0] as string
    const parsed = parseTrackerEntry(parsePythonJson(first.replace('"failure_detail":null,', '')))
    expect(parsed.ok && parsed.value.failure_detail).toBe(null)
  })

  it('rejects a non-sha256 hash and an unknown action with Bernstein’s texts', () => {
    const body = parsePythonJson(linesOf('tracker_audit', 'source_log.jsonl')[0] as string) as Record<string, unknown>
    expect(parseTrackerEntry({ ...(body as object), prev_entry_hash: 'x' } as never)).toEqual({
      ok: false,
      code: 'invalid_entry',
      detail: "prev_entry_hash must start with 'sha256:', got 'x'",
    })
    expect(parseTrackerEntry({ ...(body as object), action: 5 } as never)).toEqual({
      ok: false,
      code: 'invalid_entry',
      detail: 'unknown tracker-audit action: 5',
    })
  })
})
