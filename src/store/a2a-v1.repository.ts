import { type RawBuilder, sql } from 'kysely'
import type { A2AArtifact, A2ATaskRecord } from '../a2a/a2a-task.js'
import type { A2AV1ListCursor, A2AV1ListFilter, A2AV1MessageRow, A2AV1TaskRow, A2AV1TaskSnapshot } from '../a2a-v1/a2a-v1-records.js'
import type { TaskStatus } from '../tasks/task.js'
import { Repository } from './repository.js'

interface ListedRow {
  id: string
  tenant_id: string
  bernstein_task_id: string
  sender: string
  message: string
  created_at: number | string
  updated_at: number | string
  receipt: string | null
  receipt_kind: string | null
  linked_status: string | null
  linked_updated_at: number | string | null
  context_id: string | null
  status_time: number | string
}

function toSnapshot(r: ListedRow, artifacts: readonly A2AArtifact[] | undefined): A2AV1TaskSnapshot & { statusTime: number } {
  const record: A2ATaskRecord = {
    id: r.id,
    tenantId: r.tenant_id,
    bernsteinTaskId: r.bernstein_task_id,
    sender: r.sender,
    message: r.message,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    receipt: r.receipt === null ? null : (JSON.parse(r.receipt) as Record<string, unknown>),
    receiptKind: r.receipt_kind === 'acceptance' || r.receipt_kind === 'completion' ? r.receipt_kind : null,
  }
  return {
    record,
    linked:
      r.linked_status === null || r.linked_updated_at === null ? undefined : { status: r.linked_status as TaskStatus, updatedAt: Number(r.linked_updated_at) },
    contextId: r.context_id,
    artifacts,
    statusTime: Number(r.status_time),
  }
}

/** The A2A v1.0 additions to A2A tasks: contexts, history, and the listing of a tenant's A2A tasks. */
export class A2AV1Repository extends Repository {
  async insertTask(row: A2AV1TaskRow): Promise<void> {
    await this.db
      .insertInto('a2a_v1_tasks')
      .values({ a2a_task_id: row.a2aTaskId, tenant_id: row.tenantId, context_id: row.contextId, created_at: row.createdAt })
      .execute()
  }

  async contextOf(tenantId: string, a2aTaskId: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('a2a_v1_tasks')
      .select('context_id')
      .where('tenant_id', '=', tenantId)
      .where('a2a_task_id', '=', a2aTaskId)
      .executeTakeFirst()
    return row?.context_id ?? null
  }

  async insertMessage(row: A2AV1MessageRow): Promise<void> {
    await this.db
      .insertInto('a2a_v1_messages')
      .values({ a2a_task_id: row.a2aTaskId, message_id: row.messageId, role: row.role, body: row.body, created_at: row.createdAt })
      .execute()
  }

  /** The history of each task (JSON text of each message, oldest first); at most the last `limit` of each when given. */
  async messagesOf(a2aTaskIds: readonly string[], limit?: number): Promise<Map<string, string[]>> {
    const byTask = new Map<string, string[]>()
    if (a2aTaskIds.length === 0 || limit === 0) return byTask
    const rows = await this.db
      .selectFrom('a2a_v1_messages')
      .select(['a2a_task_id', 'body'])
      .where('a2a_task_id', 'in', a2aTaskIds)
      .orderBy('a2a_task_id')
      .orderBy('seq', 'asc')
      .execute()
    for (const row of rows) {
      const list = byTask.get(row.a2a_task_id) ?? []
      list.push(row.body)
      byTask.set(row.a2a_task_id, list)
    }
    if (limit !== undefined) for (const [id, list] of byTask) byTask.set(id, list.slice(-limit))
    return byTask
  }

  /** The artifacts of each task, in the order they were added. */
  async artifactsOf(a2aTaskIds: readonly string[]): Promise<Map<string, A2AArtifact[]>> {
    const byTask = new Map<string, A2AArtifact[]>()
    if (a2aTaskIds.length === 0) return byTask
    const rows = await this.db.selectFrom('a2a_artifacts').selectAll().where('a2a_task_id', 'in', a2aTaskIds).orderBy('seq', 'asc').execute()
    for (const r of rows) {
      const list = byTask.get(r.a2a_task_id) ?? []
      list.push({ name: r.name, contentType: r.content_type, data: r.data, createdAt: Number(r.created_at) })
      byTask.set(r.a2a_task_id, list)
    }
    return byTask
  }

  /** The status time of a task: its A2A record's or its linked task's last change, whichever is later. */
  #statusTime(): RawBuilder<number> {
    return this.engine === 'postgres'
      ? sql<number>`greatest(a.updated_at, coalesce(t.updated_at, a.updated_at))`
      : sql<number>`max(a.updated_at, coalesce(t.updated_at, a.updated_at))`
  }

  #filtered(filter: A2AV1ListFilter) {
    const statusTime = this.#statusTime()
    let q = this.db
      .selectFrom('a2a_tasks as a')
      .leftJoin('tasks as t', (join) => join.onRef('t.tenant_id', '=', 'a.tenant_id').onRef('t.id', '=', 'a.bernstein_task_id'))
      .leftJoin('a2a_v1_tasks as v', 'v.a2a_task_id', 'a.id')
      .where('a.tenant_id', '=', filter.tenantId)
    if (filter.contextId !== undefined) q = q.where('v.context_id', '=', filter.contextId)
    if (filter.statuses !== undefined) q = q.where('t.status', 'in', filter.statuses.length > 0 ? [...filter.statuses] : ['-'])
    if (filter.statusAfter !== undefined) q = q.where(statusTime, '>', filter.statusAfter)
    if (filter.withoutSignedDelegations === true) {
      q = q.where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('federated_inbound as f')
              .select('f.id')
              .whereRef('f.tenant_id', '=', 'a.tenant_id')
              .whereRef('f.a2a_task_id', '=', 'a.id')
              .where('f.signing_key', 'is not', null),
          ),
        ),
      )
    }
    return { q, statusTime }
  }

  /** One page of the tenant's A2A tasks, newest status first (ties by id, descending). */
  async list(
    filter: A2AV1ListFilter,
    page: { readonly after?: A2AV1ListCursor; readonly limit: number; readonly withArtifacts: boolean },
  ): Promise<(A2AV1TaskSnapshot & { statusTime: number })[]> {
    const { q, statusTime } = this.#filtered(filter)
    let query = q
    const after = page.after
    if (after !== undefined) {
      query = query.where((eb) => eb.or([eb(statusTime, '<', after.statusTime), eb.and([eb(statusTime, '=', after.statusTime), eb('a.id', '<', after.id)])]))
    }
    const rows = (await query
      .selectAll('a')
      .select(['t.status as linked_status', 't.updated_at as linked_updated_at', 'v.context_id as context_id', statusTime.as('status_time')])
      .orderBy(statusTime, 'desc')
      .orderBy('a.id', 'desc')
      .limit(page.limit)
      .execute()) as unknown as ListedRow[]
    const artifacts = page.withArtifacts ? await this.artifactsOf(rows.map((r) => r.id)) : undefined
    return rows.map((r) => toSnapshot(r, artifacts === undefined ? undefined : (artifacts.get(r.id) ?? [])))
  }

  /** How many tasks the filter matches (all pages). */
  async count(filter: A2AV1ListFilter): Promise<number> {
    const { q } = this.#filtered(filter)
    const row = await q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()
    return Number(row.n)
  }
}
