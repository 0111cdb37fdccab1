/**
 * Bernstein's tracker-audit HMAC chain (behaviour doc §7.1): entries, signing, schema check, streaming verification
 * and the audit key file. The pieces live in small modules; this one gathers them.
 *
 * @module
 */
export {
  GENESIS_PREV_HASH,
  TRACKER_AUDIT_ACTIONS,
  TRACKER_AUDIT_SCHEMA_VERSION,
  buildTrackerEntry,
  computeTrackerEntryHash,
  computeTrackerSignature,
  parseTrackerEntry,
  timeNs,
  trackerEntryBody,
  trackerEntryBytes,
  trackerEntryLine,
  trackerSigningPayload,
  uuid7Hex,
} from './tracker-entry.js'
export type {
  TrackerActor,
  TrackerAuditAction,
  TrackerAuditEntry,
  TrackerEntryContext,
  TrackerEntryInput,
  TrackerEntryParseResult,
} from './tracker-entry.js'
export {
  TrackerAuditVerifier,
  chainVerificationBody,
  parseTrackerLine,
  readByteLines,
  verifyTrackerAuditFile,
  verifyTrackerAuditLines,
} from './tracker-verify.js'
export type {
  TrackerAuditFailure,
  TrackerAuditLine,
  TrackerAuditVerifierOptions,
  TrackerAuditVerifyResult,
  TrackerLineFailure,
  TrackerLineParseResult,
} from './tracker-verify.js'
export { AuditKeyError, ensureAuditKey, readAuditKey } from './audit-key.js'
export type { ReadAuditKeyOptions } from './audit-key.js'
