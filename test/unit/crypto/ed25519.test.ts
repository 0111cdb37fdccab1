import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  exportPkcs8Pem,
  exportPublicJwk,
  exportSpkiPem,
  generateEd25519KeyPair,
  privateKeyFromPem,
  privateKeyFromSeed,
  publicKeyFromJwk,
  publicKeyFromPem,
  publicKeyFromRaw,
  publicKeyOf,
  rawPublicKey,
  signBytes,
  verifyBytes,
} from '../../../src/crypto/ed25519.js'
import { KeyRejected } from '../../../src/crypto/key-rejected.js'
import { vectorJson } from '../../helpers/vectors.js'

interface CardMeta {
  card_a: { private_key_pem_pkcs8: string; public_key_pem: string; public_key_raw_hex: string }
}
interface A4 {
  private_jwk: { d: string; x: string }
  public_jwk: { kty: string; crv: string; x: string }
  jws: { signing_input: string; signature_b64: string }
}

const meta = vectorJson<CardMeta>('capability_cards', 'card_a.meta.json').card_a
const a4 = vectorJson<A4>('rfc8037', 'a4.json')
const cardKey = privateKeyFromSeed(Buffer.alloc(32, 0x11))

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    if (error instanceof KeyRejected) return error.code
    throw error
  }
  return undefined
}

describe('Ed25519 keys', () => {
  it('derives card a’s PKCS#8 and SPKI PEMs and raw key from seed 11×32', () => {
    expect(exportPkcs8Pem(cardKey)).toBe(meta.private_key_pem_pkcs8)
    expect(exportSpkiPem(cardKey)).toBe(meta.public_key_pem)
    expect(Buffer.from(rawPublicKey(cardKey)).toString('hex')).toBe(meta.public_key_raw_hex)
  })

  it('loads the PKCS#8 PEM back to the same key', () => {
    const loaded = privateKeyFromPem(meta.private_key_pem_pkcs8)
    expect(exportSpkiPem(loaded)).toBe(meta.public_key_pem)
  })

  it('gives the golden agent-card JWK from the golden seed', () => {
    const golden = privateKeyFromSeed(Buffer.from('a2a-v1-conformance-golden-seed!!', 'ascii'))
    expect(exportPublicJwk(golden)).toEqual({ kty: 'OKP', crv: 'Ed25519', x: 'BEDcoe-OKbsiLvNLUokxIWtEh4cIGucGNH6KrWt0X40' })
  })

  it('gives the RFC 8037 A.1 public key from the A.1 private key', () => {
    const key = privateKeyFromSeed(Buffer.from(a4.private_jwk.d, 'base64url'))
    expect(exportPublicJwk(key)).toEqual(a4.public_jwk)
  })

  it('raw key is the same from PEM, JWK, raw bytes and KeyObject', () => {
    const raw = rawPublicKey(meta.public_key_pem)
    expect(rawPublicKey(exportPublicJwk(cardKey))).toEqual(raw)
    expect(rawPublicKey(publicKeyFromRaw(raw))).toEqual(raw)
    expect(rawPublicKey(publicKeyOf(cardKey))).toEqual(raw)
  })

  it('memoises public PEMs and public halves', () => {
    expect(publicKeyFromPem(meta.public_key_pem)).toBe(publicKeyFromPem(meta.public_key_pem))
    expect(publicKeyOf(cardKey)).toBe(publicKeyOf(cardKey))
  })

  it('generates distinct working key pairs', async () => {
    const one = generateEd25519KeyPair()
    const two = generateEd25519KeyPair()
    expect(rawPublicKey(one.publicKey)).not.toEqual(rawPublicKey(two.publicKey))
    const sig = await signBytes(one.privateKey, new Uint8Array([1, 2, 3]))
    expect(await verifyBytes(one.publicKey, new Uint8Array([1, 2, 3]), sig)).toBe(true)
    expect(await verifyBytes(two.publicKey, new Uint8Array([1, 2, 3]), sig)).toBe(false)
  })

  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const x25519 = generateKeyPairSync('x25519')
  const pem = (key: { export(o: object): string | Buffer }, type: string): string => key.export({ type, format: 'pem' }) as string

  it.each<[string, () => unknown, string]>([
    ['garbage public PEM', () => publicKeyFromPem('not a pem'), 'malformed_key'],
    ['truncated public PEM', () => publicKeyFromPem('-----BEGIN PUBLIC KEY-----\nMCowBQYDK2Vw\n-----END PUBLIC KEY-----\n'), 'malformed_key'],
    ['RSA public PEM', () => publicKeyFromPem(pem(rsa.publicKey, 'spki')), 'not_ed25519'],
    ['EC public PEM', () => publicKeyFromPem(pem(ec.publicKey, 'spki')), 'not_ed25519'],
    ['X25519 public PEM', () => publicKeyFromPem(pem(x25519.publicKey, 'spki')), 'not_ed25519'],
    ['private PEM where a public one is expected', () => publicKeyFromPem(meta.private_key_pem_pkcs8), 'malformed_key'],
    ['huge PEM', () => publicKeyFromPem('-----BEGIN PUBLIC KEY-----\n' + 'A'.repeat(1_000_000)), 'malformed_key'],
    ['RSA private PEM', () => privateKeyFromPem(pem(rsa.privateKey, 'pkcs8')), 'not_ed25519'],
    ['EC private PEM', () => privateKeyFromPem(pem(ec.privateKey, 'pkcs8')), 'not_ed25519'],
    ['public PEM where a private one is expected', () => privateKeyFromPem(meta.public_key_pem), 'malformed_key'],
    ['garbage private PEM', () => privateKeyFromPem('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'), 'malformed_key'],
    ['31-byte seed', () => privateKeyFromSeed(new Uint8Array(31)), 'malformed_key'],
    ['33-byte raw key', () => publicKeyFromRaw(new Uint8Array(33)), 'malformed_key'],
    ['JWK that is an array', () => publicKeyFromJwk([]), 'malformed_key'],
    ['JWK null', () => publicKeyFromJwk(null), 'malformed_key'],
    ['EC JWK', () => publicKeyFromJwk(ec.publicKey.export({ format: 'jwk' })), 'not_ed25519'],
    ['X25519 JWK', () => publicKeyFromJwk({ kty: 'OKP', crv: 'X25519', x: a4.public_jwk.x }), 'not_ed25519'],
    ['JWK with a numeric x', () => publicKeyFromJwk({ kty: 'OKP', crv: 'Ed25519', x: 5 }), 'malformed_key'],
    ['JWK with a short x', () => publicKeyFromJwk({ kty: 'OKP', crv: 'Ed25519', x: 'AAAA' }), 'malformed_key'],
    ['JWK with padded x', () => publicKeyFromJwk({ ...a4.public_jwk, x: a4.public_jwk.x + '=' }), 'malformed_key'],
    ['JWK with junk in x', () => publicKeyFromJwk({ ...a4.public_jwk, x: a4.public_jwk.x.slice(0, 20) + '!' + a4.public_jwk.x.slice(20) }), 'malformed_key'],
  ])('rejects %s with KeyRejected', (_name, fn, code) => {
    expect(codeOf(fn)).toBe(code)
  })

  it('treats misuse as TypeError', async () => {
    expect(() => publicKeyFromPem(42 as unknown as string)).toThrow(TypeError)
    expect(() => privateKeyFromSeed('11' as unknown as Uint8Array)).toThrow(TypeError)
    await expect(signBytes(publicKeyOf(cardKey), new Uint8Array(1))).rejects.toThrow(TypeError)
    await expect(signBytes(rsa.privateKey, new Uint8Array(1))).rejects.toThrow(TypeError)
    await expect(verifyBytes(cardKey, new Uint8Array(1), new Uint8Array(64))).rejects.toThrow(TypeError)
    expect(() => exportPkcs8Pem(publicKeyOf(cardKey))).toThrow(TypeError)
  })
})

