import type { Selectable } from 'kysely'
import type { ProgressEntry, Task, TaskComplexity, TaskScope, TaskStatus, TaskType } from '../tasks/task.js'
import type { TaskTable } from './database.js'
import { readCounts } from './row-counts.js'
import { integer, json, member, nullable, rowMapping, sameNames } from './row-mapping.js'
import { TenantRepository, TenantRows } from './tenant-rows.js'

type TaskRow = Selectable<TaskTable>

const TASK = rowMapping<Task, TaskRow>()({
  ...sameNames('id', 'tenantId', 'title', 'description', 'role'),
  priority: integer,
  scope: member<TaskScope>(),
  complexity: member<TaskComplexity>(),
  estimatedMinutes: integer,
  status: member<TaskStatus>(),
  taskType: member<TaskType>(),
  dependsOn: json<readonly string[]>(),
  ...sameNames('parentTaskId'),
  ownedFiles: json<readonly string[]>(),
  ...sameNames('assignedAgent', 'resultSummary', 'terminalReason'),
  metadata: json<Readonly<Record<string, unknown>>>(),
  createdAt: integer,
  updatedAt: integer,
  claimedAt: nullable(integer),
  completedAt: nullable(integer),
  closedAt: nullable(integer),
  progressLog: json<readonly ProgressEntry[]>(),
  version: integer,
})

export interface TaskListQuery {
  readonly tenantId: string
  readonly status?: TaskStatus
  readonly role?: string
  readonly limit: number
  /** Exclusive position: tasks strictly older than this (created_at, id) pair. */
  readonly after?: { readonly createdAt: number; readonly id: string }
}

const TASKS = new TenantRows('tasks', TASK)

export class TaskRepository extends TenantRepository<'tasks', Task> {
  protected override readonly rows = TASKS

  /**
   * Like {@link get}, and on PostgreSQL also locks the row until the caller's transaction ends, so that concurrent
   * writers of one task queue instead of failing each other's compare-and-set. SQLite serialises writers anyway.
   */
  async getForUpdate(tenantId: string, id: string): Promise<Task | undefined> {
    let q = this.db.selectFrom('tasks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id)
    if (this.engine === 'postgres') q = q.forUpdate()
    const row = await q.executeTakeFirst()
    return row && TASK.toDomain(row)
  }

  /**
   * Writes `next` only if the stored version is still `expectedVersion` (compare-and-set). Returns false when
   * another writer got there first; the caller reports a conflict instead of overwriting.
   */
  async replace(next: Task, expectedVersion: number): Promise<boolean> {
    const { id, tenant_id, created_at, ...changes } = TASK.toRow(next)
    void created_at
    const result = await this.db
      .updateTable('tasks')
      .set(changes)
      .where('tenant_id', '=', tenant_id)
      .where('id', '=', id)
      .where('version', '=', expectedVersion)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  async list(query: TaskListQuery): Promise<Task[]> {
    let q = this.db.selectFrom('tasks').selectAll().where('tenant_id', '=', query.tenantId)
    if (query.status) q = q.where('status', '=', query.status)
    if (query.role) q = q.where('role', '=', query.role)
    const after = query.after
    if (after) {
      // A row comparison, which the (tenant_id, created_at, id) index can start from; spelled with `or`, a page
      // behind a cursor read every newer task first (PostgreSQL), so paging deep cost the whole listing.
      q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.createdAt, after.id)))
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute()
    return rows.map(TASK.toDomain)
  }

  /**
   * The next open task for a role, locked for the caller's transaction. On PostgreSQL `FOR UPDATE SKIP LOCKED`
   * lets concurrent claimers pass each other instead of queueing on one row; SQLite serialises writers anyway.
   */
  async nextOpenForRole(tenantId: string, role: string): Promise<Task | undefined> {
    let q = this.db
      .selectFrom('tasks')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('role', '=', role)
      .where('status', '=', 'open')
      .orderBy('priority', 'asc')
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(1)
    if (this.engine === 'postgres') q = q.forUpdate().skipLocked()
    const row = await q.executeTakeFirst()
    return row && TASK.toDomain(row)
  }

  /**
   * Tasks by status across all tenants, from the counts the database keeps on write (`row_counts`, migration 007):
   * one read of a dozen rows whatever the number of tasks. What `GET /health` and the metrics report.
   */
  async countedByStatus(): Promise<Map<TaskStatus, number>> {
    const counts = await readCounts(this.db, 'tasks.%')
    return new Map([...counts].map(([name, n]) => [name.slice('tasks.'.length) as TaskStatus, n]))
  }

  /** Tasks by status, counted from the table itself (a scan: for a tenant's own view and for checking the counts). */
  async countByStatus(tenantId?: string): Promise<Map<TaskStatus, number>> {
    let q = this.db.selectFrom('tasks').select((eb) => ['status', eb.fn.countAll<number | string>().as('n')])
    if (tenantId !== undefined) q = q.where('tenant_id', '=', tenantId)
    const rows = await q.groupBy('status').execute()
    // count(*) is a bigint on PostgreSQL and arrives as a string.
    return new Map(rows.map((r) => [r.status as TaskStatus, Number(r.n)]))
  }
}
