import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parsePythonJson, pythonCanonical } from '../../../src/canonical/python-json.js'
import type { PyObject, PyValue } from '../../../src/canonical/python-json.js'
import { CROSS_ORG_BOUNDARY_MARKER, buildCrossOrgBoundaryEntry, crossOrgBoundaryMarkerBytes } from '../../../src/lineage/boundary.js'
import {
  LINEAGE_ENVELOPE_FIELD,
  chainDigest,
  lineageEnvelopeField,
  lineageEnvelopePayload,
  lineageEnvelopePayloadBytes,
  parseLineageEnvelope,
  parseLineageEnvelopeField,
  wrapLineageChain,
} from '../../../src/lineage/envelope.js'
import type { LineageEnvelope } from '../../../src/lineage/envelope.js'
import { chainVerificationBody, trackerEntryLine, verifyTrackerAuditLines } from '../../../src/lineage/tracker-audit.js'
import { vectorBytes, vectorJson, vectorText } from '../../helpers/vectors.js'
import { buildSourceEntries, readEntries, receiverKey, sourceKey } from './source-log.js'

interface LineageMeta {
  chain_digest: string
  sha256_of_source_log_file: string
  filtered_chain_digest: string
  receiver: {
    hmac_key_ascii: string
    actor: { session_id: string; role: string; model: string }
    boundary_patched_time_ns: number
    boundary_patched_uuid7_hex: string
    boundary_entry: Record<string, unknown>
    marker_body_utf8: string
    marker_body_sha256: string
    envelope_payload_sha256: string
    verify_with_receiver_key: { ok: boolean; entry_count: number; failures: string[] }
    verify_with_source_key: { ok: boolean; entry_count: number; failures: string[] }
  }
  envelope_parse_cases: Record<string, { ok: boolean; message?: string }>
}

const meta = vectorJson<LineageMeta>('lineage_v2', 'lineage.meta.json')
const sha256 = (data: Uint8Array | string): string => 'sha256:' + createHash('sha256').update(data).digest('hex')

function payloadObject(file: string): PyObject {
  return parsePythonJson(vectorText('lineage_v2', file)) as PyObject
}

function expectError(result: ReturnType<typeof parseLineageEnvelope>, message: string | undefined): void {
  expect(result.ok).toBe(false)
  if (!result.ok) expect(result.detail).toBe(message)
}

describe('chainDigest and wrapLineageChain', () => {
  const entries = readEntries('tracker_audit', 'source_log.jsonl')

  it('the chain digest is the SHA-256 of the JSONL log holding exactly those entries', () => {
    expect(chainDigest(entries)).toBe(meta.chain_digest)
    expect(sha256(vectorBytes('tracker_audit', 'source_log.jsonl'))).toBe(meta.sha256_of_source_log_file)
    expect(chainDigest(buildSourceEntries())).toBe(meta.chain_digest)
  })

  it('reproduces envelope_payload.json byte for byte', () => {
    const envelope = wrapLineageChain(entries, { sourceIssuer: 'acme-orch' })
    expect(lineageEnvelopePayloadBytes(envelope)).toEqual(vectorBytes('lineage_v2', 'envelope_payload.json'))
    expect(sha256(lineageEnvelopePayloadBytes(envelope))).toBe(meta.receiver.envelope_payload_sha256)
  })

  it('reproduces the ENG-7 filtered envelope (2 entries, links not contiguous)', () => {
    const envelope = wrapLineageChain(entries, { sourceIssuer: 'acme-orch', ticketId: 'ENG-7' })
    expect(envelope.entries).toHaveLength(2)
    expect(envelope.chain_digest).toBe(meta.filtered_chain_digest)
    expect(lineageEnvelopePayloadBytes(envelope)).toEqual(vectorBytes('lineage_v2', 'envelope_payload_ticket_ENG-7.json'))
    expect(wrapLineageChain(entries, { sourceIssuer: 'acme-orch', ticketId: 'ENG-7', trackerName: 'jira' }).entries).toEqual([])
    expect(wrapLineageChain(entries, { sourceIssuer: 'acme-orch', trackerName: 'jira' }).entries).toHaveLength(3)
  })

  it('reproduces a2a_envelope.json when spliced into an A2A message', () => {
    const envelope = wrapLineageChain(entries, { sourceIssuer: 'acme-orch' })
    const message = { ...lineageEnvelopeField(envelope), id: '5f2c9a1b7e3d', kind: 'task' }
    expect(Buffer.from(pythonCanonical(message), 'utf8')).toEqual(vectorBytes('lineage_v2', 'a2a_envelope.json'))
  })
})

