import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { dumpsPython, parsePythonJson, pythonCanonical } from '../../../src/canonical/python-json.js'
import type { PyObject } from '../../../src/canonical/python-json.js'
import { deriveLineageKey, spineHead, spineHeadText, spineRowLine } from '../../../src/lineage/spine.js'
import {
  DEFAULT_RECEIPT_KID,
  buildReceipt,
  buildReceiptSpineRow,
  canonicalResponseBytes,
  contentHash,
  ed25519PublicJwk,
  parseReceipt,
  receiptArtefactPath,
  receiptBindingBytes,
  receiptBindingDigest,
  receiptToCompactJson,
  receiptToDict,
  receiptToJson,
} from '../../../src/receipts/receipt.js'
import type { A2ATaskReceipt } from '../../../src/receipts/receipt.js'
import { vectorBytes, vectorText } from '../../helpers/vectors.js'
import { signerFromSeed } from './ed25519.js'

// Description files are parsed Python-style so that floats such as 1700000001.5 stay floats.
const meta = parsePythonJson(vectorText('a2a_receipt', 'receipt.meta.json')) as PyObject
const inputs = meta['inputs'] as PyObject
const minimal = parsePythonJson(vectorText('a2a_receipt', 'receipt_minimal.json')) as PyObject
const signer = signerFromSeed(Buffer.from(inputs['signer_ed25519_seed_hex'] as string, 'hex'))
const lineageKey = deriveLineageKey(Buffer.from(inputs['hmac_master_key_ascii'] as string, 'ascii'))

async function issue(
  response: PyObject,
  taskId: string,
  prevHash: string,
  timestampNs: bigint,
): Promise<{ receipt: A2ATaskReceipt; row: ReturnType<typeof buildReceiptSpineRow> }> {
  const row = buildReceiptSpineRow({ response, taskId, prevHash, timestampNs }, lineageKey)
  const receipt = await buildReceipt({
    response,
    taskId,
    spineRow: row,
    kid: DEFAULT_RECEIPT_KID,
    sign: signer.sign,
    publicJwk: ed25519PublicJwk(signer.publicKey, DEFAULT_RECEIPT_KID),
  })
  return { receipt, row }
}

describe('the minimal receipt (receipt_minimal.json)', () => {
  it('is rebuilt exactly from its inputs', async () => {
    const mi = minimal['inputs'] as PyObject
    const response = mi['response'] as PyObject
    const key = deriveLineageKey(Buffer.from(mi['master_key_ascii'] as string, 'ascii'))
    const minimalSigner = signerFromSeed(Buffer.from(mi['seed_hex'] as string, 'hex'))
    const row = buildReceiptSpineRow({ response, taskId: 'a2a-task-1', prevHash: '', timestampNs: 1000n }, key)
    const receipt = await buildReceipt({
      response,
      taskId: 'a2a-task-1',
      spineRow: row,
      kid: mi['kid'] as string,
      sign: minimalSigner.sign,
      publicJwk: ed25519PublicJwk(minimalSigner.publicKey, mi['kid'] as string),
    })
    expect(pythonCanonical(receiptToDict(receipt))).toBe(pythonCanonical(minimal['receipt'] as PyObject))
    expect(receiptBindingDigest(receipt)).toBe(minimal['binding_digest_hex'])
  })
})

