import { describe, expect, it } from 'vitest'
import { exportPublicJwk, privateKeyFromSeed, publicKeyOf } from '../../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../../src/crypto/fingerprint.js'
import { KeyRejected } from '../../../src/crypto/key-rejected.js'
import { vectorJson } from '../../helpers/vectors.js'

interface CardMeta {
  card_a: { public_key_pem: string; fingerprint: string }
}
interface Jwks {
  keys: Array<{ kty: 'OKP'; crv: 'Ed25519'; x: string }>
}

const CARD_A = 'sha256:10ba682c8ad13513971e8b56881aab8bd702bb807796eca81932c735a94d6e6d'
const GOLDEN = 'sha256:0c12aacd7ddc9393a1fe254c4c220d2f12098e0c4662cb95d29e19dd8188313c'

describe('keyFingerprint', () => {
  const meta = vectorJson<CardMeta>('capability_cards', 'card_a.meta.json').card_a

  it('matches card a’s fingerprint from the PEM, the JWK and the key objects', () => {
    expect(meta.fingerprint).toBe(CARD_A)
    const key = privateKeyFromSeed(Buffer.alloc(32, 0x11))
    expect(keyFingerprint(meta.public_key_pem)).toBe(CARD_A)
    expect(keyFingerprint(exportPublicJwk(key))).toBe(CARD_A)
    expect(keyFingerprint(key)).toBe(CARD_A)
    expect(keyFingerprint(publicKeyOf(key))).toBe(CARD_A)
  })

  it('matches the golden agent-card key from the JWKS and from the seed', () => {
    const [jwk] = vectorJson<Jwks>('agent_card_v1', 'jwks.json').keys
    expect(keyFingerprint(jwk!)).toBe(GOLDEN)
    expect(keyFingerprint(privateKeyFromSeed(Buffer.from('a2a-v1-conformance-golden-seed!!')))).toBe(GOLDEN)
  })

  it('is stable across PEM whitespace differences', () => {
    expect(keyFingerprint(meta.public_key_pem.replace(/\n/g, '\r\n'))).toBe(CARD_A)
    expect(keyFingerprint('\n' + meta.public_key_pem.trimEnd())).toBe(CARD_A)
  })

  it('differs for another key and rejects non-keys', () => {
    expect(keyFingerprint(privateKeyFromSeed(Buffer.alloc(32, 0x12)))).not.toBe(CARD_A)
    expect(() => keyFingerprint('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n')).toThrow(KeyRejected)
    expect(() => keyFingerprint({ kty: 'OKP', crv: 'Ed25519', x: '' })).toThrow(KeyRejected)
  })
})
