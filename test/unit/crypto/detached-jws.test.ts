import { describe, expect, it } from 'vitest'
import { decodeDetachedJws, signDetachedJws, verifyDetachedJws } from '../../../src/crypto/detached-jws.js'
import { privateKeyFromSeed, publicKeyFromJwk, publicKeyOf } from '../../../src/crypto/ed25519.js'
import { vectorBytes, vectorJson } from '../../helpers/vectors.js'

interface A4 {
  private_jwk: { d: string }
  public_jwk: { kty: string; crv: string; x: string }
  jws: { payload_utf8: string; compact: string; detached_compact: string; protected_b64: string; signature_b64: string }
}
interface CardMeta {
  card_a: { jws_protected_header_json: string; signature: string }
}

const a4 = vectorJson<A4>('rfc8037', 'a4.json')
const a4Key = privateKeyFromSeed(Buffer.from(a4.private_jwk.d, 'base64url'))
const a4Public = publicKeyFromJwk(a4.public_jwk)
const a4Payload = new TextEncoder().encode(a4.jws.payload_utf8)

const cardMeta = vectorJson<CardMeta>('capability_cards', 'card_a.meta.json').card_a
const cardKey = privateKeyFromSeed(Buffer.alloc(32, 0x11))
const cardPublic = publicKeyOf(cardKey)
const cardBody = new Uint8Array(vectorBytes('capability_cards', 'card_a.jcs_body.bin'))

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url')
}

describe('signDetachedJws', () => {
  it('reproduces the RFC 8037 A.4 signature in detached form', async () => {
    expect(await signDetachedJws(a4Payload, { alg: 'EdDSA' }, a4Key)).toBe(a4.jws.detached_compact)
  })

  it('reproduces capability card a’s JWS with a JCS header', async () => {
    const jws = await signDetachedJws(cardBody, { typ: 'a2a-capability+jws', kid: 'a2a-acme-orch', alg: 'EdDSA' }, cardKey)
    expect(jws).toBe(cardMeta.signature)
    expect(Buffer.from(jws.split('.')[0] ?? '', 'base64url').toString()).toBe(cardMeta.jws_protected_header_json)
  })

  it('refuses other algorithms and headers that cannot be JCS-signed', async () => {
    await expect(signDetachedJws(a4Payload, { alg: 'Ed25519' } as never, a4Key)).rejects.toThrow(TypeError)
    await expect(signDetachedJws(a4Payload, { alg: 'EdDSA', '1': 'x', b: 'y' }, a4Key)).resolves.toMatch(/\.\./)
    await expect(signDetachedJws(a4Payload, { alg: 'EdDSA', x: Number.NaN }, a4Key)).rejects.toThrow(TypeError)
    await expect(signDetachedJws(a4Payload, { alg: 'EdDSA' }, a4Public)).rejects.toThrow(TypeError)
  })

  it('refuses a header whose JSON.stringify order would differ from JCS (index-like member names)', async () => {
    const header = { alg: 'EdDSA' as const, '10': 'a', '9': 'b' }
    await expect(signDetachedJws(a4Payload, header, a4Key)).rejects.toThrow('header cannot be serialised canonically')
  })
})

