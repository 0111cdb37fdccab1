import { privateKeyFromSeed } from '../../../src/crypto/ed25519.js'
import { issueCapabilityCard } from '../../../src/cards/issue-capability-card.js'
import type { CardPolicies, SignedCapabilityCard } from '../../../src/cards/capability-card.js'
import type { PolicyRequirements } from '../../../src/cards/policy-gate.js'
import { vectorJson } from '../../helpers/vectors.js'

/** The verification time of the Bernstein card vectors. */
export const NOW = 1_700_000_100
export const CARD_A_FINGERPRINT = 'sha256:10ba682c8ad13513971e8b56881aab8bd702bb807796eca81932c735a94d6e6d'
export const cardAKey = privateKeyFromSeed(Buffer.alloc(32, 0x11))

export const CARD_A_POLICIES: CardPolicies = { cost_cap_usd: 12.5, redaction_tier: 'standard', sandbox_profile: 'container' }

/** Card a's inputs (vectors README), with overrides. */
export function issueCardA(overrides: { policies?: CardPolicies; now?: number; ttlSeconds?: number } = {}): Promise<SignedCapabilityCard> {
  return issueCapabilityCard({
    issuer: 'acme-orch',
    name: 'Acme Orchestrator',
    description: 'Acme delegated build runner',
    tools: ['task_orchestration', 'code_review'],
    policies: overrides.policies ?? CARD_A_POLICIES,
    ttlSeconds: overrides.ttlSeconds ?? 3600,
    privateKey: cardAKey,
    now: overrides.now ?? 1_700_000_000,
  })
}

/** Requirements as the description files spell them. */
export interface RequirementsJson {
  max_cost_cap_usd: number
  min_redaction_tier: string
  min_sandbox_profile: string
}

export function requirementsFrom(json: RequirementsJson): PolicyRequirements {
  return {
    maxCostCapUsd: json.max_cost_cap_usd,
    minRedactionTier: json.min_redaction_tier,
    minSandboxProfile: json.min_sandbox_profile,
  }
}

export interface ConsumeOutcome {
  accepted: boolean
  reason?: string
  detail?: string
  str?: string
}

export interface CardMeta {
  NOW: number
  REQ_OPEN: RequirementsJson
  card_a: {
    fingerprint: string
    kid: string
    verify_capability_card: Array<{ now: number; check_expiry: boolean; result: boolean }>
    check_card_conformance_at_NOW: unknown
  }
  tamper_expiry_consume: {
    card_a: {
      tampered_verify_at_NOW: boolean
      consume_original_trusted_open_policy_at_NOW: ConsumeOutcome
      consume_tampered_at_NOW: ConsumeOutcome
      consume_original_untrusted_at_NOW: ConsumeOutcome
      expired_copy: {
        now: number
        verify: boolean
        verify_check_expiry_false: boolean
        consume: ConsumeOutcome
      }
    }
    card_a_expired_file: {
      verify_at_NOW: boolean
      verify_at_NOW_check_expiry_false: boolean
      consume_at_NOW: ConsumeOutcome
      check_card_conformance_at_NOW: unknown
    }
  }
  accept_inbound_task_issuer_mismatch_card_a: ConsumeOutcome
}

export const cardMeta = (): CardMeta => vectorJson<CardMeta>('capability_cards', 'card_a.meta.json')
