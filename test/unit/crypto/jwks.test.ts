import { describe, expect, it } from 'vitest'
import { jcs } from '../../../src/canonical/jcs.js'
import { privateKeyFromSeed, publicKeyOf, rawPublicKey } from '../../../src/crypto/ed25519.js'
import { findJwk, jwksEntry } from '../../../src/crypto/jwks.js'
import { vectorBytes, vectorJson } from '../../helpers/vectors.js'

const golden = privateKeyFromSeed(Buffer.from('a2a-v1-conformance-golden-seed!!'))
const KID = 'agent-golden-orchestrator'

describe('jwksEntry', () => {
  it('builds the golden JWKS byte for byte (JCS)', () => {
    const jwks = { keys: [jwksEntry(golden, KID)] }
    expect(Buffer.from(jcs(jwks)).equals(vectorBytes('agent_card_v1', 'jwks.json'))).toBe(true)
  })

  it('publishes the same entry for the private key and its public half', () => {
    expect(jwksEntry(publicKeyOf(golden), KID)).toEqual(jwksEntry(golden, KID))
    expect(() => jwksEntry(golden, '')).toThrow(TypeError)
  })
})

describe('findJwk', () => {
  const jwks = vectorJson<unknown>('agent_card_v1', 'jwks.json')

  it('resolves the golden kid to the golden key', () => {
    const found = findJwk(jwks, KID)
    expect(found.ok).toBe(true)
    if (found.ok) {
      expect(rawPublicKey(found.value.publicKey)).toEqual(rawPublicKey(golden))
      expect(found.value.jwk).toEqual(jwksEntry(golden, KID))
    }
  })

  it('picks the entry with the kid among several', () => {
    const other = privateKeyFromSeed(Buffer.alloc(32, 3))
    const found = findJwk({ keys: [jwksEntry(other, 'other'), jwksEntry(golden, KID)] }, 'other')
    expect(found.ok && rawPublicKey(found.value.publicKey)).toEqual(rawPublicKey(other))
  })

  const entry = jwksEntry(golden, KID)
  it.each<[string, unknown, string]>([
    ['null', null, 'malformed_jwks'],
    ['a string', 'keys', 'malformed_jwks'],
    ['keys not a list', { keys: {} }, 'malformed_jwks'],
    ['an empty set', { keys: [] }, 'unknown_kid'],
    ['another kid', { keys: [{ ...entry, kid: 'agent-not-in-jwks' }] }, 'unknown_kid'],
    ['junk entries', { keys: [null, 1, 'x', []] }, 'unknown_kid'],
    ['alg RS256', { keys: [{ ...entry, alg: 'RS256' }] }, 'unusable_key'],
    ['use enc', { keys: [{ ...entry, use: 'enc' }] }, 'unusable_key'],
    ['kty EC', { keys: [{ ...entry, kty: 'EC' }] }, 'unusable_key'],
    ['a short x', { keys: [{ ...entry, x: 'AAAA' }] }, 'unusable_key'],
    ['a missing x', { keys: [{ ...entry, x: undefined }] }, 'unusable_key'],
  ])('fails cleanly on %s', (_name, value, code) => {
    expect(findJwk(value, KID)).toMatchObject({ ok: false, code })
  })
})
