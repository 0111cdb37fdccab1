import { describe, expect, it } from 'vitest'
import type { SignedCapabilityCard } from '../../../src/cards/capability-card.js'
import { parseCardFile } from '../../../src/cards/card-file.js'
import { consumePeerCard, PeerCardRejected } from '../../../src/cards/consume-peer-card.js'
import type { ConsumePeerCardOptions } from '../../../src/cards/consume-peer-card.js'
import { vectorText } from '../../helpers/vectors.js'
import { CARD_A_FINGERPRINT, cardMeta, NOW, requirementsFrom } from './fixtures.js'
import type { ConsumeOutcome } from './fixtures.js'

const meta = cardMeta()
const open = requirementsFrom(meta.REQ_OPEN)
const card = (file: string): SignedCapabilityCard => parseCardFile(vectorText('capability_cards', file))

async function outcome(signed: SignedCapabilityCard, options: ConsumePeerCardOptions): Promise<ConsumeOutcome> {
  try {
    await consumePeerCard(signed, options)
    return { accepted: true }
  } catch (error) {
    if (!(error instanceof PeerCardRejected)) throw error
    return { accepted: false, reason: error.code, detail: error.detail, str: error.message }
  }
}

const pick = (o: ConsumeOutcome): ConsumeOutcome => (o.accepted ? { accepted: true } : { accepted: false, reason: o.reason, detail: o.detail, str: o.str })

describe('consumePeerCard (card_a.meta.json)', () => {
  const trusted = { trustedIssuerFingerprints: [CARD_A_FINGERPRINT], requirements: open, now: NOW }
  const t = meta.tamper_expiry_consume

  it('accepts card a when trusted with open requirements', async () => {
    expect(await outcome(card('card_a.signed.json'), trusted)).toEqual(pick(t.card_a.consume_original_trusted_open_policy_at_NOW))
    const accepted = await consumePeerCard(card('card_a.signed.json'), trusted)
    expect(accepted.fingerprint).toBe(CARD_A_FINGERPRINT)
    expect(accepted.card.card.issuer).toBe('acme-orch')
  })

  it('rejects the tampered card with reason signature', async () => {
    expect(await outcome(card('card_a.tampered.json'), trusted)).toEqual(pick(t.card_a.consume_tampered_at_NOW))
  })

  it('rejects card a when its key is not trusted', async () => {
    expect(await outcome(card('card_a.signed.json'), { ...trusted, trustedIssuerFingerprints: [] })).toEqual(pick(t.card_a.consume_original_untrusted_at_NOW))
  })

  it('rejects card a one second after expiry with reason signature', async () => {
    expect(await outcome(card('card_a.signed.json'), { ...trusted, now: t.card_a.expired_copy.now })).toEqual(pick(t.card_a.expired_copy.consume))
  })

  it('rejects the expired file at NOW with reason signature', async () => {
    expect(await outcome(card('card_a.expired.json'), trusted)).toEqual(pick(t.card_a_expired_file.consume_at_NOW))
  })

  it('rejects an issuer that does not match the claimed origin, before anything else', async () => {
    const expected = meta.accept_inbound_task_issuer_mismatch_card_a
    const result = await outcome(card('card_a.tampered.json'), { ...trusted, trustedIssuerFingerprints: [], expectedIssuer: 'not-acme' })
    expect(result).toMatchObject({ accepted: false, reason: expected.reason, detail: expected.detail })
    expect(result.str).toBe(`peer card rejected (issuer_mismatch): ${expected.detail}`)
    expect(await outcome(card('card_a.signed.json'), { ...trusted, expectedIssuer: 'acme-orch' })).toEqual({ accepted: true })
  })

  it('checks signature before trust, and trust before policy', async () => {
    const strict = requirementsFrom({ max_cost_cap_usd: 1, min_redaction_tier: 'strict', min_sandbox_profile: 'microvm' })
    const base = { trustedIssuerFingerprints: [] as string[], requirements: strict, now: NOW }
    expect((await outcome(card('card_a.tampered.json'), base)).reason).toBe('signature')
    expect((await outcome(card('card_a.signed.json'), base)).reason).toBe('untrusted_issuer')
    const policy = await outcome(card('card_a.signed.json'), { ...base, trustedIssuerFingerprints: [CARD_A_FINGERPRINT] })
    expect(policy).toEqual({
      accepted: false,
      reason: 'policy',
      detail:
        "cost cap: peer advertises 12.5 USD, operator ceiling is 1.0 USD; redaction tier: peer tier 'standard' is weaker than required 'strict'; sandbox profile: peer profile 'container' is weaker than required 'microvm'",
      str: "peer card rejected (policy): cost cap: peer advertises 12.5 USD, operator ceiling is 1.0 USD; redaction tier: peer tier 'standard' is weaker than required 'strict'; sandbox profile: peer profile 'container' is weaker than required 'microvm'",
    })
  })

  it('rejects non-card values with reason signature, or issuer_mismatch when an issuer is expected', async () => {
    expect((await outcome(null as unknown as SignedCapabilityCard, trusted)).reason).toBe('signature')
    expect(await outcome({} as SignedCapabilityCard, { ...trusted, expectedIssuer: 'acme-orch' })).toMatchObject({
      reason: 'issuer_mismatch',
      detail: "card issuer None does not match the message origin 'acme-orch'",
    })
  })
})
