import { parsePythonJson } from '../../../src/canonical/python-json.js'
import { GENESIS_PREV_HASH, buildTrackerEntry, parseTrackerEntry } from '../../../src/lineage/tracker-audit.js'
import type { TrackerActor, TrackerAuditAction, TrackerAuditEntry } from '../../../src/lineage/tracker-audit.js'
import { vectorJson, vectorText } from '../../helpers/vectors.js'

/** One `append()` call of tracker_audit/source_log.meta.json. */
export interface AppendCall {
  tracker_name: string
  ticket_id: string
  action: TrackerAuditAction
  actor: TrackerActor
  input_prompt: string
  output_blob: string
  etag_before?: string | null
  etag_after?: string | null
  cost_usd: number
  tokens_in?: number
  tokens_out?: number
  idempotency_key?: string
  lifecycle_event_id?: string
  failure_category?: string
  failure_detail?: string
  ts_ns: number
  entry_id: string
}

export interface SourceLogMeta {
  hmac_key_ascii: string
  genesis_prev_entry_hash: string
  append_calls: AppendCall[]
  per_entry: Array<{ signing_payload_utf8: string; entry_hash: string; signature: string }>
}

export const sourceMeta = vectorJson<SourceLogMeta>('tracker_audit', 'source_log.meta.json')
export const sourceKey = Buffer.from(sourceMeta.hmac_key_ascii, 'ascii')
export const receiverKey = Buffer.from('fedcba9876543210'.repeat(4), 'ascii')

/** ts_ns of entry i: the meta file holds it as a JSON number, which is exact only as T0 + i·1e9 in bigint. */
export function sourceTsNs(index: number): bigint {
  return 1_700_000_000_000_000_000n + BigInt(index) * 1_000_000_000n
}

/** Rebuilds the five source entries from the recorded append() arguments. */
export function buildSourceEntries(): TrackerAuditEntry[] {
  let prev = GENESIS_PREV_HASH
  return sourceMeta.append_calls.map((call, index) => {
    const entry = buildTrackerEntry(
      {
        trackerName: call.tracker_name,
        ticketId: call.ticket_id,
        action: call.action,
        actor: call.actor,
        inputPrompt: call.input_prompt,
        outputBlob: call.output_blob,
        etagBefore: call.etag_before ?? null,
        etagAfter: call.etag_after ?? null,
        costUsd: call.cost_usd,
        tokensIn: call.tokens_in ?? 0,
        tokensOut: call.tokens_out ?? 0,
        idempotencyKey: call.idempotency_key ?? null,
        lifecycleEventId: call.lifecycle_event_id ?? null,
        failureCategory: call.failure_category ?? null,
        failureDetail: call.failure_detail ?? null,
      },
      { prevEntryHash: prev, key: sourceKey, id: call.entry_id, tsNs: sourceTsNs(index) },
    )
    prev = entry.entry_hash
    return entry
  })
}

/** Parses the entries of a JSONL vector (throws on a malformed line: vectors are trusted here). */
export function readEntries(...parts: string[]): TrackerAuditEntry[] {
  return vectorText(...parts)
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const parsed = parseTrackerEntry(parsePythonJson(line))
      if (!parsed.ok) throw new Error(parsed.detail)
      return parsed.value
    })
}
