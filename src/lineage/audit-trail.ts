import { parsePythonJson } from '../canonical/python-json.js'
import { type CrossOrgBoundaryOptions, buildCrossOrgBoundaryEntry } from './boundary.js'
import type { LineageEnvelope } from './envelope.js'
import {
  GENESIS_PREV_HASH,
  type TrackerActor,
  type TrackerAuditEntry,
  type TrackerEntryInput,
  parseTrackerEntry,
  signTrackerEntry,
  trackerEntryLine,
  uuid7Hex,
} from './tracker-entry.js'
import type { Clock } from '../runtime.js'
import type { Repositories } from '../store/store.js'
import type { Task } from '../tasks/task.js'
import type { TaskChange, TaskObserver } from '../tasks/task-events.js'

/** The node's one tracker-audit chain in the `chain_entries` table. */
export const TRACKER_AUDIT_CHAIN = 'tracker-audit'
export const TRACKER_NAME = 'bernstein'

/** A stored line back to an entry. Lines were written by us, so a parse failure means the database was altered. */
export function parseStoredTrackerLine(line: string): TrackerAuditEntry {
  const parsed = parseTrackerEntry(parsePythonJson(line))
  if (!parsed.ok) throw new Error(`tracker-audit line does not parse: ${parsed.detail}`)
  return parsed.value
}

const etag = (task: Task | null): string | null => (task ? `${task.status}@${task.version}` : null)

const ACTION_OF: Readonly<Record<TaskChange['action'], TrackerEntryInput['action']>> = {
  create: 'transition',
  claim: 'claim',
  progress: 'comment',
  complete: 'transition',
  cancel: 'transition',
  close: 'transition',
  block: 'transition',
  resume: 'transition',
  fail: 'fail',
}

export interface AuditTrailDeps {
  /** The operator HMAC key (the ASCII bytes of the audit key file). */
  readonly key: Uint8Array
  readonly clock: Clock
}

/**
 * Records what happens to each task as signed tracker-audit entries (bernstein-behaviour.md §7.1), inside the
 * transaction that makes the change. Appends take the chain head's lock first, so concurrent writers queue and
 * the chain never forks.
 */
export class AuditTrail implements TaskObserver {
  readonly #deps: AuditTrailDeps

  constructor(deps: AuditTrailDeps) {
    this.#deps = deps
  }

  async append(repos: Repositories, input: TrackerEntryInput): Promise<TrackerAuditEntry> {
    const head = await repos.chains.lockHead(TRACKER_AUDIT_CHAIN, GENESIS_PREV_HASH)
    const { entry, line } = signTrackerEntry(input, {
      prevEntryHash: head.headHash,
      key: this.#deps.key,
      tsNs: this.#deps.clock.nowNs(),
      id: uuid7Hex(Number(this.#deps.clock.nowNs() / 1_000_000n)),
    })
    return this.#store(repos, head, entry, line)
  }

  /** Appends the cross-org boundary entry for an envelope received from a peer (§7.2). */
  async appendBoundary(
    repos: Repositories,
    envelope: LineageEnvelope,
    options: Pick<CrossOrgBoundaryOptions, 'actor' | 'ticketId' | 'lifecycleEventId'>,
  ): Promise<TrackerAuditEntry> {
    const head = await repos.chains.lockHead(TRACKER_AUDIT_CHAIN, GENESIS_PREV_HASH)
    const entry = buildCrossOrgBoundaryEntry(envelope, {
      ...options,
      prevEntryHash: head.headHash,
      key: this.#deps.key,
      tsNs: this.#deps.clock.nowNs(),
      id: uuid7Hex(Number(this.#deps.clock.nowNs() / 1_000_000n)),
    })
    return this.#store(repos, head, entry)
  }

  async onTaskChange(repos: Repositories, change: TaskChange): Promise<void> {
    const { before, after } = change
    await this.append(repos, {
      trackerName: TRACKER_NAME,
      ticketId: after.id,
      action: ACTION_OF[change.action],
      actor: this.#actor(after, change.actor),
      inputPrompt: change.note ?? '',
      outputBlob: JSON.stringify({ id: after.id, status: after.status, version: after.version, result_summary: after.resultSummary }),
      etagBefore: etag(before),
      etagAfter: etag(after),
      idempotencyKey: `${after.id}@${after.version}`,
      ...(change.action === 'fail' ? { failureCategory: 'task_failed', failureDetail: change.note } : {}),
    })
  }

  /** An artifact attached to an A2A task is recorded against its linked task (`attach`). */
  async onArtifact(repos: Repositories, task: Task, artifact: { name: string; contentType: string; data: string }): Promise<void> {
    await this.append(repos, {
      trackerName: TRACKER_NAME,
      ticketId: task.id,
      action: 'attach',
      actor: this.#actor(task, null),
      inputPrompt: artifact.name,
      outputBlob: artifact.data,
      etagBefore: etag(task),
      etagAfter: etag(task),
      idempotencyKey: null,
    })
  }

  #actor(task: Task, actor: string | null): TrackerActor {
    return { session_id: actor ?? task.assignedAgent ?? 'bernstein-a2a', role: task.role, model: 'none' }
  }

  async #store(
    repos: Repositories,
    head: { headHash: string; length: number },
    entry: TrackerAuditEntry,
    line = trackerEntryLine(entry).slice(0, -1),
  ): Promise<TrackerAuditEntry> {
    await repos.chains.append(TRACKER_AUDIT_CHAIN, head, {
      entryHash: entry.entry_hash,
      ticketId: entry.ticket_id,
      trackerName: entry.tracker_name,
      line,
    })
    return entry
  }
}
