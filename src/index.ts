/**
 * bernstein-a2a as a library: the server factory, and the trust primitives (capability cards, lineage chain and
 * envelope, receipts) for peers that verify offline. The typed HTTP client is `bernstein-a2a/client`.
 *
 * @module
 */
export { type App, type AppDeps, createApp } from './app.js'
export { type Config, ConfigError, loadConfig } from './config.js'
export { type RunningServer, startServer } from './server.js'
export { type Services, createServices } from './services.js'
export { AppError, type ErrorCode } from './errors.js'

export {
  type CapabilityCardBody,
  type CardPolicies,
  type SignedCapabilityCard,
  checkCardConformance,
  consumePeerCard,
  parseCardFile,
  PeerCardRejected,
  serializeCardFile,
} from './cards/index.js'
export { issueCapabilityCard } from './cards/issue-capability-card.js'
export { verifyCapabilityCard } from './cards/verify-capability-card.js'
export { policiesMeetRequirements, type PolicyRequirements } from './cards/policy-gate.js'
export { checkAgentCardConformance, signAgentCard } from './agent-card/index.js'
export { keyFingerprint } from './crypto/fingerprint.js'

export { PyFloat, type PyValue, dumpsPython, parsePythonJson, pythonCanonical } from './canonical/python-json.js'
export {
  GENESIS_PREV_HASH,
  type TrackerAuditEntry,
  buildTrackerEntry,
  trackerEntryLine,
  verifyTrackerAuditFile,
  verifyTrackerAuditLines,
} from './lineage/tracker-audit.js'
export {
  LINEAGE_ENVELOPE_FIELD,
  type LineageEnvelope,
  chainDigest,
  lineageEnvelopePayload,
  parseLineageEnvelope,
  parseLineageEnvelopeField,
  wrapLineageChain,
} from './lineage/envelope.js'
export { buildCrossOrgBoundaryEntry } from './lineage/boundary.js'
export { type A2AReceiptResult, verifyA2AReceipt } from './receipts/verify-a2a-receipt.js'
