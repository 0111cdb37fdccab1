import { describe, expect, it } from 'vitest'
import { checkAgentCardConformance } from '../../../src/agent-card/agent-card-conformance.js'
import type { AgentCardRejection } from '../../../src/agent-card/agent-card-conformance.js'
import { agentCardBytes, agentCardSigningBytes, signAgentCard } from '../../../src/agent-card/sign-agent-card.js'
import type { AgentCardPayload, SignedAgentCard } from '../../../src/agent-card/sign-agent-card.js'
import { issueCapabilityCard } from '../../../src/cards/issue-capability-card.js'
import { verifyDetachedJws } from '../../../src/crypto/detached-jws.js'
import { privateKeyFromSeed, publicKeyOf } from '../../../src/crypto/ed25519.js'
import { jwksEntry } from '../../../src/crypto/jwks.js'
import { vectorBytes, vectorJson, vectorText } from '../../helpers/vectors.js'

const NOW = 1_700_000_100
const KID = 'agent-golden-orchestrator'
const GOLDEN_FP = 'sha256:0c12aacd7ddc9393a1fe254c4c220d2f12098e0c4662cb95d29e19dd8188313c'
const goldenKey = privateKeyFromSeed(Buffer.from('a2a-v1-conformance-golden-seed!!', 'ascii'))
const jwks = vectorJson<unknown>('agent_card_v1', 'jwks.json')
const card = (name: string): SignedAgentCard => vectorJson<SignedAgentCard>('agent_card_v1', `${name}.json`)
const payloadOf = (signed: SignedAgentCard): AgentCardPayload => {
  const { signatures: _omit, ...payload } = signed
  return payload
}

/** The README table: failing checks and the inbound verdict with the golden fingerprint trusted. */
const TABLE: Array<[string, string[], AgentCardRejection | null]> = [
  ['valid', [], null],
  ['bad_canonicalization', ['signature'], 'signature'],
  ['wrong_typ', ['jws_header', 'signature'], 'malformed'],
  ['expired', ['expiry'], 'expired'],
  ['unknown_kid', ['kid_resolves'], 'unresolvable_jwks'],
  ['tampered_signatures', ['signature'], 'signature'],
]

describe('signAgentCard', () => {
  it('reproduces valid.json byte for byte from the golden seed', async () => {
    const signed = await signAgentCard(payloadOf(card('valid')), { kid: KID, privateKey: goldenKey })
    expect(signed.signatures).toEqual(card('valid').signatures)
    expect(Buffer.from(agentCardBytes(signed)).equals(vectorBytes('agent_card_v1', 'valid.json'))).toBe(true)
  })

  it('signs the JCS of the payload without signatures (capabilityCard and all else included)', async () => {
    const capabilityCard = await issueCapabilityCard({
      issuer: 'bernstein',
      name: 'bernstein',
      tools: ['task_orchestration'],
      policies: { cost_cap_usd: 0, redaction_tier: 'standard', sandbox_profile: 'container' },
      ttlSeconds: 86400,
      privateKey: goldenKey,
      now: 1_700_000_000,
    })
    const payload = { ...payloadOf(card('valid')), capabilityCard }
    const signed = await signAgentCard(payload, { kid: KID, privateKey: goldenKey })
    const verified = await verifyDetachedJws(signed.signatures[0]?.jws, agentCardSigningBytes(payload), publicKeyOf(goldenKey))
    expect(verified).toEqual({ ok: true, value: { alg: 'EdDSA', kid: KID, typ: 'agent-card+jws' } })
    expect(agentCardSigningBytes(signed)).toEqual(agentCardSigningBytes(payload))
    const report = await checkAgentCardConformance(agentCardBytes(signed), jwks, { now: NOW, trustedFingerprints: [GOLDEN_FP] })
    expect(report.ok).toBe(true)
  })

  it('refuses payloads that already carry signatures, empty kids and non-Ed25519 keys', async () => {
    await expect(signAgentCard(card('valid'), { kid: KID, privateKey: goldenKey })).rejects.toThrow(TypeError)
    await expect(signAgentCard({ name: 'x' }, { kid: '', privateKey: goldenKey })).rejects.toThrow(TypeError)
    await expect(signAgentCard({ name: 'x' }, { kid: KID, privateKey: publicKeyOf(goldenKey) })).rejects.toThrow(TypeError)
    await expect(signAgentCard({ n: Number.NaN }, { kid: KID, privateKey: goldenKey })).rejects.toThrow(TypeError)
  })
})

