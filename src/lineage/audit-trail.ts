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
import { type PartitionScheme, partitionFor } from './partitions.js'
import type { Clock } from '../runtime.js'
import type { Repositories } from '../store/store.js'
import type { ChainEntryBuilder } from '../store/chain.repository.js'
import type { Task } from '../tasks/task.js'
import type { TaskChange, TaskObserver } from '../tasks/task-events.js'

/**
 * The tracker-audit chain's name in the `chain_entries` table before partitioning: now its legacy partition (the
 * default tenant's shard 0), and the prefix of every other partition's name (partitions.ts).
 */
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
  /** Partitions per tenant (default 1: one partition per tenant, the default tenant's being the legacy chain). */
  readonly partitions?: PartitionScheme
}

/**
 * Records what happens to each task as signed tracker-audit entries (bernstein-behaviour.md §7.1), inside the
 * transaction that makes the change. Appends take the chain head's lock first, so concurrent writers queue and
 * the chain never forks.
 */
export class AuditTrail implements TaskObserver {
  readonly #deps: AuditTrailDeps
  readonly #partitions: PartitionScheme

  constructor(deps: AuditTrailDeps) {
    this.#deps = deps
    this.#partitions = deps.partitions ?? { shards: 1 }
  }

  /** Appends a signed entry for a tenant's ticket to the ticket's partition. */
  async append(repos: Repositories, tenantId: string, input: TrackerEntryInput): Promise<TrackerAuditEntry> {
    return this.#append(repos, tenantId, input.ticketId, (prevEntryHash) => signTrackerEntry(input, this.#context(prevEntryHash)))
  }

  /**
   * Appends the cross-org boundary entry for an envelope received from a peer (§7.2), as the transaction's last
   * statement, after the entries of the task changes before it (the accepted task's creation first).
   */
  appendBoundary(
    repos: Repositories,
    tenantId: string,
    envelope: LineageEnvelope,
    options: Pick<CrossOrgBoundaryOptions, 'actor' | 'ticketId' | 'lifecycleEventId'>,
  ): void {
    this.#appendAtCommit(repos, tenantId, options.ticketId, (prevEntryHash) => {
      const entry = buildCrossOrgBoundaryEntry(envelope, { ...options, ...this.#context(prevEntryHash) })
      return { entry, line: trackerEntryLine(entry).slice(0, -1) }
    })
  }

  #context(prevEntryHash: string) {
    const tsNs = this.#deps.clock.nowNs()
    return { prevEntryHash, key: this.#deps.key, tsNs, id: uuid7Hex(Number(tsNs / 1_000_000n)) }
  }

  /** The entry is signed on the partition's head as the store finds it (again, if another writer moved it first). */
  async #append(repos: Repositories, tenantId: string, ticketId: string, sign: SignEntry): Promise<TrackerAuditEntry> {
    const { value } = await repos.chains.appendNext(
      partitionFor(TRACKER_AUDIT_CHAIN, this.#partitions, tenantId, ticketId),
      GENESIS_PREV_HASH,
      chainEntry(sign),
    )
    return value
  }

  /** As `append`, as the transaction's last statement (`appendAtCommit`), for entries nothing in it reads back. */
  #appendAtCommit(repos: Repositories, tenantId: string, ticketId: string, sign: SignEntry): void {
    repos.chains.appendAtCommit(partitionFor(TRACKER_AUDIT_CHAIN, this.#partitions, tenantId, ticketId), GENESIS_PREV_HASH, chainEntry(sign))
  }

  #appendEntryAtCommit(repos: Repositories, tenantId: string, input: TrackerEntryInput): void {
    this.#appendAtCommit(repos, tenantId, input.ticketId, (prevEntryHash) => signTrackerEntry(input, this.#context(prevEntryHash)))
  }

  /**
   * A task change's entry is appended as the transaction's last statement: nothing in the transaction reads it
   * back, and on PostgreSQL the partition head's lock is then held for the COMMIT alone.
   */
  async onTaskChange(repos: Repositories, change: TaskChange): Promise<void> {
    const { before, after } = change
    this.#appendEntryAtCommit(repos, after.tenantId, {
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
    this.#appendEntryAtCommit(repos, task.tenantId, {
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
}

/** Signs an entry on the previous entry's hash, with its stored line. */
type SignEntry = (prevEntryHash: string) => { entry: TrackerAuditEntry; line: string }

/** A signed entry as the chain stores it, built on the head's hash. */
function chainEntry(sign: SignEntry): ChainEntryBuilder<TrackerAuditEntry> {
  return (head) => {
    const { entry, line } = sign(head.headHash)
    return { entry: { entryHash: entry.entry_hash, ticketId: entry.ticket_id, trackerName: entry.tracker_name, line }, value: entry }
  }
}
