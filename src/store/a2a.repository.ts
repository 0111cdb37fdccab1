import { type Selectable, sql } from 'kysely'
import type {
  A2AArtifact,
  ArtifactUsage,
  A2AMessage,
  A2ATaskRecord,
  A2ATaskWithLinkedState,
  FederatedInbound,
  InboundKey,
  TaskRef,
  MessageDirection,
  Peer,
} from '../a2a/a2a-task.js'
import type { TaskStatus } from '../tasks/task.js'
import type { A2AMessageTable, A2ATaskTable, FederatedInboundTable } from './database.js'
import { type Conversion, flag, integer, json, member, nullable, rowMapping, sameNames } from './row-mapping.js'
import { ReusableQuery } from './reusable-query.js'
import { readCounts } from './row-counts.js'
import { TenantRepository, TenantRows } from './tenant-rows.js'

const receiptKind: Conversion<A2ATaskRecord['receiptKind'], string | null> = {
  read: (kind) => (kind === 'acceptance' || kind === 'completion' ? kind : null),
  write: (kind) => kind,
}

const A2A_TASK = rowMapping<A2ATaskRecord, Selectable<A2ATaskTable>>()({
  ...sameNames('id', 'tenantId', 'bernsteinTaskId', 'sender', 'message'),
  createdAt: integer,
  updatedAt: integer,
  receipt: nullable(json<Readonly<Record<string, unknown>>>()),
  receiptKind: receiptKind,
})

const MESSAGE = rowMapping<A2AMessage, Selectable<A2AMessageTable>>()({
  ...sameNames('id', 'tenantId', 'sender', 'recipient', 'content', 'taskId'),
  direction: member<MessageDirection>(),
  delivered: flag,
  ...sameNames('externalEndpoint'),
  createdAt: integer,
})

const INBOUND = rowMapping<FederatedInbound, Selectable<FederatedInboundTable>>()({
  ...sameNames('id', 'tenantId', 'peerName', 'senderKey', 'remoteTaskId', 'taskId', 'a2aTaskId', 'message', 'role', 'signingKey'),
  createdAt: integer,
})

const A2A_TASKS = new TenantRows('a2a_tasks', A2A_TASK)
/**
 * The A2A task, the two columns of its linked task that its response needs, and its artifacts, in one statement:
 * one row per artifact (one row when it has none).
 */
const GET_TASK_WITH_LINKED_STATE = new ReusableQuery(2, (db, tenantId: string, id: string) =>
  db
    .selectFrom('a2a_tasks as a')
    .leftJoin('tasks as t', (join) => join.onRef('t.tenant_id', '=', 'a.tenant_id').onRef('t.id', '=', 'a.bernstein_task_id'))
    .leftJoin('a2a_artifacts as r', 'r.a2a_task_id', 'a.id')
    .selectAll('a')
    .select([
      't.status as linked_status',
      't.updated_at as linked_updated_at',
      'r.seq as artifact_seq',
      'r.name as artifact_name',
      'r.content_type as artifact_content_type',
      'r.data as artifact_data',
      'r.created_at as artifact_created_at',
    ])
    .where('a.tenant_id', '=', tenantId)
    .where('a.id', '=', id)
    .orderBy('r.seq', 'asc'),
)
/** The card key a signed delegation was delivered under, by the A2A task's id or by its Bernstein task's (hot: every read of a task). */
const inboundSigningKeyBy = (column: 'a2a_task_id' | 'task_id') =>
  new ReusableQuery(2, (db, tenantId: string, id: string) =>
    db.selectFrom('federated_inbound').select('signing_key').where('tenant_id', '=', tenantId).where(column, '=', id).where('signing_key', 'is not', null),
  )
const INBOUND_SIGNING_KEY = { a2a_task_id: inboundSigningKeyBy('a2a_task_id'), task_id: inboundSigningKeyBy('task_id') } as const

const ARTIFACTS = new ReusableQuery(1, (db, a2aTaskId: string) =>
  db.selectFrom('a2a_artifacts').selectAll().where('a2a_task_id', '=', a2aTaskId).orderBy('seq', 'asc'),
)

function toArtifact(r: { name: string; content_type: string; data: string; created_at: number | string | bigint }): A2AArtifact {
  return { name: r.name, contentType: r.content_type, data: r.data, createdAt: Number(r.created_at) }
}

/** A2A tasks (found by tenant and id: {@link TenantRepository}), their artifacts and messages, inbound delegations, peers. */
export class A2ARepository extends TenantRepository<'a2a_tasks', A2ATaskRecord> {
  protected override readonly rows = A2A_TASKS

  /**
   * {@link get} with the linked task's status and update time and the artifacts, for building the task's
   * response: one statement, so they all come from one snapshot (separate reads could straddle a write).
   */
  async getTaskWithLinkedState(tenantId: string, id: string): Promise<A2ATaskWithLinkedState | undefined> {
    const { rows } = await GET_TASK_WITH_LINKED_STATE.execute(this.db, this.engine, tenantId, id)
    const first = rows[0]
    if (first === undefined) return undefined
    const artifacts: A2AArtifact[] = []
    for (const r of rows) {
      if (r.artifact_seq === null) continue
      artifacts.push(
        toArtifact({
          name: r.artifact_name as string,
          content_type: r.artifact_content_type as string,
          data: r.artifact_data as string,
          created_at: r.artifact_created_at as number,
        }),
      )
    }
    return {
      record: A2A_TASK.toDomain(first),
      linked:
        first.linked_status === null || first.linked_updated_at === null
          ? undefined
          : { status: first.linked_status as TaskStatus, updatedAt: Number(first.linked_updated_at) },
      artifacts,
    }
  }

