import { describe, expect, it } from 'vitest'
import { isPyObject, parsePythonJson } from '../../../src/canonical/python-json.js'
import type { PyObject, PyValue } from '../../../src/canonical/python-json.js'
import { ed25519PublicJwk, parseReceipt } from '../../../src/receipts/receipt.js'
import type { A2ATaskReceipt } from '../../../src/receipts/receipt.js'
import { type ReceiptVerification, UNPINNED_KEY_WARNING, verifyReceipt } from '../../../src/receipts/receipt-verify.js'
import { vectorBytes, vectorText } from '../../helpers/vectors.js'
import { signerFromSeed, verifyEd25519 } from './ed25519.js'

const meta = parsePythonJson(vectorText('a2a_receipt', 'receipt.meta.json')) as PyObject
const cases = meta['verify_task_receipt'] as Record<string, { ok: boolean; errors: string[]; verified_key_id: string | null }>
const response1 = (meta['inputs'] as PyObject)['response'] as PyObject
const response2 = (meta['receipt2_inputs'] as PyObject)['response'] as PyObject

function receiptFrom(value: PyValue): A2ATaskReceipt {
  const parsed = parseReceipt(value)
  if (!parsed.ok) throw new Error(parsed.detail)
  return parsed.value
}

const receipt1 = (): A2ATaskReceipt => receiptFrom(parsePythonJson(vectorText('a2a_receipt', 'receipt.json')))
const receipt2 = (): A2ATaskReceipt => receiptFrom(meta['receipt2'] as PyObject)
const embeddedJwk = (): PyObject => receipt1().head_signature['public_key_jwk'] as PyObject

/** Every failed check of a verdict; none when it verified. */
const failuresOf = (result: ReceiptVerification): readonly string[] => (result.ok ? [] : result.failures)
/** Whether the verdict was reached under a pinned key, on either branch. */
const keyPinnedOf = (result: ReceiptVerification): boolean => (result.ok ? result.value.keyPinned : result.keyPinned)
const warningOf = (result: ReceiptVerification): string | undefined => (result.ok ? result.value.warning : undefined)

function expectCase(result: ReceiptVerification, expected: { ok: boolean; errors: string[]; verified_key_id: string | null } | undefined): void {
  expect(expected).toBeDefined()
  expect(result.ok).toBe(expected?.ok)
  expect(failuresOf(result)).toEqual(expected?.errors)
  expect(result.ok ? result.value.verifiedKeyId : null).toBe(expected?.verified_key_id)
  if (!result.ok) expect(result).toMatchObject({ code: 'receipt_invalid', detail: expected?.errors.join('; ') })
}

