import { AppError } from '../errors.js'

export const TASK_STATUSES = [
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
] as const
export type TaskStatus = (typeof TASK_STATUSES)[number]

export type TaskScope = 'small' | 'medium' | 'large'
export type TaskComplexity = 'low' | 'medium' | 'high'
export type TaskType = 'standard' | 'upgrade_proposal' | 'fix' | 'research'

export interface ProgressEntry {
  readonly timestamp: number
  readonly message: string
  readonly percent: number
}

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