  async findByBernsteinTask(tenantId: string, bernsteinTaskId: string): Promise<A2ATaskRecord[]> {
    const rows = await this.db.selectFrom('a2a_tasks').selectAll().where('tenant_id', '=', tenantId).where('bernstein_task_id', '=', bernsteinTaskId).execute()
    return rows.map(A2A_TASK.toDomain)
  }

  async setReceipt(id: string, receipt: Readonly<Record<string, unknown>>, kind: 'acceptance' | 'completion', updatedAt: number): Promise<void> {
    await this.db
      .updateTable('a2a_tasks')
      .set({ receipt: JSON.stringify(receipt), receipt_kind: kind, updated_at: updatedAt })
      .where('id', '=', id)
      .execute()
  }

  async touch(id: string, updatedAt: number): Promise<void> {
    await this.db.updateTable('a2a_tasks').set({ updated_at: updatedAt }).where('id', '=', id).execute()
  }

  async addArtifact(a2aTaskId: string, artifact: A2AArtifact): Promise<void> {
    await this.db
      .insertInto('a2a_artifacts')
      .values({
        a2a_task_id: a2aTaskId,
        name: artifact.name,
        content_type: artifact.contentType,
        data: artifact.data,
        created_at: artifact.createdAt,
      })
      .execute()
  }

  /** How many artifacts the task has and the UTF-8 bytes of their names and data, without reading them. */
  async artifactUsage(a2aTaskId: string): Promise<ArtifactUsage> {
    const bytes =
      this.engine === 'postgres'
        ? sql<string | number>`coalesce(sum(octet_length(name) + octet_length(data)), 0)`
        : sql<number>`coalesce(sum(length(cast(name as blob)) + length(cast(data as blob))), 0)`
    const row = await this.db
      .selectFrom('a2a_artifacts')
      .select((eb) => [eb.fn.countAll<string | number>().as('count'), bytes.as('bytes')])
      .where('a2a_task_id', '=', a2aTaskId)
      .executeTakeFirstOrThrow()
    return { count: Number(row.count), bytes: Number(row.bytes) }
  }

  async artifacts(a2aTaskId: string): Promise<A2AArtifact[]> {
    const { rows } = await ARTIFACTS.execute(this.db, this.engine, a2aTaskId)
    return rows.map(toArtifact)
  }

  async insertMessage(message: A2AMessage): Promise<void> {
    await this.db.insertInto('a2a_messages').values(MESSAGE.toRow(message)).execute()
  }

  async messages(tenantId: string, taskId?: string): Promise<A2AMessage[]> {
    let q = this.db.selectFrom('a2a_messages').selectAll().where('tenant_id', '=', tenantId)
    if (taskId !== undefined) q = q.where('task_id', '=', taskId)
    const rows = await q.orderBy('created_at', 'asc').execute()
    return rows.map(MESSAGE.toDomain)
  }

  /**
   * Inserts the inbound delegation unless its key (tenant, peer name, sender key, remote id) already exists; returns
   * true when this call inserted it. The unique constraint decides, so concurrent duplicates cannot both win.
   */
  async insertInboundIfNew(inbound: FederatedInbound): Promise<boolean> {
    const result = await this.db
      .insertInto('federated_inbound')
      .values(INBOUND.toRow(inbound))
      .onConflict((oc) => oc.columns(['tenant_id', 'peer_name', 'sender_key', 'remote_task_id']).doNothing())
      .executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
  }

  async getInbound(key: InboundKey): Promise<FederatedInbound | undefined> {
    const row = await this.db
      .selectFrom('federated_inbound')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: key.tenantId, peer_name: key.peerName, sender_key: key.senderKey, remote_task_id: key.remoteTaskId }))
      .executeTakeFirst()
    return row && INBOUND.toDomain(row)
  }

  /**
   * The key a task's delegation was delivered signed by (PEM), or null: the task is not a delegation of this tenant's,
   * or it came unsigned.
   */
  async inboundSigningKey(tenantId: string, ref: TaskRef): Promise<string | null> {
    const row =
      'a2aTaskId' in ref
        ? await INBOUND_SIGNING_KEY.a2a_task_id.first(this.db, this.engine, tenantId, ref.a2aTaskId)
        : await INBOUND_SIGNING_KEY.task_id.first(this.db, this.engine, tenantId, ref.taskId)
    return row?.signing_key ?? null
  }

  async countInbound(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('federated_inbound')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** Registers or refreshes a peer (Bernstein registers unknown senders on first contact). */
  async upsertPeer(peer: Peer): Promise<void> {
    await this.db
      .insertInto('peers')
      .values({
        tenant_id: peer.tenantId,
        name: peer.name,
        endpoint: peer.endpoint,
        capabilities: JSON.stringify(peer.capabilities),
        status: peer.status,
        last_seen: peer.lastSeen,
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'name']).doUpdateSet({ status: peer.status, last_seen: peer.lastSeen }))
      .execute()
  }

  /** Known peers (all tenants), from the count the database keeps on write (`row_counts`), not a scan. */
  async countPeers(): Promise<number> {
    return (await readCounts(this.db, 'peers')).get('peers') ?? 0
  }
}
