import type { Repositories } from '../store/store.js'
import type { Task } from './task.js'

/** What happened to a task, in the vocabulary of Bernstein's tracker-audit actions. */
export type TaskAction = 'create' | 'claim' | 'progress' | 'complete' | 'fail' | 'cancel' | 'block' | 'close' | 'resume'

export interface TaskChange {
  readonly action: TaskAction
  readonly before: Task | null
  readonly after: Task
  /** Free text that came with the change: a progress message, a reason, a result summary. */
  readonly note: string | null
  /** Who made the change (agent id or caller), when known. */
  readonly actor: string | null
}

/**
 * Observers of task changes run inside the transaction that makes the change, so their own writes (the lineage
 * chain, completion receipts) commit or roll back with it.
 */
export interface TaskObserver {
  onTaskChange(repos: Repositories, change: TaskChange): Promise<void>
}