describe('parseLineageEnvelope (LineageEnvelope.from_payload cases of lineage.meta.json)', () => {
  const cases = meta.envelope_parse_cases

  it('untampered: accepted, and re-serialises to the same bytes', () => {
    const result = parseLineageEnvelope(payloadObject('envelope_payload.json'))
    expect(result.ok).toBe(cases['untampered']?.ok)
    if (result.ok) {
      expect(result.value.source_issuer).toBe('acme-orch')
      expect(result.value.entries).toHaveLength(5)
      expect(lineageEnvelopePayloadBytes(result.value)).toEqual(vectorBytes('lineage_v2', 'envelope_payload.json'))
    }
  })

  it('entry_tokens_out_changed: digest mismatch with the recomputed digest', () => {
    const payload = payloadObject('envelope_payload.json')
    const entries = payload['entries'] as PyObject[]
    // Entry 2's tokens_out 345 → 346 is the mutation whose recomputed digest lineage.meta.json records.
    entries[1]!['tokens_out'] = 346
    expectError(parseLineageEnvelope(payload), cases['entry_tokens_out_changed']?.message)
  })

  it('entries_reordered: digest mismatch (the digest is order-sensitive)', () => {
    const payload = payloadObject('envelope_payload.json')
    payload['entries'] = (payload['entries'] as PyValue[]).slice().reverse()
    expectError(parseLineageEnvelope(payload), cases['entries_reordered']?.message)
  })

  it('missing_source_issuer, bad_chain_digest_prefix, entries_not_list', () => {
    const noIssuer = payloadObject('envelope_payload.json')
    delete noIssuer['source_issuer']
    expectError(parseLineageEnvelope(noIssuer), cases['missing_source_issuer']?.message)
    const emptyIssuer = payloadObject('envelope_payload.json')
    emptyIssuer['source_issuer'] = ''
    expectError(parseLineageEnvelope(emptyIssuer), cases['missing_source_issuer']?.message)

    const badDigest = payloadObject('envelope_payload.json')
    badDigest['chain_digest'] = 'md5:' + (badDigest['chain_digest'] as string).slice(7)
    expectError(parseLineageEnvelope(badDigest), cases['bad_chain_digest_prefix']?.message)

    const notList = payloadObject('envelope_payload.json')
    notList['entries'] = { '0': 'x' }
    expectError(parseLineageEnvelope(notList), cases['entries_not_list']?.message)
  })

  it('unknown_action: the entry’s own error text, tagged with its index', () => {
    const payload = payloadObject('envelope_payload.json')
    ;(payload['entries'] as PyObject[])[2]!['action'] = 'delete'
    const result = parseLineageEnvelope(payload)
    expectError(result, cases['unknown_action']?.message)
    if (!result.ok) expect(result).toMatchObject({ code: 'invalid_entry', entryIndex: 2 })
  })

  it('carried_hmac_garbled_but_digest_recomputed: accepted (carried HMACs are not checked)', () => {
    const entries = readEntries('tracker_audit', 'source_log.jsonl')
    entries[0] = { ...entries[0]!, signature: 'f'.repeat(64) }
    const envelope = wrapLineageChain(entries, { sourceIssuer: 'acme-orch' })
    const result = parseLineageEnvelope(lineageEnvelopePayload(envelope))
    expect(result.ok).toBe(cases['carried_hmac_garbled_but_digest_recomputed']?.ok)
  })

  it('no_lineage_field: parseLineageEnvelopeField without the field', () => {
    expectError(parseLineageEnvelopeField({ id: '5f2c9a1b7e3d', kind: 'task' }), cases['no_lineage_field']?.message)
    expectError(parseLineageEnvelopeField([]), cases['no_lineage_field']?.message)
    const ok = parseLineageEnvelopeField(parsePythonJson(vectorText('lineage_v2', 'a2a_envelope.json')))
    expect(ok.ok).toBe(true)
  })

  it('rejects a non-object payload and an entry missing a key', () => {
    expectError(parseLineageEnvelope([1]), 'lineage envelope payload must be an object')
    const payload = payloadObject('envelope_payload.json')
    delete (payload['entries'] as PyObject[])[0]!['ts_ns']
    expectError(parseLineageEnvelope(payload), "'ts_ns'")
  })

  it('defaults and converts schema_version like Python int()', () => {
    const payload = payloadObject('envelope_payload.json')
    delete payload['schema_version']
    const result = parseLineageEnvelope(payload)
    expect(result.ok && result.value.schema_version).toBe(1)
    payload['schema_version'] = 'x'
    expectError(parseLineageEnvelope(payload), "invalid literal for int() with base 10: 'x'")
  })
})