describe('the full receipt (a2a_receipt/)', () => {
  const response = inputs['response'] as PyObject

  it('content_hash covers response.canonical.json (Python floats, literal non-ASCII)', () => {
    expect(canonicalResponseBytes(response)).toEqual(vectorBytes('a2a_receipt', 'response.canonical.json'))
    expect(contentHash(response)).toBe(meta['content_hash'])
    expect(contentHash(vectorBytes('a2a_receipt', 'response.canonical.json'))).toBe(meta['content_hash'])
  })

  it('reproduces the binding, its digest, receipt.json and receipt.compact.json byte for byte', async () => {
    const { receipt } = await issue(response, '5f2c9a1b7e3d', '', 1_700_000_000_123_456_789n)
    expect(receiptBindingBytes(receipt).toString('utf8')).toBe(meta['binding_canonical_utf8'])
    expect(receiptBindingDigest(receipt)).toBe(meta['binding_digest_hex'])
    expect(
      createHash('sha256')
        .update(meta['binding_canonical_utf8'] as string)
        .digest('hex'),
    ).toBe(meta['binding_digest_hex'])
    expect(Buffer.from(receiptToJson(receipt), 'utf8')).toEqual(vectorBytes('a2a_receipt', 'receipt.json'))
    expect(Buffer.from(receiptToCompactJson(receipt), 'utf8')).toEqual(vectorBytes('a2a_receipt', 'receipt.compact.json'))
  })

  it('reproduces response_wire.json (to_dict key order, compact, literal non-ASCII)', async () => {
    const { receipt } = await issue(response, '5f2c9a1b7e3d', '', 1_700_000_000_123_456_789n)
    const wire = dumpsPython({ ...response, receipt: receiptToDict(receipt) }, { ensureAscii: false, separators: [',', ':'] })
    expect(Buffer.from(wire, 'utf8')).toEqual(vectorBytes('a2a_receipt', 'response_wire.json'))
  })

  it('chains the second receipt and reproduces spine.jsonl / spine.head', async () => {
    const first = await issue(response, '5f2c9a1b7e3d', '', 1_700_000_000_123_456_789n)
    const inputs2 = meta['receipt2_inputs'] as PyObject
    const second = await issue(inputs2['response'] as PyObject, '9e8d7c6b5a40', first.row.entry_hash, 1_700_000_001_123_456_789n)
    expect(pythonCanonical(receiptToDict(second.receipt))).toBe(pythonCanonical(meta['receipt2'] as PyObject))
    expect(Buffer.from(spineRowLine(first.row) + spineRowLine(second.row), 'utf8')).toEqual(vectorBytes('a2a_receipt', 'spine.jsonl'))
    expect(Buffer.from(spineHeadText(spineHead([first.row, second.row], lineageKey)), 'utf8')).toEqual(vectorBytes('a2a_receipt', 'spine.head'))
  })

  it('refuses a spine row that does not anchor the response', async () => {
    const { row } = await issue(response, '5f2c9a1b7e3d', '', 1n)
    await expect(
      buildReceipt({
        response: { ...response, status: 'working' },
        taskId: '5f2c9a1b7e3d',
        spineRow: row,
        kid: DEFAULT_RECEIPT_KID,
        sign: signer.sign,
        publicJwk: ed25519PublicJwk(signer.publicKey, DEFAULT_RECEIPT_KID),
      }),
    ).rejects.toThrow(TypeError)
  })
})

describe('receiptArtefactPath', () => {
  it('replaces characters that are neither alphanumeric nor - or _', () => {
    expect(receiptArtefactPath('5f2c9a1b7e3d')).toBe('.sdd/a2a/responses/5f2c9a1b7e3d.json')
    expect(receiptArtefactPath('../etc/pass wd')).toBe('.sdd/a2a/responses/___etc_pass_wd.json')
    expect(receiptArtefactPath('a-b_c.d')).toBe('.sdd/a2a/responses/a-b_c_d.json')
    // Python's str.isalnum() is Unicode-aware.
    expect(receiptArtefactPath('tâche٣😀')).toBe('.sdd/a2a/responses/tâche٣_.json')
  })
})

describe('parseReceipt (A2ATaskReceipt.from_dict rules)', () => {
  const base = (): PyObject => parsePythonJson(vectorText('a2a_receipt', 'receipt.json')) as PyObject

  it('parses the vector receipt and re-serialises it to the same bytes', () => {
    const parsed = parseReceipt(base())
    expect(parsed.ok).toBe(true)
    if (parsed.ok) expect(Buffer.from(receiptToJson(parsed.value))).toEqual(vectorBytes('a2a_receipt', 'receipt.json'))
  })

  it('rejects with Bernstein’s texts', () => {
    expect(parseReceipt([])).toEqual({ ok: false, code: 'malformed_receipt', detail: 'A2A receipt must be a JSON object' })
    for (const key of ['task_id', 'artefact_path', 'content_hash', 'entry_hash', 'kid']) {
      const missing = base()
      delete missing[key]
      expect(parseReceipt(missing)).toEqual({ ok: false, code: 'malformed_receipt', detail: `A2A receipt '${key}' must be a non-empty string` })
      const empty = base()
      empty[key] = ''
      expect(parseReceipt(empty)).toEqual({ ok: false, code: 'malformed_receipt', detail: `A2A receipt '${key}' must be a non-empty string` })
    }
    const badHead = base()
    badHead['head_signature'] = 'sig'
    expect(parseReceipt(badHead)).toEqual({ ok: false, code: 'malformed_receipt', detail: "A2A receipt 'head_signature' must be an object" })
    const boolVersion = base()
    boolVersion['schema_version'] = true
    expect(parseReceipt(boolVersion)).toEqual({ ok: false, code: 'malformed_receipt', detail: "A2A receipt 'schema_version' must be an integer" })
  })

  it('applies Bernstein’s defaults', () => {
    const sparse = base()
    delete sparse['schema_version']
    delete sparse['operator_hmac']
    delete sparse['head_signature']
    const parsed = parseReceipt(sparse)
    expect(parsed.ok && parsed.value).toMatchObject({ schema_version: 1, operator_hmac: '', head_signature: {} })
  })
})
