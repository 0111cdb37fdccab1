import { AppError, taskNotFound } from '../errors.js'
import type { Clock, Ids } from '../runtime.js'
import type { Repositories, Store } from '../store/store.js'
import { type Task, type TaskComplexity, type TaskScope, type TaskStatus, type TaskType, assertTransition, fitTaskPage, withProgressEntry } from './task.js'
import type { TaskAction, TaskObserver } from './task-events.js'

export interface NewTask {
  readonly title: string
  readonly description?: string
  readonly role?: string
  readonly priority?: number
  readonly scope?: TaskScope
  readonly complexity?: TaskComplexity
  readonly estimatedMinutes?: number
  readonly taskType?: TaskType
  readonly dependsOn?: readonly string[]
  readonly parentTaskId?: string | null
  readonly ownedFiles?: readonly string[]
  readonly metadata?: Readonly<Record<string, unknown>>
}

export interface TaskPage {
  readonly tasks: readonly Task[]
  readonly nextCursor: string | null
}

export interface ListTasksInput {
  readonly status?: TaskStatus
  readonly role?: string
  readonly limit: number
  readonly cursor?: string
}

export interface TaskServiceDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
  readonly observers?: readonly TaskObserver[]
}

function encodeCursor(task: Task): string {
  return Buffer.from(JSON.stringify([task.createdAt, task.id])).toString('base64url')
}

function decodeCursor(cursor: string): { createdAt: number; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'number' && typeof value[1] === 'string') {
      return { createdAt: value[0], id: value[1] }
    }
  } catch {
    // fall through to the validation error
  }
  throw new AppError('validation_failed', 'invalid cursor', {
    issues: [{ loc: ['query', 'cursor'], msg: 'Invalid pagination cursor', type: 'value_error' }],
  })
}

/** Deepest nesting accepted in `metadata`: far beyond real use, far below what JSON.stringify can recurse. */
export const MAX_METADATA_DEPTH = 100

/** Nesting depth of a JSON value (a scalar is 0), counted without recursion so no input can overflow the stack. */
function jsonDepth(value: unknown, limit: number): number {
  let deepest = 0
  const pending: [unknown, number][] = [[value, 0]]
  while (pending.length > 0) {
    const [item, depth] = pending.pop() as [unknown, number]
    if (typeof item !== 'object' || item === null) continue
    if (depth + 1 > deepest) deepest = depth + 1
    if (deepest > limit) return deepest
    for (const child of Object.values(item)) pending.push([child, depth + 1])
  }
  return deepest
}

/** The Bernstein task lifecycle: creation, listing, claiming and the transitions, one transaction each. */
export class TaskService {
  readonly #deps: TaskServiceDeps
  readonly #observers: TaskObserver[]

  constructor(deps: TaskServiceDeps) {
    this.#deps = deps
    this.#observers = [...(deps.observers ?? [])]
  }

  /**
   * Adds an observer, told after those already subscribed. Observers run inside the change's transaction, in
   * subscription order. For observers built after the service (the A2A service needs the task service first).
   */
  subscribe(observer: TaskObserver): void {
    this.#observers.push(observer)
  }

  /** Builds a new open task (used inside other services' transactions, e.g. A2A send). */
  newTask(tenantId: string, input: NewTask): Task {
    const now = this.#deps.clock.now()
    return {
      id: this.#deps.ids.ticketId(),
      tenantId,
      title: input.title,
      description: input.description ?? '',
      role: input.role ?? 'auto',
      priority: input.priority ?? 2,
      scope: input.scope ?? 'medium',
      complexity: input.complexity ?? 'medium',
      estimatedMinutes: input.estimatedMinutes ?? 30,
      status: 'open',
      taskType: input.taskType ?? 'standard',
      dependsOn: input.dependsOn ?? [],
      parentTaskId: input.parentTaskId ?? null,
      ownedFiles: input.ownedFiles ?? [],
      assignedAgent: null,
      resultSummary: null,
      terminalReason: null,
      metadata: input.metadata ?? {},
      createdAt: now,
      updatedAt: now,
      claimedAt: null,
      completedAt: null,
      closedAt: null,
      progressLog: [],
      version: 1,
    }
  }

  /** Inserts a task within an open transaction and tells the observers. */
  async insertWithin(repos: Repositories, task: Task, actor: string | null = null): Promise<void> {
    await repos.tasks.insert(task)
    await this.#notify(repos, 'create', null, task, null, actor)
  }

