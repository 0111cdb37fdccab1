/**
 * The delegation policy gate (Bernstein `policies_meet_requirements`, §5.4). Fail-closed: an unknown tier or
 * profile on either side is a failure, never a pass.
 *
 * @module
 */
import { PyFloat, pythonRepr } from '../canonical/python-json.js'
import { type Result, fail, ok } from '../result.js'
import type { CardPolicies } from './capability-card.js'

/** What the operator requires of a peer before delegating to it. */
export interface PolicyRequirements {
  /** The peer's advertised cost cap must not exceed this (a lower cap is stricter). `Infinity` = no ceiling. */
  maxCostCapUsd: number
  minRedactionTier: string
  minSandboxProfile: string
}

/**
 * Every requirement met, or `policy_unmet` with every unmet one in `failures` (Bernstein's texts, in its order: cost,
 * redaction tier, sandbox profile) and `detail` their `"; "`-joined text.
 */
export type PolicyGateResult = Result<undefined, 'policy_unmet', { failures: readonly string[] }>

/** Redaction tiers, weakest first. */
export const REDACTION_TIERS: readonly string[] = ['none', 'basic', 'standard', 'strict']
/** Sandbox profiles, weakest first. */
export const SANDBOX_PROFILES: readonly string[] = ['none', 'process', 'container', 'microvm']

/** Requirements that let any well-formed card through (the CLI's defaults when only some `--require-*` are given). */
export const OPEN_REQUIREMENTS: PolicyRequirements = Object.freeze({
  maxCostCapUsd: Number.POSITIVE_INFINITY,
  minRedactionTier: 'none',
  minSandboxProfile: 'none',
})

/**
 * Checks a card's advertised policies against the operator's requirements, collecting every failure.
 *
 * @example
 * const gate = policiesMeetRequirements(card.policies, { maxCostCapUsd: 10, minRedactionTier: 'standard', minSandboxProfile: 'container' })
 * if (!gate.ok) console.error(gate.failures) // ['cost cap: peer advertises 12.5 USD, operator ceiling is 10.0 USD']
 */
export function policiesMeetRequirements(policies: CardPolicies, requirements: PolicyRequirements): PolicyGateResult {
  const failures: string[] = []
  // `!(a <= b)` so that a NaN on either side fails rather than passes.
  if (!(policies.cost_cap_usd <= requirements.maxCostCapUsd)) {
    failures.push(`cost cap: peer advertises ${floatText(policies.cost_cap_usd)} USD, operator ceiling is ${floatText(requirements.maxCostCapUsd)} USD`)
  }
  const redaction = rankFailure(REDACTION_TIERS, policies.redaction_tier, requirements.minRedactionTier, 'redaction tier', 'tier')
  if (redaction) failures.push(redaction)
  const sandbox = rankFailure(SANDBOX_PROFILES, policies.sandbox_profile, requirements.minSandboxProfile, 'sandbox profile', 'profile')
  if (sandbox) failures.push(sandbox)
  return failures.length === 0 ? ok() : fail('policy_unmet', failures.join('; '), { failures })
}

function rankFailure(order: readonly string[], peer: string, required: string, label: string, noun: string): string | undefined {
  const peerRank = order.indexOf(peer)
  const requiredRank = order.indexOf(required)
  if (peerRank < 0) return `${label}: peer ${noun} ${pythonRepr(peer)} is not a known ${noun}`
  if (requiredRank < 0) return `${label}: required ${noun} ${pythonRepr(required)} is not a known ${noun}`
  if (peerRank < requiredRank) return `${label}: peer ${noun} ${pythonRepr(peer)} is weaker than required ${pythonRepr(required)}`
  return undefined
}

/** Bernstein formats both amounts as Python floats (`10.0`, `1e-06`, `inf`). */
function floatText(value: number): string {
  return pythonRepr(new PyFloat(value))
}
