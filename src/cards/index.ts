/**
 * Signed capability cards (Bernstein §5): issue, verify, file format, policy gate, consume, conformance.
 *
 * @module
 */
export {
  CAPABILITY_CARD_SCHEMA_VERSION,
  CAPABILITY_CARD_TYP,
  CapabilityCardInvalid,
  capabilityCardFingerprint,
  capabilityCardSigningBytes,
  parseCapabilityCard,
  parseCapabilityCardBody,
} from './capability-card.js'
export type { CapabilityCardBody, CardPolicies, SignedCapabilityCard } from './capability-card.js'
export { decodeCardFile, MAX_CARD_FILE_CHARS, parseCardFile, serializeCardFile } from './card-file.js'
export { checkCardConformance } from './card-conformance.js'
export type { CardConformanceCheck, CardConformanceCheckName, CardConformanceReport } from './card-conformance.js'
export { consumePeerCard, PeerCardRejected } from './consume-peer-card.js'
export type { AcceptedPeerCard, ConsumePeerCardOptions, PeerCardRejection } from './consume-peer-card.js'
export { issueCapabilityCard } from './issue-capability-card.js'
export type { IssueCapabilityCardOptions } from './issue-capability-card.js'
export { OPEN_REQUIREMENTS, policiesMeetRequirements, REDACTION_TIERS, SANDBOX_PROFILES } from './policy-gate.js'
export type { PolicyGateResult, PolicyRequirements } from './policy-gate.js'
export { isExpired, verifyCapabilityCard } from './verify-capability-card.js'
export type { CardVerification, CardVerifyFailure, VerifyCapabilityCardOptions } from './verify-capability-card.js'
