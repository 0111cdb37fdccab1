import { createHash, createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { pythonCanonicalBytes } from '../../../src/canonical/python-json.js'
import {
  buildSpineRow,
  computeSpineEntryHash,
  deriveLineageKey,
  spineHead,
  spineHeadText,
  spineRowBody,
  spineRowLine,
  verifySpine,
} from '../../../src/lineage/spine.js'
import type { SpineRow } from '../../../src/lineage/spine.js'
import { vectorBytes, vectorJson, vectorText } from '../../helpers/vectors.js'

interface ReceiptMeta {
  inputs: {
    hmac_master_key_ascii: string
    "derived_lineage_key_hex(HKDF-SHA256, salt=None, info='lineage', L=32)": string
  }
  content_hash: string
  spine_entry_hash_preimage_utf8: string
  spine_hmac_preimage_utf8: string
  binding: { entry_hash: string; operator_hmac: string }
  receipt2: { content_hash: string; entry_hash: string; operator_hmac: string }
  spine_verify: { status: string; count: number; errors: string[] }
}

const meta = vectorJson<ReceiptMeta>('a2a_receipt', 'receipt.meta.json')
const minimal = vectorJson<{ inputs: { master_key_ascii: string }; derived_lineage_key_hex: string }>('a2a_receipt', 'receipt_minimal.json')
const master = Buffer.from(meta.inputs.hmac_master_key_ascii, 'ascii')
const lineageKey = deriveLineageKey(master)

function rows(): SpineRow[] {
  const first = buildSpineRow(
    {
      prevHash: '',
      artifactPath: '.sdd/a2a/responses/5f2c9a1b7e3d.json',
      contentHash: meta.content_hash,
      actor: 'a2a-server',
      stepId: 'a2a:5f2c9a1b7e3d',
      model: '',
      timestampNs: 1_700_000_000_123_456_789n,
    },
    lineageKey,
  )
  const second = buildSpineRow(
    {
      prevHash: first.entry_hash,
      artifactPath: '.sdd/a2a/responses/9e8d7c6b5a40.json',
      contentHash: meta.receipt2.content_hash,
      actor: 'a2a-server',
      stepId: 'a2a:9e8d7c6b5a40',
      model: '',
      timestampNs: 1_700_000_001_123_456_789n,
    },
    lineageKey,
  )
  return [first, second]
}

describe('deriveLineageKey', () => {
  it('is HKDF-SHA256 with no salt, info "lineage", 32 bytes', () => {
    expect(lineageKey.toString('hex')).toBe(meta.inputs["derived_lineage_key_hex(HKDF-SHA256, salt=None, info='lineage', L=32)"])
    expect(deriveLineageKey(Buffer.from(minimal.inputs.master_key_ascii, 'ascii')).toString('hex')).toBe(minimal.derived_lineage_key_hex)
  })
})

describe('spine rows (a2a_receipt/spine.jsonl)', () => {
  it('hashes the domain tag plus canonical fields, and tags the row minus hmac', () => {
    const [first] = rows()
    expect(first).toBeDefined()
    const preimage = Buffer.from(meta.spine_entry_hash_preimage_utf8, 'utf8')
    expect(first!.entry_hash).toBe('sha256:' + createHash('sha256').update(preimage).digest('hex'))
    expect(pythonCanonicalBytes(spineRowBody(first!, false)).toString('utf8')).toBe(meta.spine_hmac_preimage_utf8)
    expect(first!.entry_hash).toBe(meta.binding.entry_hash)
    expect(first!.hmac).toBe(meta.binding.operator_hmac)
    expect(computeSpineEntryHash(first!)).toBe(first!.entry_hash)
  })

  it('reproduces spine.jsonl and spine.head byte for byte', () => {
    const built = rows()
    expect(built[1]!.entry_hash).toBe(meta.receipt2.entry_hash)
    expect(built[1]!.hmac).toBe(meta.receipt2.operator_hmac)
    expect(Buffer.from(built.map((row) => spineRowLine(row)).join(''), 'utf8')).toEqual(vectorBytes('a2a_receipt', 'spine.jsonl'))
    expect(Buffer.from(spineHeadText(spineHead(built, lineageKey)), 'utf8')).toEqual(vectorBytes('a2a_receipt', 'spine.head'))
  })

  it('keeps nanosecond timestamps exact (beyond 2^53)', () => {
    expect(spineRowLine(rows()[0]!)).toContain('"timestamp":1700000000123456789,')
  })

  it('includes W3C trace fields in hash and hmac only when given', () => {
    const plain = rows()[0]!
    const traced = buildSpineRow(
      {
        prevHash: '',
        artifactPath: plain.artifact_path,
        contentHash: plain.content_hash,
        actor: plain.actor,
        stepId: plain.step_id,
        model: plain.model,
        timestampNs: plain.timestamp,
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      },
      lineageKey,
    )
    expect(traced.entry_hash).not.toBe(plain.entry_hash)
    expect(verifySpine(spineRowLine(traced), master).status).toBe('ok')
  })
})

describe('verifySpine', () => {
  const text = vectorText('a2a_receipt', 'spine.jsonl')

  it('verifies the vector spine with the master key: ok, count 2', () => {
    const result = verifySpine(vectorBytes('a2a_receipt', 'spine.jsonl'), master, {
      head: vectorBytes('a2a_receipt', 'spine.head'),
    })
    expect(result).toEqual({ status: meta.spine_verify.status, count: meta.spine_verify.count, errors: [] })
  })

  it('no_entries for an empty spine (a distinct status, not a pass)', () => {
    expect(verifySpine('', master)).toEqual({ status: 'no_entries', count: 0, errors: [] })
    expect(verifySpine(Buffer.from('\n\n'), master).status).toBe('no_entries')
  })

  it('tampered, with Bernstein’s texts, for a changed payload byte or a wrong key', () => {
    expect(verifySpine(text.replace('a2a:9e8d7c6b5a40', 'a2a:9e8d7c6b5a41'), master)).toEqual({
      status: 'tampered',
      count: 2,
      errors: ['line 2: entry_hash mismatch', 'line 2: hmac mismatch'],
    })
    expect(verifySpine(text, Buffer.from('0'.repeat(64))).errors).toEqual(['line 1: hmac mismatch', 'line 2: hmac mismatch'])
  })

  it('reports a removed row as a prev_hash break', () => {
    const second = text.split('\n')[1] as string
    expect(verifySpine(`${second}\n`, master)).toEqual({
      status: 'tampered',
      count: 1,
      errors: ["line 1: prev_hash break (expected '', got 'sha256:cce1329b9')"],
    })
  })

  it('reports malformed rows, missing fields and unknown versions', () => {
    const first = text.split('\n')[0] as string
    expect(verifySpine(`${first}\nnot json\n`, master).errors).toEqual(['line 2: malformed JSON'])
    expect(verifySpine('[1]\n', master).errors).toEqual(['line 1: row is not an object'])
    expect(verifySpine('{"v":2,"actor":"x"}\n', master).errors).toEqual([
      "line 1: missing fields ['artifact_path', 'content_hash', 'entry_hash', 'hmac', 'model', 'prev_hash', 'step_id', 'timestamp']",
    ])
    expect(verifySpine(first.replace('"v":2', '"v":3'), master).errors).toEqual(['line 1: unsupported entry version 3'])
  })

  it('seal_only when every row is a journal seal or an artifact attempt', () => {
    const seal = buildSpineRow(
      {
        prevHash: '',
        artifactPath: '.sdd/runtime/journal.jsonl',
        contentHash: 'sha256:' + '1'.repeat(64),
        actor: 'bernstein',
        stepId: 'replay-journal-head:run-1',
        model: 'none',
        timestampNs: 1,
      },
      lineageKey,
    )
    expect(verifySpine(spineRowLine(seal), master)).toEqual({ status: 'seal_only', count: 1, errors: [] })
  })

  it('checks spine.head when given: a stale or forged head is tampered', () => {
    const built = rows()
    const staleHead = spineHeadText(spineHead(built.slice(0, 1), lineageKey))
    const stale = verifySpine(text, master, { head: staleHead })
    expect(stale.status).toBe('tampered')
    expect(stale.errors[0]).toMatch(/^spine\.head: does not match the rows/)
    const forged = spineHeadText({ ...spineHead(built, lineageKey), hmac: '0'.repeat(64) })
    expect(verifySpine(text, master, { head: forged }).errors).toEqual(['spine.head: hmac mismatch'])
  })

  it('verifies v1 rows with the raw master key and no domain tag', () => {
    const fields = {
      prev_hash: '',
      artifact_path: 'a.txt',
      content_hash: 'sha256:' + '2'.repeat(64),
      actor: 'x',
      step_id: 's',
      model: 'm',
      timestamp: 5,
    }
    const entryHash = 'sha256:' + createHash('sha256').update(pythonCanonicalBytes(fields)).digest('hex')
    const body = { v: 1, ...fields, entry_hash: entryHash }
    const hmac = createHmac('sha256', master).update(pythonCanonicalBytes(body)).digest('hex')
    const line = pythonCanonicalBytes({ ...body, hmac }).toString('utf8')
    expect(verifySpine(line, master).status).toBe('ok')
  })
})