describe('signBytes / verifyBytes', () => {
  const a4Key = privateKeyFromSeed(Buffer.from(a4.private_jwk.d, 'base64url'))
  const a4Public = publicKeyFromJwk(a4.public_jwk)
  const input = new TextEncoder().encode(a4.jws.signing_input)
  const expected = new Uint8Array(Buffer.from(a4.jws.signature_b64, 'base64url'))

  it('reproduces the RFC 8037 A.4 signature over the raw signing input', async () => {
    expect(Buffer.from(await signBytes(a4Key, input)).toString('base64url')).toBe(a4.jws.signature_b64)
    expect(await verifyBytes(a4Public, input, expected)).toBe(true)
  })

  it('signs 32 raw digest bytes with no framing', async () => {
    const digest = new Uint8Array(32).fill(7)
    const sig = await signBytes(cardKey, digest)
    expect(sig).toHaveLength(64)
    expect(await verifyBytes(publicKeyFromPem(meta.public_key_pem), digest, sig)).toBe(true)
  })

  it('rejects every single-byte change of message or signature', async () => {
    for (let i = 0; i < input.length; i += 7) {
      const changed = input.slice()
      changed[i] = (changed[i] ?? 0) ^ 0x01
      expect(await verifyBytes(a4Public, changed, expected)).toBe(false)
    }
    for (let i = 0; i < expected.length; i += 1) {
      const changed = expected.slice()
      changed[i] = (changed[i] ?? 0) ^ 0x80
      expect(await verifyBytes(a4Public, input, changed)).toBe(false)
    }
  })

  it('returns false for signatures of the wrong length', async () => {
    expect(await verifyBytes(a4Public, input, expected.subarray(0, 63))).toBe(false)
    expect(await verifyBytes(a4Public, input, new Uint8Array(65))).toBe(false)
    expect(await verifyBytes(a4Public, input, new Uint8Array(0))).toBe(false)
  })
})