describe('verifyDetachedJws', () => {
  it('accepts the RFC 8037 A.4 detached JWS and returns its header', async () => {
    expect(await verifyDetachedJws(a4.jws.detached_compact, a4Payload, a4Public)).toEqual({ ok: true, value: { alg: 'EdDSA' } })
  })

  it('accepts capability card a’s signature over its JCS body', async () => {
    const result = await verifyDetachedJws(cardMeta.signature, cardBody, cardPublic)
    expect(result).toEqual({ ok: true, value: { alg: 'EdDSA', kid: 'a2a-acme-orch', typ: 'a2a-capability+jws' } })
  })

  it('rejects a changed payload, a flipped signature byte and another key', async () => {
    const changed = cardBody.slice()
    changed[10] = (changed[10] ?? 0) ^ 1
    expect(await verifyDetachedJws(cardMeta.signature, changed, cardPublic)).toMatchObject({ ok: false, code: 'signature' })
    const [header, , sig] = cardMeta.signature.split('.') as [string, string, string]
    const sigBytes = Buffer.from(sig, 'base64url')
    for (let i = 0; i < 64; i += 1) {
      const flipped = Buffer.from(sigBytes)
      flipped[i] = (flipped[i] ?? 0) ^ 0x01
      const result = await verifyDetachedJws(`${header}..${flipped.toString('base64url')}`, cardBody, cardPublic)
      expect(result.ok).toBe(false)
    }
    expect(await verifyDetachedJws(cardMeta.signature, cardBody, a4Public)).toMatchObject({ ok: false, code: 'signature' })
  })

  it('rejects a changed protected header even when it still parses', async () => {
    const [, , sig] = cardMeta.signature.split('.') as [string, string, string]
    const header = b64('{"alg":"EdDSA","kid":"a2a-acme-orcH","typ":"a2a-capability+jws"}')
    expect(await verifyDetachedJws(`${header}..${sig}`, cardBody, cardPublic)).toMatchObject({ ok: false, code: 'signature' })
  })

  const sig = a4.jws.signature_b64
  const huge = 'e'.repeat(50 * 1024 * 1024)
  it.each<[string, unknown, string]>([
    ['a non-string', 42, 'malformed'],
    ['an empty string', '', 'malformed'],
    ['the attached compact form', a4.jws.compact, 'malformed'],
    ['two segments', `${a4.jws.protected_b64}.${sig}`, 'malformed'],
    ['four segments', `${a4.jws.protected_b64}..${sig}.`, 'malformed'],
    ['four segments with empty signature', `${a4.jws.protected_b64}...${sig}`, 'malformed'],
    ['a non-empty middle', `${a4.jws.protected_b64}.eA.${sig}`, 'malformed'],
    ['a padded signature', `${a4.jws.protected_b64}..${sig}==`, 'malformed'],
    ['a short signature', `${a4.jws.protected_b64}..${sig.slice(0, 85)}`, 'malformed'],
    ['a non-canonical signature encoding', `${a4.jws.protected_b64}..${sig.slice(0, 85)}h`, 'malformed'],
    ['a header that is not base64url', `e$J..${sig}`, 'malformed'],
    ['an empty header', `..${sig}`, 'malformed'],
    ['a header that is not JSON', `${b64('{alg:EdDSA}')}..${sig}`, 'malformed'],
    ['a header that is invalid UTF-8', `${Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')}..${sig}`, 'malformed'],
    ['a header that is a JSON array', `${b64('["EdDSA"]')}..${sig}`, 'malformed'],
    ['a header that is a JSON string', `${b64('"EdDSA"')}..${sig}`, 'malformed'],
    ['a header that is null', `${b64('null')}..${sig}`, 'malformed'],
    ['a header with b64=false', `${b64('{"alg":"EdDSA","b64":false,"crit":["b64"]}')}..${sig}`, 'malformed'],
    ['alg none', `${b64('{"alg":"none"}')}..${sig}`, 'unknown_alg'],
    ['alg HS256', `${b64('{"alg":"HS256"}')}..${sig}`, 'unknown_alg'],
    ['alg Ed25519 (RFC 9864 name)', `${b64('{"alg":"Ed25519"}')}..${sig}`, 'unknown_alg'],
    ['alg missing', `${b64('{"kid":"k"}')}..${sig}`, 'unknown_alg'],
    ['alg as a number', `${b64('{"alg":1}')}..${sig}`, 'unknown_alg'],
    ['a 50 MB header', `${huge}..${sig}`, 'malformed'],
    ['a 50 MB signature', `${a4.jws.protected_b64}..${huge}`, 'malformed'],
  ])('rejects %s cleanly', async (_name, jws, code) => {
    const result = await verifyDetachedJws(jws, a4Payload, a4Public)
    expect(result).toMatchObject({ ok: false, code })
  })

  it('decodes without verifying and never throws', () => {
    expect(decodeDetachedJws(a4.jws.detached_compact)).toMatchObject({ ok: true, value: { header: { alg: 'EdDSA' } } })
    expect(decodeDetachedJws({})).toMatchObject({ ok: false, code: 'malformed' })
  })

  it('treats a wrong key type or payload type as misuse', async () => {
    await expect(verifyDetachedJws(a4.jws.detached_compact, a4Payload, a4Key)).rejects.toThrow(TypeError)
    await expect(verifyDetachedJws(a4.jws.detached_compact, 'x' as unknown as Uint8Array, a4Public)).rejects.toThrow(TypeError)
  })
})