describe('verifyReceipt: every verify_task_receipt case of receipt.meta.json', () => {
  it('response_dict_ok (unpinned: warns about trust-on-first-use)', async () => {
    const result = await verifyReceipt(receipt1(), response1, { verifyEd25519 })
    expectCase(result, cases['response_dict_ok'])
    expect(warningOf(result)).toBe(UNPINNED_KEY_WARNING)
    expect(keyPinnedOf(result)).toBe(false)
  })

  it('response_bytes_ok', async () => {
    const result = await verifyReceipt(receipt1(), vectorBytes('a2a_receipt', 'response.canonical.json'), { verifyEd25519 })
    expectCase(result, cases['response_bytes_ok'])
  })

  it('wire_body_minus_receipt_ok', async () => {
    const wire = parsePythonJson(vectorText('a2a_receipt', 'response_wire.json'))
    if (!isPyObject(wire)) throw new Error('wire body is not an object')
    const embedded = receiptFrom(wire['receipt'] as PyValue)
    delete wire['receipt']
    expectCase(await verifyReceipt(embedded, wire, { verifyEd25519 }), cases['wire_body_minus_receipt_ok'])
  })

  it('one_byte_tampered_bytes', async () => {
    const tampered = vectorBytes('a2a_receipt', 'response.canonical.tampered.json')
    expectCase(await verifyReceipt(receipt1(), tampered, { verifyEd25519 }), cases['one_byte_tampered_bytes'])
  })

  it('one_byte_tampered_dict (message CI -> Cl)', async () => {
    const tampered = { ...response1, message: (response1['message'] as string).replace('CI', 'Cl') }
    expectCase(await verifyReceipt(receipt1(), tampered, { verifyEd25519 }), cases['one_byte_tampered_dict(message CI->Cl)'])
  })

  it('pinned_correct_jwk (no warning, key pinned)', async () => {
    const result = await verifyReceipt(receipt1(), response1, { verifyEd25519, trustedJwk: embeddedJwk() })
    expectCase(result, cases['pinned_correct_jwk'])
    expect(keyPinnedOf(result)).toBe(true)
    expect(warningOf(result)).toBeUndefined()
  })

  it('pinned_wrong_jwk (seed 0x43*32)', async () => {
    const other = signerFromSeed(Buffer.alloc(32, 0x43))
    const trustedJwk = ed25519PublicJwk(other.publicKey, 'a2a-server-lineage-1')
    expectCase(await verifyReceipt(receipt1(), response1, { verifyEd25519, trustedJwk }), cases['pinned_wrong_jwk(seed 0x43*32)'])
  })

  it('forged_entry_hash', async () => {
    const forged = { ...receipt1(), entry_hash: 'sha256:' + 'ab'.repeat(32) }
    expectCase(await verifyReceipt(forged, response1, { verifyEd25519 }), cases['forged_entry_hash'])
  })

  it('head_signature_stripped', async () => {
    const stripped = { ...receipt1(), head_signature: {} }
    expectCase(await verifyReceipt(stripped, response1, { verifyEd25519 }), cases['head_signature_stripped'])
  })

  it('head_signature_alg_ES256', async () => {
    const r = receipt1()
    const es = { ...r, head_signature: { ...r.head_signature, alg: 'ES256' } }
    expectCase(await verifyReceipt(es, response1, { verifyEd25519 }), cases['head_signature_alg_ES256'])
  })

  it('no_response', async () => {
    expectCase(await verifyReceipt(receipt1(), undefined, { verifyEd25519 }), cases['no_response'])
    expectCase(await verifyReceipt(receipt1(), null, { verifyEd25519 }), cases['no_response'])
  })

  it('receipt2_vs_response2_ok and receipt1_vs_response2', async () => {
    expectCase(await verifyReceipt(receipt2(), response2, { verifyEd25519 }), cases['receipt2_vs_response2_ok'])
    expectCase(await verifyReceipt(receipt1(), response2, { verifyEd25519 }), cases['receipt1_vs_response2'])
  })
})

describe('head_signature checks beyond the vector cases (Bernstein’s texts)', () => {
  const withHead = (patch: PyObject): A2ATaskReceipt => {
    const r = receipt1()
    return { ...r, head_signature: { ...r.head_signature, ...patch } }
  }

  it('reports a missing signature, a missing JWK, a bad JWK and bad base64', async () => {
    const run = async (receipt: A2ATaskReceipt): Promise<readonly string[]> =>
      failuresOf(await verifyReceipt(receipt, response1, { verifyEd25519, checkKid: false }))
    expect(await run(withHead({ signature_b64: '' }))).toEqual(['head_signature: head_signature.signature_b64 missing or not a string'])
    expect(await run(withHead({ public_key_jwk: 'x' }))).toEqual(['head_signature: head_signature.public_key_jwk missing or not an object'])
    expect(await run(withHead({ public_key_jwk: { kty: 'RSA', n: 'abc' } }))).toEqual([
      "head_signature: head_signature.public_key_jwk invalid: expected kty=OKP, crv=Ed25519; got {'kty': 'RSA', 'n': 'abc'}",
    ])
    expect(await run(withHead({ public_key_jwk: { ...embeddedJwk(), x: 'AAAA' } }))).toEqual([
      'head_signature: head_signature.public_key_jwk invalid: Ed25519 public key must be 32 bytes (got 3)',
    ])
    expect(await run(withHead({ signature_b64: 'not base64!' }))).toEqual([
      'head_signature: head_signature.signature_b64 not valid base64: Only base64 data is allowed',
    ])
    expect(await run(withHead({ signature_b64: 'YWJj' }))).toEqual(['head_signature: head_signature.signature_b64 does not verify against head_sha256'])
  })

  it('collects the content mismatch and the signature failure together, in Bernstein’s order', async () => {
    const forged = { ...receipt1(), entry_hash: 'sha256:' + 'cd'.repeat(32) }
    const result = await verifyReceipt(forged, response2, { verifyEd25519 })
    expect(failuresOf(result)).toEqual([
      (cases['receipt1_vs_response2']?.errors ?? [])[0],
      'head_signature: head_signature.signature_b64 does not verify against head_sha256',
    ])
  })

  it('treats a verifier that throws as a failed signature', async () => {
    const result = await verifyReceipt(receipt1(), response1, {
      verifyEd25519: () => {
        throw new Error('boom')
      },
    })
    expect(failuresOf(result)).toEqual(['head_signature: head_signature.signature_b64 does not verify against head_sha256'])
  })
})