describe('checkAgentCardConformance on the golden corpus', () => {
  it.each(TABLE)('%s: failing %j, verdict %s', async (name, failing, verdict) => {
    const report = await checkAgentCardConformance(vectorBytes('agent_card_v1', `${name}.json`), jwks, {
      now: NOW,
      trustedFingerprints: [GOLDEN_FP],
    })
    expect(report.checks.filter((c) => c.outcome === 'fail').map((c) => c.name)).toEqual(failing)
    expect(report.reason).toBe(verdict)
    expect(report.ok).toBe(verdict === null)
  })

  it('runs the checks in Bernstein’s order', async () => {
    const report = await checkAgentCardConformance(card('valid'), jwks, { now: NOW, trustedFingerprints: [GOLDEN_FP] })
    expect(report.checks.map((c) => c.name)).toEqual([
      'required_v1_fields',
      'signatures_present',
      'jcs_canonical',
      'jws_header',
      'kid_resolves',
      'signature',
      'expiry',
      'trusted_issuer',
    ])
    expect(report).toMatchObject({ ok: true, reason: null, kid: KID, fingerprint: GOLDEN_FP })
  })

  it('valid.json is untrusted_issuer with an empty trust set, and conformance-only without one', async () => {
    const empty = await checkAgentCardConformance(card('valid'), jwks, { now: NOW, trustedFingerprints: [] })
    expect(empty).toMatchObject({ ok: false, reason: 'untrusted_issuer' })
    expect(empty.checks.at(-1)?.detail).toBe(`card key fingerprint ${GOLDEN_FP} is not in the trusted-issuer set`)
    const none = await checkAgentCardConformance(card('valid'), jwks, { now: NOW })
    expect(none.ok).toBe(true)
    expect(none.checks.map((c) => c.name)).not.toContain('trusted_issuer')
  })

  it('wrong_typ and unknown_kid carry signatures valid for their own headers under the golden key', async () => {
    for (const name of ['wrong_typ', 'unknown_kid']) {
      const signed = card(name)
      const result = await verifyDetachedJws(signed.signatures[0]?.jws, agentCardSigningBytes(signed), publicKeyOf(goldenKey))
      expect(result.ok).toBe(true)
    }
  })

  it('unknown_kid verifies nothing (signature skipped)', async () => {
    const report = await checkAgentCardConformance(card('unknown_kid'), jwks, { now: NOW })
    expect(report.checks.find((c) => c.name === 'signature')?.outcome).toBe('skip')
  })

  it('expired.json is accepted when checked before its expiry', async () => {
    const report = await checkAgentCardConformance(card('expired'), jwks, { now: 1_600_000_000, trustedFingerprints: [GOLDEN_FP] })
    expect(report.ok).toBe(true)
  })

  it('raw bytes that are not their own JCS form fail jcs_canonical as malformed', async () => {
    const pretty = JSON.stringify(JSON.parse(vectorText('agent_card_v1', 'valid.json')), null, 2)
    const report = await checkAgentCardConformance(pretty, jwks, { now: NOW })
    expect(report.checks.filter((c) => c.outcome === 'fail').map((c) => c.name)).toEqual(['jcs_canonical'])
    expect(report.reason).toBe('malformed')
  })
})

