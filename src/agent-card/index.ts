/**
 * Bernstein's signed "v1.0" agent card (§6): signing, serving bytes, inbound conformance checks.
 *
 * @module
 */
export { AGENT_CARD_TYP, agentCardBytes, agentCardSigningBytes, signAgentCard } from './sign-agent-card.js'
export type { AgentCardPayload, AgentCardSignature, SignAgentCardOptions, SignedAgentCard } from './sign-agent-card.js'
export { checkAgentCardConformance } from './agent-card-conformance.js'
export type {
  AgentCardCheck,
  AgentCardCheckName,
  AgentCardConformanceOptions,
  AgentCardConformanceReport,
  AgentCardRejection,
} from './agent-card-conformance.js'
