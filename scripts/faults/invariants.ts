/**
 * What must hold after any fault: every acknowledged write is there, both chains verify (the tracker-audit HMAC chain
 * through the node's own verifier, the receipt spine with Bernstein's `verifySpine` under the audit key), every chain
 * head agrees with its entries, no task is in a state the lifecycle cannot reach, and the federation ledger is
 * consistent (every accepted delivery's task and A2A task exist, and a redelivery is recognised as the first one).
 *
 * @module
 */
import { join } from 'node:path'
import { RECEIPT_SPINE_CHAIN } from '../../src/receipts/receipt-attestor.js'
import { TRACKER_AUDIT_CHAIN } from '../../src/lineage/audit-trail.js'
import { isPartitionOf } from '../../src/lineage/partitions.js'
import { readAuditKey } from '../../src/lineage/audit-key.js'
import { verifySpine } from '../../src/lineage/spine.js'
import { TASK_STATUSES } from '../../src/tasks/task.js'
import { type Answer, type ScenarioReport, type Storage, call, check } from './common.js'

/** SQL: the rows of every partition of a chain (the legacy name, and `<name>/...`), on either engine. */
const partitionsOf = (name: string): string => `(chain = '${name}' or substr(chain, 1, ${name.length + 1}) = '${name}/')`

/** The path every task of the mixed load walks, one transition (one version) per step. */
export const TASK_PATH = ['open', 'claimed', 'in_progress', 'done'] as const

/** A task the load created and moves along {@link TASK_PATH}. */
export interface TrackedTask {
  readonly id: string
  /** Created by an A2A send (its creation is counted with the send). */
  readonly linked: boolean
  /** The highest version an answer acknowledged (1: created). */
  ackedVersion: number
  /** The highest version a request was sent for (acknowledged or not: it may have committed). */
  sentVersion: number
}

/** Everything the node acknowledged, kept across restarts. */
export interface Acknowledged {
  readonly tasks: Map<string, TrackedTask>
  /** A2A sends: id → what the 201 said. */
  readonly sends: Map<string, { bernsteinTaskId: string; message: string; entryHash: string }>
  readonly artifacts: { a2aId: string; name: string }[]
  /** v0 deliveries: the remote id → how to deliver the same body again (signed afresh) and what the 202 said. */
  readonly deliveries: Map<string, { redeliver: (url: string) => Promise<Answer>; taskId: string; a2aTaskId: string }>
}

export function emptyAcknowledged(): Acknowledged {
  return { tasks: new Map(), sends: new Map(), artifacts: [], deliveries: new Map() }
}

/** How many acknowledged writes there are: creations, transitions, sends, artifacts, deliveries. */
export function acknowledgedWrites(acked: Acknowledged): number {
  let n = acked.sends.size + acked.artifacts.length + acked.deliveries.size
  for (const task of acked.tasks.values()) n += task.ackedVersion - (task.linked ? 1 : 0)
  return n
}

export interface InvariantCounts {
  readonly acknowledged: number
  readonly found: number
  readonly lost: number
}

interface TaskRow {
  id: string
  status: string
  version: number | string
  claimed_at: number | null
  completed_at: number | null
  result_summary: string | null
}

/**
 * Checks every invariant against the node at `url` (restarted on `storage`), adding a failure to `report` for each
 * one broken; `label` names the run in them. Returns what was acknowledged, found and lost.
 */
