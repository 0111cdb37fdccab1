import { describe, expect, it } from 'vitest'
import { consumePeerCard, PeerCardRejected } from '../../../src/cards/consume-peer-card.js'
import { OPEN_REQUIREMENTS, type PolicyGateResult, policiesMeetRequirements } from '../../../src/cards/policy-gate.js'
import type { CardPolicies } from '../../../src/cards/capability-card.js'
import { vectorJson } from '../../helpers/vectors.js'
import { CARD_A_FINGERPRINT, issueCardA, NOW, requirementsFrom } from './fixtures.js'
import type { ConsumeOutcome, RequirementsJson } from './fixtures.js'

interface GateCase {
  case: string
  policies: CardPolicies
  requirements: RequirementsJson
  ok: boolean
  failures: string[]
  consume_peer_card_with_this_card_trusted_at_NOW?: ConsumeOutcome
}

const cases = vectorJson<GateCase[]>('capability_cards', 'policy_gate.json')

/** The failure texts of a verdict; none when it passed. */
const failuresOf = (result: PolicyGateResult): readonly string[] => (result.ok ? [] : result.failures)

describe('policiesMeetRequirements (policy_gate.json)', () => {
  it('covers all six cases', () => {
    expect(cases).toHaveLength(6)
  })

  it.each(cases.map((c) => [c.case, c] as const))('%s', (_name, c) => {
    const result = policiesMeetRequirements(c.policies, requirementsFrom(c.requirements))
    expect({ ok: result.ok, failures: failuresOf(result) }).toEqual({ ok: c.ok, failures: c.failures })
    expect(result).toEqual(c.ok ? { ok: true, value: undefined } : { ok: false, code: 'policy_unmet', detail: c.failures.join('; '), failures: c.failures })
  })

  it.each(cases.filter((c) => c.consume_peer_card_with_this_card_trusted_at_NOW).map((c) => [c.case, c] as const))(
    'consumePeerCard with a trusted card carrying %s policies',
    async (_name, c) => {
      const expected = c.consume_peer_card_with_this_card_trusted_at_NOW!
      const card = await issueCardA({ policies: c.policies })
      const run = consumePeerCard(card, {
        trustedIssuerFingerprints: [CARD_A_FINGERPRINT],
        requirements: requirementsFrom(c.requirements),
        now: NOW,
      })
      if (expected.accepted) {
        await expect(run).resolves.toMatchObject({ fingerprint: CARD_A_FINGERPRINT })
      } else {
        const error = await run.catch((e: unknown) => e)
        expect(error).toBeInstanceOf(PeerCardRejected)
        expect(error).toMatchObject({ code: expected.reason, detail: expected.detail, message: expected.str })
      }
    },
  )

  it('orders the tiers weakest first and passes equal or stronger ones', () => {
    const strong: CardPolicies = { cost_cap_usd: 0, redaction_tier: 'strict', sandbox_profile: 'microvm' }
    for (const tier of ['none', 'basic', 'standard', 'strict']) {
      for (const profile of ['none', 'process', 'container', 'microvm']) {
        expect(policiesMeetRequirements(strong, { maxCostCapUsd: 0, minRedactionTier: tier, minSandboxProfile: profile }).ok).toBe(true)
      }
    }
    const weak: CardPolicies = { cost_cap_usd: 0, redaction_tier: 'none', sandbox_profile: 'none' }
    expect(failuresOf(policiesMeetRequirements(weak, { ...OPEN_REQUIREMENTS, minRedactionTier: 'basic' }))).toEqual([
      "redaction tier: peer tier 'none' is weaker than required 'basic'",
    ])
    expect(failuresOf(policiesMeetRequirements(weak, { ...OPEN_REQUIREMENTS, minSandboxProfile: 'process' }))).toEqual([
      "sandbox profile: peer profile 'none' is weaker than required 'process'",
    ])
  })

  it('open requirements pass any known tiers and any cap; formats an infinite ceiling as inf', () => {
    expect(policiesMeetRequirements({ cost_cap_usd: 1e300, redaction_tier: 'none', sandbox_profile: 'none' }, OPEN_REQUIREMENTS).ok).toBe(true)
    expect(
      failuresOf(
        policiesMeetRequirements({ cost_cap_usd: 50, redaction_tier: 'none', sandbox_profile: 'none' }, { ...OPEN_REQUIREMENTS, maxCostCapUsd: 49.99 }),
      ),
    ).toEqual(['cost cap: peer advertises 50.0 USD, operator ceiling is 49.99 USD'])
  })

  it('fails closed on NaN and on tier names that only differ in case', () => {
    const policies: CardPolicies = { cost_cap_usd: Number.NaN, redaction_tier: 'Standard', sandbox_profile: 'container' }
    const result = policiesMeetRequirements(policies, OPEN_REQUIREMENTS)
    expect(result.ok).toBe(false)
    expect(failuresOf(result)).toEqual([
      'cost cap: peer advertises nan USD, operator ceiling is inf USD',
      "redaction tier: peer tier 'Standard' is not a known tier",
    ])
  })
})