describe('optional stricter envelope checks', () => {
  const filtered = payloadObject('envelope_payload_ticket_ENG-7.json')

  it('checkLinks rejects carried entries whose prev links break; requireGenesis a chain that does not start at genesis', () => {
    const entries = readEntries('tracker_audit', 'source_log.jsonl')
    const gap = lineageEnvelopePayload(wrapLineageChain([entries[0]!, entries[2]!], { sourceIssuer: 'acme-orch' }))
    expect(parseLineageEnvelope(gap).ok).toBe(true)
    const result = parseLineageEnvelope(gap, { checkLinks: true })
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(result).toMatchObject({ code: 'broken_link', entryIndex: 1 })
      expect(result.detail).toBe(`lineage envelope entry 1: prev_entry_hash mismatch (expected ${entries[0]!.entry_hash}, got ${entries[1]!.entry_hash})`)
    }
    // The ENG-7 pair are consecutive source entries (4 and 5), so they link to each other; the first one's
    // predecessor (entry 3) is not carried.
    expect(parseLineageEnvelope(filtered, { checkLinks: true }).ok).toBe(true)
    const headless = parseLineageEnvelope(filtered, { requireGenesis: true })
    expect(headless.ok).toBe(false)
    if (!headless.ok) expect(headless.detail).toMatch(/^lineage envelope entry 0: prev_entry_hash mismatch \(expected sha256:0{64}, got sha256:bc80ff02/)
    expect(parseLineageEnvelope(payloadObject('envelope_payload.json'), { checkLinks: true, requireGenesis: true }).ok).toBe(true)
  })

  it('allowTicketGaps lets a per-ticket envelope skip other tickets’ entries, not reorder its own or span tickets', () => {
    const entries = readEntries('tracker_audit', 'source_log.jsonl')
    const wrap = (picked: number[]) =>
      lineageEnvelopePayload(
        wrapLineageChain(
          picked.map((i) => entries[i]!),
          { sourceIssuer: 'acme-orch' },
        ),
      )
    const strict = { checkLinks: true, allowTicketGaps: true, checkEntryHashes: true }
    // Entries 0 and 2 are PROJ-101's, with PROJ-101's entry 1 left out between them.
    expect(parseLineageEnvelope(wrap([0, 2]), { checkLinks: true }).ok).toBe(false)
    expect(parseLineageEnvelope(wrap([0, 2]), strict).ok).toBe(true)
    // A link to a carried entry other than the one before it: the ticket's own entries are out of order.
    const reordered = parseLineageEnvelope(wrap([0, 2, 1]), strict)
    expect(reordered.ok).toBe(false)
    if (!reordered.ok) expect(reordered).toMatchObject({ code: 'broken_link', entryIndex: 1 })
    // Across tickets (PROJ-101 and ENG-7) links must hold throughout.
    const spanning = parseLineageEnvelope(wrap([0, 2, 3]), strict)
    expect(spanning.ok).toBe(false)
    if (!spanning.ok) expect(spanning).toMatchObject({ code: 'broken_link', entryIndex: 1 })
    expect(parseLineageEnvelope(wrap([0, 1, 2, 3, 4]), strict).ok).toBe(true)
  })

  it('checkEntryHashes catches a tampered entry whose digest was recomputed', () => {
    const entries = readEntries('tracker_audit', 'source_log.jsonl')
    entries[3] = { ...entries[3]!, ticket_id: 'ENG-8' }
    const payload = lineageEnvelopePayload(wrapLineageChain(entries, { sourceIssuer: 'acme-orch' }))
    expect(parseLineageEnvelope(payload).ok).toBe(true)
    const result = parseLineageEnvelope(payload, { checkEntryHashes: true })
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result).toMatchObject({ code: 'entry_hash_mismatch', entryIndex: 3 })
  })

  it('expectedIssuer ties source_issuer to a verified card’s issuer', () => {
    const payload = payloadObject('envelope_payload.json')
    expect(parseLineageEnvelope(payload, { expectedIssuer: 'acme-orch' }).ok).toBe(true)
    expectError(
      parseLineageEnvelope(payload, { expectedIssuer: 'globex' }),
      "lineage envelope source_issuer 'acme-orch' does not match the verified issuer 'globex'",
    )
  })
})