  async create(tenantId: string, input: NewTask): Promise<Task> {
    // Storing serialises metadata recursively; a pathologically deep document must be a 422, not a stack overflow.
    if (input.metadata !== undefined && jsonDepth(input.metadata, MAX_METADATA_DEPTH) > MAX_METADATA_DEPTH) {
      throw new AppError('validation_failed', 'metadata nested too deeply', {
        issues: [{ loc: ['body', 'metadata'], msg: `Metadata must not nest deeper than ${MAX_METADATA_DEPTH} levels`, type: 'value_error' }],
      })
    }
    const task = this.newTask(tenantId, input)
    await this.#deps.store.transaction((repos) => this.insertWithin(repos, task))
    return task
  }

  async get(tenantId: string, id: string): Promise<Task> {
    const task = await this.#deps.store.repos.tasks.get(tenantId, id)
    if (!task) throw taskNotFound(id)
    return task
  }

  async list(tenantId: string, input: ListTasksInput): Promise<TaskPage> {
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor)
    // One extra row tells whether another page exists without a count query.
    const rows = await this.#deps.store.repos.tasks.list({
      tenantId,
      limit: input.limit + 1,
      ...(input.status ? { status: input.status } : {}),
      ...(input.role ? { role: input.role } : {}),
      ...(after ? { after } : {}),
    })
    const tasks = fitTaskPage(rows.slice(0, input.limit))
    const last = tasks[tasks.length - 1]
    return { tasks, nextCursor: rows.length > tasks.length && last ? encodeCursor(last) : null }
  }

  /** Claims the next open task for a role; undefined when there is none. Never hands one task to two callers. */
  async claimNext(tenantId: string, role: string, agentId: string | null): Promise<Task | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const result = await this.#deps.store.transaction(async (repos) => {
        const candidate = await repos.tasks.nextOpenForRole(tenantId, role)
        if (!candidate) return { done: true as const, task: undefined }
        const claimed = this.#claimed(candidate, agentId)
        // The CAS makes a lost race visible even where row locks are not available.
        if (!(await repos.tasks.replace(claimed, candidate.version))) return { done: false as const, task: undefined }
        await this.#notify(repos, 'claim', candidate, claimed, null, agentId)
        return { done: true as const, task: claimed }
      })
      if (result.done) return result.task
    }
    throw new AppError('unavailable', 'Too much contention claiming the next task; retry')
  }

  claim(tenantId: string, id: string, agentId: string | null, expectedVersion?: number): Promise<Task> {
    return this.#mutate(tenantId, id, expectedVersion, 'claim', agentId, null, (task) => {
      assertTransition(task, 'claimed')
      return this.#claimed(task, agentId)
    })
  }

  progress(tenantId: string, id: string, message: string, percent: number, expectedVersion?: number): Promise<Task> {
    return this.#mutate(tenantId, id, expectedVersion, 'progress', null, message, (task, now) => {
      // The first report moves a claimed task to in_progress; later ones keep it there.
      if (task.status !== 'in_progress') assertTransition(task, 'in_progress')
      return withProgressEntry({ ...task, status: 'in_progress' }, { timestamp: now, message, percent })
    })
  }

  /** Records a progress entry without changing the status (inbound A2A messages). */
  async appendNoteWithin(repos: Repositories, tenantId: string, id: string, message: string): Promise<Task> {
    // Locked: concurrent notes for one task must all land (Bernstein appends every message), not lose a CAS race.
    const task = await repos.tasks.getForUpdate(tenantId, id)
    if (!task) throw taskNotFound(id)
    const now = this.#deps.clock.now()
    const next = { ...withProgressEntry(task, { timestamp: now, message, percent: 0 }), updatedAt: now, version: task.version + 1 }
    if (!(await repos.tasks.replace(next, task.version))) throw this.#conflict(task.id, task.version, undefined)
    await this.#notify(repos, 'progress', task, next, message, null)
    return next
  }

  /**
   * Puts a blocked task (A2A input-required) back in the queue, open, within the caller's transaction: the reply it
   * waited for has arrived (`note`). Illegal from any other status.
   */
  async resumeWithin(repos: Repositories, tenantId: string, id: string, note: string): Promise<Task> {
    const task = await repos.tasks.getForUpdate(tenantId, id)
    if (!task) throw taskNotFound(id)
    assertTransition(task, 'open')
    const now = this.#deps.clock.now()
    const next: Task = {
      ...withProgressEntry({ ...task, status: 'open' }, { timestamp: now, message: note, percent: 0 }),
      updatedAt: now,
      version: task.version + 1,
    }
    if (!(await repos.tasks.replace(next, task.version))) throw this.#conflict(task.id, task.version, undefined)
    await this.#notify(repos, 'resume', task, next, note, null)
    return next
  }

  complete(tenantId: string, id: string, resultSummary: string, expectedVersion?: number): Promise<Task> {
    return this.#mutate(tenantId, id, expectedVersion, 'complete', null, resultSummary, (task, now) => {
      // Bernstein claims an open task automatically before completing it.
      let from = task
      if (task.status === 'open') {
        assertTransition(task, 'claimed')
        from = this.#claimed(task, null)
      }
      assertTransition(from, 'done')
      return { ...from, status: 'done', resultSummary, completedAt: now }
    })
  }

  fail(tenantId: string, id: string, reason: string, expectedVersion?: number): Promise<Task> {
    return this.#mutate(tenantId, id, expectedVersion, 'fail', null, reason, (task, now) => {
      assertTransition(task, 'failed')
      return { ...task, status: 'failed', terminalReason: reason, completedAt: now }
    })
  }

  cancel(tenantId: string, id: string, reason: string | null, expectedVersion?: number): Promise<Task> {
    return this.#mutate(tenantId, id, expectedVersion, 'cancel', null, reason, (task, now) => {
      assertTransition(task, 'cancelled')
      return { ...task, status: 'cancelled', terminalReason: reason ?? 'cancelled', completedAt: now }
    })
  }

  block(tenantId: string, id: string, reason: string, expectedVersion?: number): Promise<Task> {
    return this.#mutate(tenantId, id, expectedVersion, 'block', null, reason, (task) => {
      assertTransition(task, 'blocked')
      return { ...task, status: 'blocked', terminalReason: reason }
    })
  }

  close(tenantId: string, id: string, reason: string | null, expectedVersion?: number): Promise<Task> {
    return this.#mutate(tenantId, id, expectedVersion, 'close', null, reason, (task, now) => {
      assertTransition(task, 'closed')
      return { ...task, status: 'closed', closedAt: now }
    })
  }

  #claimed(task: Task, agentId: string | null): Task {
    const now = this.#deps.clock.now()
    return { ...task, status: 'claimed', assignedAgent: agentId ?? task.assignedAgent, claimedAt: now, updatedAt: now, version: task.version + 1 }
  }

  #conflict(id: string, current: number, expected: number | undefined): AppError {
    return new AppError(
      'version_conflict',
      expected === undefined ? `Task '${id}' was modified concurrently; retry` : `Version conflict on task '${id}': expected ${expected}, current ${current}`,
    )
  }

  async #mutate(
    tenantId: string,
    id: string,
    expectedVersion: number | undefined,
    action: TaskAction,
    actor: string | null,
    note: string | null,
    change: (task: Task, now: number) => Task,
  ): Promise<Task> {
    return this.#deps.store.transaction(async (repos) => {
      // Locked (on PostgreSQL) like every other writer of a task row: a transition the caller did not make
      // conditional waits for a concurrent note or transition and then applies, instead of losing a CAS race it
      // never asked for; `expected_version` is still checked against the row as it is once the lock is held.
      const task = await repos.tasks.getForUpdate(tenantId, id)
      if (!task) throw taskNotFound(id)
      if (expectedVersion !== undefined && expectedVersion !== task.version) throw this.#conflict(id, task.version, expectedVersion)
      const now = this.#deps.clock.now()
      const next: Task = { ...change(task, now), updatedAt: now, version: task.version + 1 }
      if (!(await repos.tasks.replace(next, task.version))) throw this.#conflict(id, task.version, expectedVersion)
      await this.#notify(repos, action, task, next, note, actor)
      return next
    })
  }

  async #notify(repos: Repositories, action: TaskAction, before: Task | null, after: Task, note: string | null, actor: string | null): Promise<void> {
    for (const observer of this.#observers) await observer.onTaskChange(repos, { action, before, after, note, actor })
  }
}