describe('kid consistency (our check; Bernstein does not cross-check kids)', () => {
  it('a changed key_id still verifies under Bernstein’s rules but fails the kid check', async () => {
    const r = receipt1()
    const changed = { ...r, head_signature: { ...r.head_signature, key_id: 'other-key' } }
    const strict = await verifyReceipt(changed, response1, { verifyEd25519 })
    expect(strict.ok).toBe(false)
    expect(failuresOf(strict)).toEqual(['kid mismatch: receipt kid a2a-server-lineage-1, key_id other-key, jwk kid a2a-server-lineage-1'])
    const bernstein = await verifyReceipt(changed, response1, { verifyEd25519, checkKid: false })
    expect(bernstein).toMatchObject({ ok: true, value: { verifiedKeyId: 'other-key' } })
  })

  it('a changed JWK kid fails the kid check; a JWK without kid is allowed', async () => {
    const r = receipt1()
    const jwk = embeddedJwk()
    const changed = { ...r, head_signature: { ...r.head_signature, public_key_jwk: { ...jwk, kid: 'k2' } } }
    expect(failuresOf(await verifyReceipt(changed, response1, { verifyEd25519 }))).toEqual([
      'kid mismatch: receipt kid a2a-server-lineage-1, key_id a2a-server-lineage-1, jwk kid k2',
    ])
    const noKid: PyObject = { ...jwk }
    delete noKid['kid']
    const bare = { ...r, head_signature: { ...r.head_signature, public_key_jwk: noKid } }
    expect((await verifyReceipt(bare, response1, { verifyEd25519 })).ok).toBe(true)
  })

  it('a pinned JWK with the right x but another kid fails', async () => {
    const result = await verifyReceipt(receipt1(), response1, {
      verifyEd25519,
      trustedJwk: { ...embeddedJwk(), kid: 'a2a-server-lineage-2' },
    })
    expect(failuresOf(result)).toEqual(['trusted JWK kid mismatch: trusted kid a2a-server-lineage-2, receipt kid a2a-server-lineage-1'])
  })
})

describe('every failure names its check (failedChecks, one per failure)', () => {
  const checksOf = (result: ReceiptVerification): readonly string[] => (result.ok ? [] : result.failedChecks)

  it('response, content_hash, signature, trusted_issuer and kid', async () => {
    const r = receipt1()
    expect(checksOf(await verifyReceipt(r, undefined, { verifyEd25519 }))).toEqual(['response'])
    const tampered = vectorBytes('a2a_receipt', 'response.canonical.tampered.json')
    expect(checksOf(await verifyReceipt(r, tampered, { verifyEd25519 }))).toEqual(['content_hash'])
    expect(checksOf(await verifyReceipt({ ...r, head_signature: {} }, response1, { verifyEd25519 }))).toEqual(['signature'])
    expect(checksOf(await verifyReceipt({ ...r, entry_hash: 'sha256:' + 'ab'.repeat(32) }, response1, { verifyEd25519 }))).toEqual(['signature'])
    const other = ed25519PublicJwk(signerFromSeed(Buffer.alloc(32, 0x43)).publicKey, 'a2a-server-lineage-1')
    expect(checksOf(await verifyReceipt(r, response1, { verifyEd25519, trustedJwk: other }))).toEqual(['trusted_issuer'])
    const renamed = { ...r, head_signature: { ...r.head_signature, key_id: 'other-key' } }
    expect(checksOf(await verifyReceipt(renamed, response1, { verifyEd25519 }))).toEqual(['kid'])
    // Two failures, two names, in the order of the texts.
    const both = await verifyReceipt({ ...renamed, head_signature: { ...renamed.head_signature, signature_b64: '' } }, tampered, { verifyEd25519 })
    expect(failuresOf(both)).toHaveLength(3)
    expect(checksOf(both)).toEqual(['content_hash', 'signature', 'kid'])
  })
})
