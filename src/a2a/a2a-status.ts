import type { Schema } from '../contract.js'
import type { TaskStatus } from '../tasks/task.js'

export const A2A_STATUSES = ['submitted', 'working', 'input-required', 'auth-required', 'completed', 'failed', 'canceled'] as const
export type A2AStatus = (typeof A2A_STATUSES)[number]

/**
 * One complete table from every Bernstein status to an A2A status. Bernstein's REST map fell through to
 * `submitted` for anything unlisted, so a closed task looked freshly submitted (bernstein-behaviour.md §2.4).
 * This follows the richer JSON-RPC map (§2.7), except `orphaned`: an orphaned task can still be reopened or
 * finished, so it is `working`, not the terminal `failed`. The type checker keeps the table complete.
 */
export const A2A_STATUS_OF: Readonly<Record<TaskStatus, A2AStatus>> = {
  planned: 'submitted',
  open: 'submitted',
  claimed: 'working',
  in_progress: 'working',
  waiting_for_subtasks: 'working',
  blocked: 'input-required',
  pending_approval: 'input-required',
  done: 'completed',
  closed: 'completed',
  failed: 'failed',
  orphaned: 'working',
  cancelled: 'canceled',
}

/** An A2A v1.0 task state, as the JSON bindings spell it (`TASK_STATE_*`). */
export type TaskState = Schema<'A2AV1TaskState'>

/** The v1.0 state of each legacy A2A status (the seed surface's strings): one state table for both surfaces. */
export const TASK_STATE_OF_A2A_STATUS: Readonly<Record<A2AStatus, TaskState>> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
}

/** Every Bernstein status to its A2A v1.0 state, through {@link A2A_STATUS_OF}: the two surfaces never disagree. */
export const TASK_STATE_OF = Object.freeze(
  Object.fromEntries(Object.entries(A2A_STATUS_OF).map(([status, a2a]) => [status, TASK_STATE_OF_A2A_STATUS[a2a]])),
) as Readonly<Record<TaskStatus, TaskState>>

/** The Bernstein statuses that show as `state` (what a ListTasks status filter selects). */
export function statusesInState(state: TaskState): TaskStatus[] {
  return (Object.keys(TASK_STATE_OF) as TaskStatus[]).filter((status) => TASK_STATE_OF[status] === state)
}

/** Terminal states accept no more messages and cannot be cancelled. */
export const TERMINAL_TASK_STATES: ReadonlySet<TaskState> = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'])
/** Interrupted states wait for the client: a blocking SendMessage answers when the task reaches one. */
export const INTERRUPTED_TASK_STATES: ReadonlySet<TaskState> = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED'])
