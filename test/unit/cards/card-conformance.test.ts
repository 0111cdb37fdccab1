import { describe, expect, it } from 'vitest'
import { checkCardConformance } from '../../../src/cards/card-conformance.js'
import { decodeCardFile } from '../../../src/cards/card-file.js'
import { issueCapabilityCard } from '../../../src/cards/issue-capability-card.js'
import { vectorText } from '../../helpers/vectors.js'
import { CARD_A_FINGERPRINT, cardAKey, cardMeta, NOW } from './fixtures.js'

const meta = cardMeta()
const raw = (file: string): unknown => decodeCardFile(vectorText('capability_cards', file))

describe('checkCardConformance', () => {
  it('card a at NOW matches Bernstein’s report exactly', async () => {
    expect(await checkCardConformance(raw('card_a.signed.json'), NOW)).toEqual(meta.card_a.check_card_conformance_at_NOW)
  })

  it('the expired file at NOW fails only expiry, with Bernstein’s texts', async () => {
    expect(await checkCardConformance(raw('card_a.expired.json'), NOW)).toEqual(meta.tamper_expiry_consume.card_a_expired_file.check_card_conformance_at_NOW)
  })

  it('the tampered file fails only the signature check', async () => {
    const report = await checkCardConformance(raw('card_a.tampered.json'), NOW)
    expect(report.ok).toBe(false)
    expect(report.checks.filter((c) => !c.passed).map((c) => c.name)).toEqual(['signature'])
    expect(report.fingerprint).toBe(CARD_A_FINGERPRINT)
  })

  it('a card with no expiry passes the expiry check', async () => {
    const signed = await issueCapabilityCard({
      issuer: 'x',
      name: 'X',
      tools: [],
      policies: { cost_cap_usd: 0, redaction_tier: 'none', sandbox_profile: 'none' },
      ttlSeconds: 0,
      privateKey: cardAKey,
      now: 1,
    })
    const report = await checkCardConformance(signed, NOW)
    expect(report.ok).toBe(true)
    expect(report.checks[3]).toEqual({ name: 'expiry', passed: true, detail: 'card does not expire (expires_at=0.0)' })
  })

  it('a card made in the future fails the expiry check and says why', async () => {
    const signed = await issueCapabilityCard({
      issuer: 'x',
      name: 'X',
      tools: [],
      policies: { cost_cap_usd: 0, redaction_tier: 'none', sandbox_profile: 'none' },
      ttlSeconds: 3600,
      privateKey: cardAKey,
      now: NOW + 301,
    })
    const report = await checkCardConformance(signed, NOW)
    expect(report.ok).toBe(false)
    expect(report.checks.filter((c) => !c.passed)).toEqual([
      { name: 'expiry', passed: false, detail: `created_at ${NOW + 301}.0 is more than 300 s in the future (not_yet_valid)` },
    ])
  })

  it('reports on a malformed card instead of refusing it', async () => {
    const value = raw('card_a.signed.json') as { card: Record<string, unknown> }
    value.card['advertised_tools'] = 'code_review'
    const report = await checkCardConformance(value, NOW)
    expect(report).toMatchObject({ ok: false, issuer: 'acme-orch', kid: 'a2a-acme-orch', fingerprint: CARD_A_FINGERPRINT })
    expect(report.checks.map((c) => [c.name, c.passed])).toEqual([
      ['required_fields', false],
      ['jcs_canonical', false],
      ['signature', false],
      ['expiry', true],
      ['issuer', true],
    ])
    expect(report.checks[0]?.detail).toBe("CapabilityCard 'advertised_tools' must be a list of strings")
  })

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 3],
    ['an empty object', {}],
    ['a card with a bad PEM', { card: { public_key_pem: 'x', issuer: '' } }],
  ])('never throws on %s', async (_name, value) => {
    const report = await checkCardConformance(value, NOW)
    expect(report.ok).toBe(false)
    expect(report.checks).toHaveLength(5)
    expect(report.fingerprint).toBeNull()
  })
})