describe('cross-org boundary entry (lineage_v2/receiver_log.jsonl)', () => {
  const receiver = meta.receiver

  function boundaryFor(envelope: LineageEnvelope) {
    const prior = readEntries('lineage_v2', 'receiver_log.jsonl')[0]!
    return buildCrossOrgBoundaryEntry(envelope, {
      actor: receiver.actor,
      ticketId: 'GLX-9',
      lifecycleEventId: 'lc-glx-1',
      prevEntryHash: prior.entry_hash,
      key: Buffer.from(receiver.hmac_key_ascii, 'ascii'),
      id: receiver.boundary_patched_uuid7_hex,
      tsNs: 1_700_000_011_000_000_000n,
    })
  }

  it('hashes the marker body into input_prompt_hash', () => {
    const parsed = parseLineageEnvelopeField(parsePythonJson(vectorText('lineage_v2', 'a2a_envelope.json')))
    if (!parsed.ok) throw new Error(parsed.detail)
    expect(crossOrgBoundaryMarkerBytes(parsed.value).toString('utf8')).toBe(receiver.marker_body_utf8)
    expect(sha256(crossOrgBoundaryMarkerBytes(parsed.value))).toBe(receiver.marker_body_sha256)
  })

  it('reproduces the boundary line of receiver_log.jsonl byte for byte', () => {
    const parsed = parseLineageEnvelopeField(parsePythonJson(vectorText('lineage_v2', 'a2a_envelope.json')))
    if (!parsed.ok) throw new Error(parsed.detail)
    const entry = boundaryFor(parsed.value)
    const lines = vectorText('lineage_v2', 'receiver_log.jsonl').split('\n')
    expect(trackerEntryLine(entry)).toBe(`${lines[1]}\n`)
    expect(entry.tracker_name).toBe(CROSS_ORG_BOUNDARY_MARKER)
    expect(entry.entry_hash).toBe(receiver.boundary_entry['entry_hash'])
    expect(entry.signature).toBe(receiver.boundary_entry['signature'])
    expect(entry.output_blob_hash).toBe(receiver.envelope_payload_sha256)
  })

  it('the receiver log verifies with the receiver key, not with the source key', async () => {
    const lines = vectorText('lineage_v2', 'receiver_log.jsonl').split('\n')
    // The API's view of the verdict ({ ok, entries, failure }) is what the vectors record.
    const good = chainVerificationBody(await verifyTrackerAuditLines(lines, receiverKey))
    expect(good).toEqual({
      ok: receiver.verify_with_receiver_key.ok,
      entries: receiver.verify_with_receiver_key.entry_count,
      failure: null,
    })
    const bad = chainVerificationBody(await verifyTrackerAuditLines(lines, sourceKey))
    expect(bad).toEqual({
      ok: receiver.verify_with_source_key.ok,
      entries: receiver.verify_with_source_key.entry_count,
      failure: receiver.verify_with_source_key.failures[0],
    })
  })

  it('binds the exact envelope: a different envelope gives a different boundary entry', () => {
    const entries = readEntries('tracker_audit', 'source_log.jsonl')
    const filtered = wrapLineageChain(entries, { sourceIssuer: 'acme-orch', ticketId: 'ENG-7' })
    const entry = boundaryFor(filtered)
    expect(entry.output_blob_hash).toBe(sha256(vectorBytes('lineage_v2', 'envelope_payload_ticket_ENG-7.json')))
    expect(entry.entry_hash).not.toBe(receiver.boundary_entry['entry_hash'])
    expect(LINEAGE_ENVELOPE_FIELD).toBe('bernstein.lineage_v2')
  })
})