export async function checkInvariants(url: string, storage: Storage, acked: Acknowledged, report: ScenarioReport, label: string): Promise<InvariantCounts> {
  let found = 0
  let lost = 0
  const fail = (message: string): void => void report.failures.push(`${label}: ${message}`)

  // Every acknowledged task, at its acknowledged version or a later one it was sent, in the state of that version.
  for (const task of acked.tasks.values()) {
    const r = await call(url, 'GET', `/tasks/${task.id}`)
    const writes = task.ackedVersion - (task.linked ? 1 : 0)
    if (r.status !== 200) {
      lost += writes
      fail(`task ${task.id} (acknowledged at version ${task.ackedVersion}) answered ${r.status}`)
      continue
    }
    const { status, version } = r.json as { status: string; version: number }
    if (version < task.ackedVersion) {
      lost += task.ackedVersion - version
      found += writes - (task.ackedVersion - version)
      fail(`task ${task.id} is at version ${version}, acknowledged at ${task.ackedVersion}`)
    } else {
      found += writes
    }
    if (version > task.sentVersion) fail(`task ${task.id} is at version ${version}, but no request past ${task.sentVersion} was sent`)
    if (TASK_PATH[version - 1] !== status) fail(`task ${task.id} is ${status} at version ${version}: the lifecycle cannot reach that`)
  }
  for (const [id, send] of acked.sends) {
    const r = await call(url, 'GET', `/a2a/tasks/${id}`)
    const body = r.json as { bernstein_task_id?: string; message?: string }
    if (r.status === 200 && body.bernstein_task_id === send.bernsteinTaskId && body.message === send.message) found++
    else {
      lost++
      fail(`A2A task ${id} answered ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`)
    }
  }
  const artifactsByTask = new Map<string, string[]>()
  for (const { a2aId } of acked.artifacts) {
    if (artifactsByTask.has(a2aId)) continue
    const r = await call(url, 'GET', `/a2a/tasks/${a2aId}`)
    artifactsByTask.set(a2aId, r.status === 200 ? (r.json as { artifacts: { name: string }[] }).artifacts.map((a) => a.name) : [])
  }
  for (const { a2aId, name } of acked.artifacts) {
    if (artifactsByTask.get(a2aId)?.includes(name)) found++
    else {
      lost++
      fail(`artifact ${name} of A2A task ${a2aId} is missing`)
    }
  }
  // Deliveries: the A2A task is there, and the same body again is the first acceptance, not a new delegation.
  for (const [remoteId, delivery] of acked.deliveries) {
    const again = await delivery.redeliver(url)
    const body = again.json as { task_id?: string; a2a_task_id?: string }
    if (
      again.status === 202 &&
      again.headers.get('bernstein-delivery') === 'duplicate' &&
      body.task_id === delivery.taskId &&
      body.a2a_task_id === delivery.a2aTaskId
    ) {
      found++
    } else {
      lost++
      fail(
        `delivery ${remoteId} redelivered: ${again.status} ${again.headers.get('bernstein-delivery')} ${JSON.stringify(again.json).slice(0, 200)} (accepted as task ${delivery.taskId})`,
      )
    }
  }

  // The tracker-audit chain, by the node's own verifier.
  const verdict = await call(url, 'GET', '/lineage/tracker-audit/verify')
  const audit = verdict.json as { ok?: boolean; entries?: number; failure?: unknown }
  if (!(verdict.status === 200 && audit.ok === true)) fail(`tracker-audit chain does not verify: ${verdict.status} ${JSON.stringify(verdict.json)}`)

  // The receipt spine, partition by partition (docs/scaling.md), row by row under the audit key; every acknowledged
  // receipt is one of its rows.
  const spine = await storage.query<{ chain: string; line: string; entry_hash: string }>(
    `select chain, line, entry_hash from chain_entries where ${partitionsOf(RECEIPT_SPINE_CHAIN)} order by chain, position`,
  )
  const key = readAuditKey(join(storage.dataDir, 'audit.key'))
  for (const chain of new Set(spine.map((row) => row.chain))) {
    const spineVerdict = verifySpine(
      spine
        .filter((row) => row.chain === chain)
        .map((row) => row.line)
        .join('\n'),
      key,
    )
    if (spineVerdict.status !== 'ok') fail(`receipt spine ${chain} does not verify: ${spineVerdict.status} ${spineVerdict.errors.slice(0, 3).join('; ')}`)
  }
  const spineHashes = new Set(spine.map((row) => row.entry_hash))
  const missingReceipts = [...acked.sends.entries()].filter(([, send]) => !spineHashes.has(send.entryHash))
  if (missingReceipts.length > 0) fail(`${missingReceipts.length} acknowledged receipts are not in the spine (first: A2A task ${missingReceipts[0]?.[0]})`)

  // Chain heads agree with their entries: as long as the last position, pointing at the last entry.
  const heads = await storage.query<{ chain: string; head_hash: string; length: number | string }>('select chain, head_hash, length from chain_heads')
  for (const head of heads) {
    const rows = await storage.query<{ n: number | string; last: number | string | null }>(
      `select count(*) as n, max(position) as last from chain_entries where chain = '${head.chain}'`,
    )
    const n = Number(rows[0]?.n)
    const last = Number(rows[0]?.last ?? 0)
    if (n !== Number(head.length) || last !== Number(head.length))
      fail(`chain ${head.chain}: head says ${head.length} entries, ${n} stored (last position ${last})`)
    if (n > 0) {
      const tail = await storage.query<{ entry_hash: string }>(`select entry_hash from chain_entries where chain = '${head.chain}' and position = ${last}`)
      if (tail[0]?.entry_hash !== head.head_hash) fail(`chain ${head.chain}: head hash is not the last entry's`)
    }
  }
  if (verdict.status === 200 && audit.entries !== undefined) {
    const auditHeads = heads.filter((h) => isPartitionOf(h.chain, TRACKER_AUDIT_CHAIN))
    const headsSay = auditHeads.reduce((sum, h) => sum + Number(h.length), 0)
    if (auditHeads.length > 0 && headsSay !== audit.entries) fail(`tracker-audit verified ${audit.entries} entries, its partitions' heads say ${headsSay}`)
  }

  // No task in an impossible state, whoever wrote it; and each version is one audit entry.
  const tasks = await storage.query<TaskRow>('select id, status, version, claimed_at, completed_at, result_summary from tasks')
  const entries = await storage.query<{ ticket_id: string; n: number | string }>(
    `select ticket_id, count(*) as n from chain_entries where ${partitionsOf(TRACKER_AUDIT_CHAIN)} group by ticket_id`,
  )
  const entriesByTask = new Map(entries.map((e) => [e.ticket_id, Number(e.n)]))
  const statuses = new Set<string>(TASK_STATUSES)
  let impossible = 0
  for (const t of tasks) {
    const problems: string[] = []
    if (!statuses.has(t.status)) problems.push(`unknown status ${t.status}`)
    if (['claimed', 'in_progress', 'done'].includes(t.status) && t.claimed_at === null) problems.push(`${t.status} without claimed_at`)
    if (t.status === 'done' && (t.completed_at === null || t.result_summary === null)) problems.push('done without completed_at or result_summary')
    if (t.status === 'open' && (t.claimed_at !== null || t.completed_at !== null)) problems.push('open with claimed_at or completed_at')
    if ((entriesByTask.get(t.id) ?? 0) < Number(t.version)) problems.push(`version ${t.version} but ${entriesByTask.get(t.id) ?? 0} audit entries`)
    if (problems.length > 0) {
      impossible++
      if (impossible <= 3) fail(`task ${t.id}: ${problems.join(', ')}`)
    }
  }
  check(report, impossible <= 3, `${label}: ${impossible} tasks in an impossible state in all`)

  // The ledgers: every A2A task's linked task, and every accepted delivery's tasks, exist; no delivery twice.
  const orphans = await storage.query<{ id: string }>('select a.id from a2a_tasks a left join tasks t on t.id = a.bernstein_task_id where t.id is null')
  if (orphans.length > 0) fail(`${orphans.length} A2A tasks without their linked task`)
  const inbound = await storage.query<{ id: string }>(
    'select f.id from federated_inbound f left join tasks t on t.id = f.task_id left join a2a_tasks a on a.id = f.a2a_task_id where t.id is null or a.id is null',
  )
  if (inbound.length > 0) fail(`${inbound.length} accepted deliveries without their task or A2A task`)
  const twice = await storage.query<{ remote_task_id: string }>(
    'select remote_task_id from federated_inbound group by tenant_id, peer_name, remote_task_id having count(*) > 1',
  )
  if (twice.length > 0) fail(`${twice.length} deliveries accepted twice`)
  const unacknowledgedAccepted = await storage.query<{ n: number | string }>('select count(*) as n from federated_inbound')
  if (Number(unacknowledgedAccepted[0]?.n) < acked.deliveries.size) fail('fewer accepted deliveries stored than acknowledged')

  return { acknowledged: found + lost, found, lost }
}
