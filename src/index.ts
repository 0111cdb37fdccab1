/**
 * bernstein-a2a as a library (`import … from 'bernstein-a2a'`): run a node in your process, and verify offline what
 * nodes and peers hand you — capability cards, receipts, tracker-audit chains and lineage envelopes. Every export
 * is listed, with an example, in docs/library.md; `test/contract/main-entry.test.ts` pins the list.
 *
 * The typed HTTP client and the peer helpers (send and wait, verify a task's receipt, verify a peer's card before
 * delegating) are `bernstein-a2a/client` (also published alone as `@bernstein-a2a/client`).
 *
 * Verdicts are data in one shape, {@link Result}: `{ ok: true, value }` or `{ ok: false, code, detail }`. Functions
 * that read or build trust data (`parseCardFile`, `issueCapabilityCard`, `keyFingerprint`, `readAuditKey`,
 * `consumePeerCard`) throw a {@link TrustError} subclass with a stable `code` instead.
 *
 * @module
 */

// Run a node.
export { type Config, ConfigError, loadConfig } from './config.js'
export { type NodeApp, type RunningServer, StartupError, createNodeApp, startServer } from './server.js'
export type { Logger } from './logger.js'

// Verdicts and errors.
export type { Fail, Ok, Result } from './result.js'
export { TrustError, type TrustErrorCode } from './errors.js'
export { KeyRejected, type KeyRejectedCode } from './crypto/key-rejected.js'

// Capability cards: issue, read and write the file, verify, decide whether to delegate.
export {
  type CapabilityCardBody,
  CapabilityCardInvalid,
  type CapabilityCardInvalidCode,
  type CardPolicies,
  type SignedCapabilityCard,
} from './cards/capability-card.js'
export { parseCardFile, serializeCardFile } from './cards/card-file.js'
export { type IssueCapabilityCardOptions, issueCapabilityCard } from './cards/issue-capability-card.js'
export { type CardVerification, type CardVerifyFailure, type VerifyCapabilityCardOptions, verifyCapabilityCard } from './cards/verify-capability-card.js'
export {
  type AcceptedPeerCard,
  type ConsumePeerCardOptions,
  consumePeerCard,
  PeerCardRejected,
  type PeerCardRejection,
} from './cards/consume-peer-card.js'
export type { PolicyRequirements } from './cards/policy-gate.js'
export { keyFingerprint } from './crypto/fingerprint.js'

// Receipts.
export { type A2AReceiptResult, type ReceiptUnchecked, type VerifyA2AReceiptOptions, verifyA2AReceipt } from './receipts/verify-a2a-receipt.js'

// The tracker-audit chain.
export { AuditKeyError, type AuditKeyErrorCode, type ReadAuditKeyOptions, readAuditKey } from './lineage/audit-key.js'
export type { TrackerAuditEntry } from './lineage/tracker-entry.js'
export {
  type TrackerAuditFailure,
  type TrackerAuditLine,
  type TrackerAuditVerifyResult,
  verifyTrackerAuditFile,
  verifyTrackerAuditLines,
} from './lineage/tracker-verify.js'

// The lineage_v2 envelope.
export {
  LINEAGE_ENVELOPE_FIELD,
  type LineageEnvelope,
  type LineageEnvelopeFailure,
  type LineageEnvelopeParseOptions,
  type LineageEnvelopeResult,
  parseLineageEnvelope,
  parseLineageEnvelopeField,
} from './lineage/envelope.js'
export { type PyValue, parsePythonJson } from './canonical/python-json.js'
