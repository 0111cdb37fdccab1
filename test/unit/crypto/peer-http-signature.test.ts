import { describe, expect, it } from 'vitest'
import { generateEd25519KeyPair } from '../../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../../src/crypto/fingerprint.js'
import { pinnedPeerKey, signPeerAnswer, signPeerRequest, verifyPeerAnswer, verifyPeerRequest } from '../../../src/crypto/peer-http-signature.js'
import { testClock } from '../../helpers/clock.js'

const key = generateEd25519KeyPair()
const signer = { keyid: keyFingerprint(key.publicKey), privateKey: key.privateKey }
const pinned = pinnedPeerKey(key.publicKey)
const url = 'http://127.0.0.1:9/a2a/v0/tasks'
const body = '{"task":{"id":"t1"}}'

async function signedAt(created: number, nonce?: string) {
  const clock = testClock({ start: created })
  const fields = await signPeerRequest(signer, clock, { method: 'POST', url, headers: { 'content-type': 'application/json' }, body }, nonce)
  const headers: Record<string, string> = { 'content-type': 'application/json', ...fields }
  return { method: 'POST', url, headers, body }
}

describe('peer request signatures', () => {
  it('covers method, target URI and the body digest, with created, nonce, keyid = the card fingerprint and alg', async () => {
    const request = await signedAt(1_800_000_000, 'nonce-0001')
    expect(request.headers['signature-input']).toBe(
      `peer=("@method" "@target-uri" "content-digest");created=1800000000;keyid="${signer.keyid}";alg="ed25519";nonce="nonce-0001"`,
    )
    expect(await verifyPeerRequest(pinned, testClock({ start: 1_800_000_000 }), 300, request)).toEqual({
      ok: true,
      value: { keyid: signer.keyid, created: 1_800_000_000, nonce: 'nonce-0001' },
    })
  })

  it('accepts created up to the window either side of now, and not one second beyond', async () => {
    const request = await signedAt(1_800_000_000)
    for (const [now, verdict] of [
      [1_800_000_300, true],
      [1_799_999_700, true],
      [1_800_000_301, false],
      [1_799_999_699, false],
    ] as const) {
      const result = await verifyPeerRequest(pinned, testClock({ start: now }), 300, request)
      expect({ now, ok: result.ok, code: result.ok ? null : result.code }).toEqual({ now, ok: verdict, code: verdict ? null : 'stale' })
    }
  })

  it('refuses a body that does not match its digest, an unsigned request, another key and a nonce the cache cannot hold', async () => {
    const clock = testClock({ start: 1_800_000_000 })
    const request = await signedAt(1_800_000_000)
    expect(await verifyPeerRequest(pinned, clock, 300, { ...request, body: body.replace('t1', 't2') })).toMatchObject({ ok: false, code: 'digest' })
    expect(await verifyPeerRequest(pinned, clock, 300, { ...request, headers: { 'content-type': 'application/json' } })).toMatchObject({
      ok: false,
      code: 'missing',
    })
    const other = pinnedPeerKey(generateEd25519KeyPair().publicKey)
    expect(await verifyPeerRequest(other, clock, 300, request)).toMatchObject({ ok: false, code: 'invalid' })
    expect(await verifyPeerRequest(pinned, clock, 300, await signedAt(1_800_000_000, 'n'.repeat(129)))).toMatchObject({ ok: false, code: 'invalid' })
    expect(await verifyPeerRequest(pinned, clock, 300, await signedAt(1_800_000_000, 'short'))).toMatchObject({ ok: false, code: 'invalid' })
  })

  it('binds an answer to its request and to the address it was sent to', async () => {
    const clock = testClock({ start: 1_800_000_000 })
    const request = await signedAt(1_800_000_000)
    const answer = '{"status":"accepted"}'
    const fields = await signPeerAnswer(signer, clock, request, 202, answer)
    const signed = { status: 202, headers: fields, body: answer }
    expect(await verifyPeerAnswer(pinned, clock, 300, request, signed)).toEqual({ ok: true, value: undefined })
    expect(await verifyPeerAnswer(pinned, clock, 300, { ...request, url: 'http://127.0.0.1:10/a2a/v0/tasks' }, signed)).toMatchObject({ code: 'invalid' })
    expect(await verifyPeerAnswer(pinned, clock, 300, await signedAt(1_800_000_000), signed)).toMatchObject({ code: 'invalid' })
    expect(await verifyPeerAnswer(pinned, clock, 300, request, { ...signed, body: '{"status":"rejected"}' })).toMatchObject({ code: 'digest' })
    expect(await verifyPeerAnswer(pinned, clock, 300, request, { ...signed, headers: {} })).toMatchObject({ code: 'missing' })
    expect(await verifyPeerAnswer(pinned, testClock({ start: 1_800_000_301 }), 300, request, signed)).toMatchObject({ code: 'stale' })
  })
})
