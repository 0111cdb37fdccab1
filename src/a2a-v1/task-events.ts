import type { Repositories } from '../store/store.js'
import type { TaskChange, TaskObserver } from '../tasks/task-events.js'

/**
 * An event source per task: told of every change of a Bernstein task (as a task observer), it wakes whoever waits on
 * that task. Observers run inside the change's transaction, before its COMMIT, so a wake-up is only a hint to look
 * again: a waiter re-reads the task, and also looks again after a bounded interval, which covers changes made by
 * another replica. A blocking SendMessage waits here today; SSE streams and push delivery are meant to subscribe
 * to the same source.
 */
export class TaskEventSource implements TaskObserver {
  readonly #waiters = new Map<string, Set<() => void>>()

  static key(tenantId: string, taskId: string): string {
    return `${tenantId}\u0000${taskId}`
  }

  async onTaskChange(_repos: Repositories, change: TaskChange): Promise<void> {
    const waiting = this.#waiters.get(TaskEventSource.key(change.after.tenantId, change.after.id))
    if (waiting === undefined) return
    // After the current transaction has had a chance to commit.
    setImmediate(() => {
      for (const wake of [...waiting]) wake()
    })
  }

  /**
   * Resolves at the next change of the task or after `ms`, whichever comes first. Call it before reading the task,
   * so that a change between the read and the wait is not missed.
   */
  next(tenantId: string, taskId: string, ms: number): Promise<void> {
    const key = TaskEventSource.key(tenantId, taskId)
    return new Promise((resolve) => {
      const set = this.#waiters.get(key) ?? new Set()
      this.#waiters.set(key, set)
      const done = (): void => {
        clearTimeout(timer)
        set.delete(done)
        if (set.size === 0 && this.#waiters.get(key) === set) this.#waiters.delete(key)
        resolve()
      }
      const timer = setTimeout(done, Math.max(0, ms))
      set.add(done)
    })
  }

  /** How many waits are pending (for tests and metrics). */
  get waiting(): number {
    let n = 0
    for (const set of this.#waiters.values()) n += set.size
    return n
  }
}
