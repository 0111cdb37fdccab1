import type { TaskStatus } from '../../src/tasks/task.js'

/** The task API's lifecycle routes: `POST /tasks/{task_id}/<route>`. */
export type TaskRoute = 'claim' | 'progress' | 'complete' | 'fail' | 'cancel' | 'block' | 'close'

/**
 * The statuses the task API can put a task in, and the calls that get it there from a fresh `open` task; the
 * statuses left out are reached only by writing the store.
 */
export const API_STEPS: Readonly<Partial<Record<TaskStatus, readonly TaskRoute[]>>> = {
  open: [],
  claimed: ['claim'],
  in_progress: ['claim', 'progress'],
  blocked: ['claim', 'block'],
  done: ['complete'],
  closed: ['complete', 'close'],
  failed: ['fail'],
  cancelled: ['cancel'],
}
