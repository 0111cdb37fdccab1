import type { Selectable } from 'kysely'
import type { ProgressEntry, Task, TaskComplexity, TaskScope, TaskStatus, TaskType } from '../tasks/task.js'
import type { TaskTable } from './database.js'
import { Repository } from './repository.js'
import { ReusableInsert, ReusableQuery } from './reusable-query.js'

type TaskRow = Selectable<TaskTable>

function rowToTask(row: TaskRow): Task {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    title: row.title,
    description: row.description,
    role: row.role,
    priority: Number(row.priority),
    scope: row.scope as TaskScope,
    complexity: row.complexity as TaskComplexity,
    estimatedMinutes: Number(row.estimated_minutes),
    status: row.status as TaskStatus,
    taskType: row.task_type as TaskType,
    dependsOn: JSON.parse(row.depends_on) as string[],
    parentTaskId: row.parent_task_id,
    ownedFiles: JSON.parse(row.owned_files) as string[],
    assignedAgent: row.assigned_agent,
    resultSummary: row.result_summary,
    terminalReason: row.terminal_reason,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    claimedAt: row.claimed_at === null ? null : Number(row.claimed_at),
    completedAt: row.completed_at === null ? null : Number(row.completed_at),
    closedAt: row.closed_at === null ? null : Number(row.closed_at),
    progressLog: JSON.parse(row.progress_log) as ProgressEntry[],
    version: Number(row.version),
  }
}

function taskToRow(task: Task): TaskRow {
  return {
    id: task.id,
    tenant_id: task.tenantId,
    title: task.title,
    description: task.description,
    role: task.role,
    priority: task.priority,
    scope: task.scope,
    complexity: task.complexity,
    estimated_minutes: task.estimatedMinutes,
    status: task.status,
    task_type: task.taskType,
    depends_on: JSON.stringify(task.dependsOn),
    parent_task_id: task.parentTaskId,
    owned_files: JSON.stringify(task.ownedFiles),
    assigned_agent: task.assignedAgent,
    result_summary: task.resultSummary,
    terminal_reason: task.terminalReason,
    metadata: JSON.stringify(task.metadata),
    created_at: task.createdAt,
    updated_at: task.updatedAt,
    claimed_at: task.claimedAt,
    completed_at: task.completedAt,
    closed_at: task.closedAt,
    progress_log: JSON.stringify(task.progressLog),
    version: task.version,
  }
}

export interface TaskListQuery {
  readonly tenantId: string
  readonly status?: TaskStatus
  readonly role?: string
  readonly limit: number
  /** Exclusive position: tasks strictly older than this (created_at, id) pair. */
  readonly after?: { readonly createdAt: number; readonly id: string }
}

const INSERT_TASK = new ReusableInsert<TaskRow>('tasks')
const GET_TASK = new ReusableQuery(2, (db, tenantId: string, id: string) =>
  db.selectFrom('tasks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
)

export class TaskRepository extends Repository {
  async insert(task: Task): Promise<void> {
    await INSERT_TASK.execute(this.db, this.engine, taskToRow(task))
  }

  async get(tenantId: string, id: string): Promise<Task | undefined> {
    const row = await GET_TASK.first(this.db, this.engine, tenantId, id)
    return row && rowToTask(row)
  }

  /**
   * Like {@link get}, and on PostgreSQL also locks the row until the caller's transaction ends, so that concurrent
   * writers of one task queue instead of failing each other's compare-and-set. SQLite serialises writers anyway.
   */
  async getForUpdate(tenantId: string, id: string): Promise<Task | undefined> {
    let q = this.db.selectFrom('tasks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id)
    if (this.engine === 'postgres') q = q.forUpdate()
    const row = await q.executeTakeFirst()
    return row && rowToTask(row)
  }

  /**
   * Writes `next` only if the stored version is still `expectedVersion` (compare-and-set). Returns false when
   * another writer got there first; the caller reports a conflict instead of overwriting.
   */
  async replace(next: Task, expectedVersion: number): Promise<boolean> {
    const { id, tenant_id, created_at, ...changes } = taskToRow(next)
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
      q = q.where((eb) =>
        eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
      )
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute()
    return rows.map(rowToTask)
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
    return row && rowToTask(row)
  }

  async countByStatus(tenantId?: string): Promise<Map<TaskStatus, number>> {
    let q = this.db.selectFrom('tasks').select((eb) => ['status', eb.fn.countAll<number | string>().as('n')])
    if (tenantId !== undefined) q = q.where('tenant_id', '=', tenantId)
    const rows = await q.groupBy('status').execute()
    // count(*) is a bigint on PostgreSQL and arrives as a string.
    return new Map(rows.map((r) => [r.status as TaskStatus, Number(r.n)]))
  }
}
