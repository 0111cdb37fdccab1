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