describe('checkAgentCardConformance on bad input', () => {
  const valid = (): SignedAgentCard => card('valid')
  const entry = (): Record<string, unknown> => ({ ...valid().signatures[0] })
  const b64 = (text: string): string => Buffer.from(text).toString('base64url')
  const sig = valid().signatures[0]?.jws.split('..')[1] ?? ''

  it.each<[string, AgentCardRejection, unknown]>([
    ['protocolVersion 0.3', 'required_fields', { ...valid(), protocolVersion: '0.3' }],
    ['no name', 'required_fields', { ...valid(), name: '' }],
    ['no url', 'required_fields', { ...valid(), url: undefined }],
    ['empty supportedInterfaces', 'required_fields', { ...valid(), supportedInterfaces: [] }],
    ['securitySchemes not a list', 'required_fields', { ...valid(), securitySchemes: {} }],
    ['no signatures', 'malformed', { ...valid(), signatures: [] }],
    ['signatures not a list', 'malformed', { ...valid(), signatures: 'x' }],
    ['a signature entry without kid', 'missing_kid', { ...valid(), signatures: [{ ...entry(), kid: '' }] }],
    ['a signature entry without jws', 'malformed', { ...valid(), signatures: [{ ...entry(), jws: undefined }] }],
    ['a signature entry that is a string', 'malformed', { ...valid(), signatures: ['x'] }],
    ['entry alg RS256', 'unknown_alg', { ...valid(), signatures: [{ ...entry(), alg: 'RS256' }] }],
    [
      'header alg none',
      'unknown_alg',
      { ...valid(), signatures: [{ ...entry(), jws: `${b64('{"alg":"none","kid":"agent-golden-orchestrator","typ":"agent-card+jws"}')}..${sig}` }] },
    ],
    ['a non-object header', 'malformed', { ...valid(), signatures: [{ ...entry(), jws: `${b64('[1]')}..${sig}` }] }],
    [
      'a header kid that differs',
      'malformed',
      { ...valid(), signatures: [{ ...entry(), jws: `${b64('{"alg":"EdDSA","kid":"other","typ":"agent-card+jws"}')}..${sig}` }] },
    ],
    ['4 segments', 'malformed', { ...valid(), signatures: [{ ...entry(), jws: `${valid().signatures[0]?.jws}.` }] }],
    ['a non-empty middle', 'malformed', { ...valid(), signatures: [{ ...entry(), jws: (valid().signatures[0]?.jws ?? '').replace('..', '.eA.') }] }],
    ['a 50 MB jws', 'malformed', { ...valid(), signatures: [{ ...entry(), jws: 'e'.repeat(50 * 1024 * 1024) }] }],
    ['a changed body field', 'signature', { ...valid(), version: '3.5.1' }],
    [
      'a second, forged signature entry',
      'signature',
      { ...valid(), signatures: [entry(), { ...entry(), jws: (valid().signatures[0]?.jws ?? '').replace(/..$/, 'AA') }] },
    ],
    ['expiresAt as a string', 'signature', { ...valid(), expiresAt: '4100000000' }],
    ['a number as card', 'required_fields', 42],
    ['null as card', 'required_fields', null],
    ['non-JSON text', 'required_fields', '{"name":'],
    ['invalid UTF-8 bytes', 'required_fields', new Uint8Array([0x7b, 0xff])],
    ['a 50 MB string', 'required_fields', ' '.repeat(50 * 1024 * 1024)],
  ])('%s → %s', async (_name, reason, value) => {
    const report = await checkAgentCardConformance(value, jwks, { now: NOW, trustedFingerprints: [GOLDEN_FP] })
    expect(report.ok).toBe(false)
    expect(report.reason).toBe(reason)
  })

  it.each<[string, unknown]>([
    ['null', null],
    ['keys not a list', { keys: 'x' }],
    ['an entry with the kid but an EC key', { keys: [{ kid: KID, kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] }],
    ['an entry with alg RS256', { keys: [{ ...jwksEntry(goldenKey, KID), alg: 'RS256' }] }],
  ])('a JWKS that is %s → unresolvable_jwks', async (_name, badJwks) => {
    const report = await checkAgentCardConformance(valid(), badJwks, { now: NOW })
    expect(report.reason).toBe('unresolvable_jwks')
  })

  it('a key that is in the JWKS under the kid but is another key → signature', async () => {
    const other = privateKeyFromSeed(Buffer.alloc(32, 9))
    const report = await checkAgentCardConformance(valid(), { keys: [jwksEntry(other, KID)] }, { now: NOW })
    expect(report.reason).toBe('signature')
  })
})
