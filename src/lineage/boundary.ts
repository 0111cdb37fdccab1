/**
 * The receiver's cross-org boundary entry (behaviour doc §7.2, Bernstein's `append_cross_org_segment`): an ordinary
 * signed tracker-audit entry whose hashes bind the received envelope.
 *
 * @module
 */
import { pythonCanonicalBytes } from '../canonical/python-json.js'
import type { PyObject } from '../canonical/python-json.js'
import { lineageEnvelopePayloadBytes } from './envelope.js'
import type { LineageEnvelope } from './envelope.js'
import { buildTrackerEntry } from './tracker-entry.js'
import type { TrackerActor, TrackerAuditEntry } from './tracker-entry.js'

/** `tracker_name` of a boundary entry, so the hand-off is greppable in an audit export. */
export const CROSS_ORG_BOUNDARY_MARKER = 'a2a-cross-org-boundary'

/** The marker object whose canonical bytes are hashed into `input_prompt_hash`. */
export function crossOrgBoundaryMarker(envelope: LineageEnvelope): PyObject {
  return {
    marker: CROSS_ORG_BOUNDARY_MARKER,
    source_issuer: envelope.source_issuer,
    source_chain_digest: envelope.chain_digest,
    source_entry_count: envelope.entries.length,
  }
}

/** Canonical bytes of {@link crossOrgBoundaryMarker}. */
export function crossOrgBoundaryMarkerBytes(envelope: LineageEnvelope): Buffer {
  return pythonCanonicalBytes(crossOrgBoundaryMarker(envelope))
}

/** Receiver-side context of {@link buildCrossOrgBoundaryEntry}. */
export interface CrossOrgBoundaryOptions {
  /** The receiving actor recording the hand-off. */
  actor: TrackerActor
  /** The receiver's own ticket the delegated work attaches to. */
  ticketId: string
  lifecycleEventId?: string | null
  /** `entry_hash` of the last entry in the receiver's log (or the genesis hash). */
  prevEntryHash: string
  /** The receiver's operator HMAC key. */
  key: Uint8Array
  id?: string
  tsNs?: bigint | number
}

/**
 * Builds the boundary entry: `tracker_name` {@link CROSS_ORG_BOUNDARY_MARKER}, `action` `comment`, the marker's hash
 * as `input_prompt_hash`, the canonical envelope payload's hash as `output_blob_hash`, cost 0.0 and no tokens. The
 * source issuer and digest are bound only through those hashes, not stored as fields. Append its
 * `trackerEntryLine` to the receiver's log; it verifies with the receiver's key like any other entry.
 */
export function buildCrossOrgBoundaryEntry(envelope: LineageEnvelope, options: CrossOrgBoundaryOptions): TrackerAuditEntry {
  return buildTrackerEntry(
    {
      trackerName: CROSS_ORG_BOUNDARY_MARKER,
      ticketId: options.ticketId,
      action: 'comment',
      actor: options.actor,
      inputPrompt: crossOrgBoundaryMarkerBytes(envelope),
      outputBlob: lineageEnvelopePayloadBytes(envelope),
      lifecycleEventId: options.lifecycleEventId ?? null,
      costUsd: 0,
      tokensIn: 0,
      tokensOut: 0,
    },
    { prevEntryHash: options.prevEntryHash, key: options.key, id: options.id, tsNs: options.tsNs },
  )
}
