import { type Schema, everyMember } from '../contract.js'
import { AppError } from '../errors.js'

export type TaskStatus = Schema<'TaskStatus'>
export const TASK_STATUSES = everyMember<TaskStatus>()([
  'planned',
  'open',
  'claimed',
  'in_progress',
  'done',
  'closed',
  'failed',
  'blocked',
  'waiting_for_subtasks',
  'cancelled',
  'orphaned',
  'pending_approval',
])

export type TaskScope = Schema<'Task'>['scope']
export type TaskComplexity = Schema<'Task'>['complexity']
export type TaskType = Schema<'Task'>['task_type']

export type ProgressEntry = Readonly<Schema<'ProgressEntry'>>

/** A Bernstein task (v1.9.3 `core/tasks/models.py`), as the domain sees it. Times are Unix seconds (floats). */
export interface Task {
  readonly id: string
  readonly tenantId: string
  readonly title: string
  readonly description: string
  readonly role: string
  readonly priority: number
  readonly scope: TaskScope
  readonly complexity: TaskComplexity
  readonly estimatedMinutes: number
  readonly status: TaskStatus
  readonly taskType: TaskType
  readonly dependsOn: readonly string[]
  readonly parentTaskId: string | null
  readonly ownedFiles: readonly string[]
  readonly assignedAgent: string | null
  readonly resultSummary: string | null
  readonly terminalReason: string | null
  readonly metadata: Readonly<Record<string, unknown>>
  readonly createdAt: number
  readonly updatedAt: number
  readonly claimedAt: number | null
  readonly completedAt: number | null
  readonly closedAt: number | null
  readonly progressLog: readonly ProgressEntry[]
  readonly version: number
}

/** Bernstein's transition table (`core/tasks/lifecycle.py`). Anything not listed is illegal. */
const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  planned: ['open', 'cancelled', 'failed'],
  open: ['claimed', 'waiting_for_subtasks', 'cancelled', 'failed'],
  claimed: ['in_progress', 'open', 'done', 'failed', 'cancelled', 'waiting_for_subtasks', 'blocked'],
  in_progress: ['done', 'failed', 'blocked', 'waiting_for_subtasks', 'open', 'cancelled', 'orphaned'],
  orphaned: ['done', 'failed', 'open'],
  blocked: ['open', 'cancelled', 'failed'],
  waiting_for_subtasks: ['done', 'blocked', 'cancelled', 'failed'],
  failed: ['open'],
  done: ['closed', 'failed'],
  closed: [],
  cancelled: [],
  pending_approval: [],
}

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to)
}

export function allowedTransitions(from: TaskStatus): readonly TaskStatus[] {
  return TRANSITIONS[from]
}

export function illegalTransition(from: TaskStatus, to: TaskStatus, id: string): AppError {
  return new AppError('illegal_transition', `Illegal task transition: '${from}' -> '${to}' (entity ${id})`)
}

export function assertTransition(task: Pick<Task, 'id' | 'status'>, to: TaskStatus): void {
  if (!canTransition(task.status, to)) throw illegalTransition(task.status, to, task.id)
}

/** Statuses after which the task never moves again (the completion receipt is minted on entering one). */
export const FINISHED_STATUSES: ReadonlySet<TaskStatus> = new Set(['done', 'closed', 'failed', 'cancelled'])

/** Bernstein's estimate by difficulty (trivial 10 | low 20 | medium 45 | high 90 | critical 120). */
export const ESTIMATE_BY_COMPLEXITY: Readonly<Record<TaskComplexity, number>> = { low: 20, medium: 45, high: 90 }

/**
 * Bounds on what a task accumulates after it is created. Bernstein has none, so one task could grow past what a
 * single response can carry (V8 strings stop near 512 MiB), and from then on every read and every transition of it
 * failed. Sizes are UTF-8 bytes, as stored; a report beyond either bound is refused (413) and changes nothing.
 */
export const MAX_PROGRESS_ENTRIES = 1000
export const MAX_PROGRESS_BYTES = 4 * 1024 * 1024

/** The task with one more progress entry, or a `payload_too_large` error when its log has no room for it. */
export function withProgressEntry(task: Task, entry: ProgressEntry): Task {
  if (task.progressLog.length >= MAX_PROGRESS_ENTRIES) {
    throw new AppError('payload_too_large', `Task '${task.id}' already has ${MAX_PROGRESS_ENTRIES} progress entries, the most a task keeps`)
  }
  if (progressMessageBytes(task.progressLog) + Buffer.byteLength(entry.message) > MAX_PROGRESS_BYTES) {
    throw new AppError('payload_too_large', `Task '${task.id}' progress messages would exceed ${MAX_PROGRESS_BYTES} bytes, the most a task keeps`)
  }
  return { ...task, progressLog: [...task.progressLog, entry] }
}

/**
 * What one page of a task listing may carry, in UTF-8 bytes of the tasks' text (an estimate of the response, close
 * from below). With the per-task bounds above a task stays within a few MiB, but `limit` goes to 500, and 500 large
 * tasks made a response of half a gigabyte that stalled the node for seconds and then failed. A page stops early
 * at this budget (always holding at least one task) and says where to go on with `next_cursor`.
 */
export const MAX_TASK_PAGE_BYTES = 32 * 1024 * 1024

/** The leading tasks of `tasks` whose estimated size fits {@link MAX_TASK_PAGE_BYTES}; at least the first. */
export function fitTaskPage(tasks: readonly Task[]): readonly Task[] {
  let total = 0
  for (let i = 0; i < tasks.length; i++) {
    total += estimatedTaskBytes(tasks[i] as Task)
    if (total > MAX_TASK_PAGE_BYTES && i > 0) return tasks.slice(0, i)
  }
  return tasks
}

function estimatedTaskBytes(task: Task): number {
  let bytes = Buffer.byteLength(task.title) + Buffer.byteLength(task.description) + Buffer.byteLength(task.role)
  bytes += Buffer.byteLength(JSON.stringify(task.metadata))
  if (task.resultSummary !== null) bytes += Buffer.byteLength(task.resultSummary)
  if (task.terminalReason !== null) bytes += Buffer.byteLength(task.terminalReason)
  for (const file of task.ownedFiles) bytes += Buffer.byteLength(file)
  return bytes + progressMessageBytes(task.progressLog)
}

/** The UTF-8 bytes of a progress log's messages, what {@link MAX_PROGRESS_BYTES} bounds. */
function progressMessageBytes(log: readonly ProgressEntry[]): number {
  let bytes = 0
  for (const entry of log) bytes += Buffer.byteLength(entry.message)
  return bytes
}
