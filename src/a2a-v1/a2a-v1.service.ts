import { TERMINAL_TASK_STATES, INTERRUPTED_TASK_STATES, TASK_STATE_OF, statusesInState } from '../a2a/a2a-status.js'
import type { A2AService } from '../a2a/a2a.service.js'
import { AppError } from '../errors.js'
import type { Clock, Ids } from '../runtime.js'
import type { Store } from '../store/store.js'
import { FINISHED_STATUSES } from '../tasks/task.js'
import type { TaskService } from '../tasks/task.service.js'
import { A2AProtocolError, taskNotFound } from './a2a-v1-errors.js'
import type { A2AV1ListCursor, A2AV1ListFilter, A2AV1TaskSnapshot } from './a2a-v1-records.js'
import {
  type ListTasksRequest,
  type ListTasksResponse,
  type SendMessageRequest,
  type SendMessageResponse,
  type V1AgentCard,
  type V1Message,
  type V1Task,
  messageText,
  taskToWire,
} from './a2a-v1-wire.js'
import type { TaskEventSource } from './task-events.js'
import type { AgentExecutor } from './executor/agent-executor.js'
import { LifecycleTaskUpdater } from './executor/task-updater.js'
import type { PushConfigService, V1PushConfig } from './push/push-configs.js'
import { type V1TaskScope, assertReachable, hidesSignedDelegations } from './task-visibility.js'

export interface A2AV1Options {
  /** The longest a blocking SendMessage waits for a terminal or interrupted state before answering the task as it is. */
  readonly blockingTimeoutMs: number
  /** While waiting, the task is read again at least this often (changes made by another replica are seen this way). */
  readonly pollIntervalMs: number
  /** The role of the Bernstein task a new A2A task is linked to, unless the request's metadata names one. */
  readonly defaultRole: string
}

export const DEFAULT_A2A_V1_OPTIONS: A2AV1Options = Object.freeze({ blockingTimeoutMs: 30_000, pollIntervalMs: 250, defaultRole: 'backend' })

export interface A2AV1ServiceDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
  readonly a2a: A2AService
  readonly tasks: TaskService
  readonly events: TaskEventSource
  /** The agent card this node publishes (the extended card is the same document). */
  readonly agentCard: () => Promise<V1AgentCard>
  readonly options?: Partial<A2AV1Options>
  /** An in-process agent that answers new and resumed tasks (none: external workers do, through the lifecycle API). */
  readonly executor?: AgentExecutor
  /** Checks a push config sent inline with SendMessage and gives what stores it for the task, in its transaction. */
  readonly pushConfigs: Pick<PushConfigService, 'prepare'>
  /** Told when an executor's run throws (the task is failed with a generic reason; the error goes here). */
  readonly onExecutorError?: (error: unknown, taskId: string) => void
}

/** Who sends: the tenant the request is scoped to (and whether its token is bound to it), and a name for the receipt's `sender`. */
export interface A2AV1Caller extends V1TaskScope {
  readonly sender: string
}

/** Metadata key by which a request may choose the role of the linked Bernstein task. */
export const METADATA_ROLE = 'bernstein.role'
const DEFAULT_PAGE_SIZE = 50
const ROLE_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/

function encodePageToken(cursor: A2AV1ListCursor): string {
  return Buffer.from(JSON.stringify([cursor.statusTime, cursor.id])).toString('base64url')
}

function decodePageToken(token: string): A2AV1ListCursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'number' && Number.isFinite(value[0]) && typeof value[1] === 'string') {
      return { statusTime: value[0], id: value[1] }
    }
  } catch {
    // fall through
  }
  throw new A2AProtocolError('InvalidParams', 'pageToken is not a token this node issued', { field: 'pageToken' })
}

const sleepUntil = (ms: number): number => performance.now() + ms

/**
 * The A2A v1.0 operations over the node's A2A tasks: the very tasks `/a2a/tasks/send` creates (with their receipts
 * and lineage), seen through v1's Task, Message and Artifact, scoped to the caller's tenant.
 */
export class A2AV1Service {
  readonly #deps: A2AV1ServiceDeps
  readonly #options: A2AV1Options

  constructor(deps: A2AV1ServiceDeps) {
    this.#deps = deps
    this.#options = { ...DEFAULT_A2A_V1_OPTIONS, ...deps.options }
  }

  extendedAgentCard(): Promise<V1AgentCard> {
    return this.#deps.agentCard()
  }

  /**
   * SendMessage: a new task (the A2A task and its linked Bernstein task, attested, in one transaction, with the
   * message as the first of its history), or, with `message.taskId`, a message into that task. Then, unless
   * `returnImmediately`, waits for a terminal or interrupted state (at most `blockingTimeoutMs`).
   */
  async sendMessage(caller: A2AV1Caller, request: SendMessageRequest): Promise<SendMessageResponse> {
    const { message } = request
    const continuing = message.taskId !== undefined && message.taskId !== ''
    const direct = continuing ? null : (this.#deps.executor?.reply?.(message) ?? null)
    if (direct !== null) return { message: direct }
    const now = this.#deps.clock.now()
    const stored = JSON.stringify(message)
    const inlinePush = request.configuration?.taskPushNotificationConfig
    const storePush = inlinePush === undefined ? null : await this.#deps.pushConfigs.prepare(inlinePush as V1PushConfig)
    const { id, bernsteinTaskId, contextId, resumed, body } = await this.#deps.store.transaction(async (repos) => {
      if (message.taskId !== undefined && message.taskId !== '') {
        const record = await repos.a2a.get(caller.tenantId, message.taskId)
        if (!record) throw taskNotFound(message.taskId)
        await assertReachable(repos, caller, record.id)
        const contextId = await repos.a2aV1.contextOf(caller.tenantId, record.id)
        if (message.contextId !== undefined && message.contextId !== '' && message.contextId !== (contextId ?? record.id)) {
          throw new A2AProtocolError('InvalidParams', `contextId '${message.contextId}' is not the context of task '${record.id}'`, { taskId: record.id })
        }
        const linked = await repos.tasks.getForUpdate(caller.tenantId, record.bernsteinTaskId)
        if (linked && FINISHED_STATUSES.has(linked.status)) {
          throw new A2AProtocolError('UnsupportedOperationError', `Task '${record.id}' is ${TASK_STATE_OF[linked.status]} and accepts no more messages`, {
            taskId: record.id,
          })
        }
        const withIds = JSON.stringify({ ...message, taskId: record.id, ...(contextId !== null && { contextId }) })
        await repos.a2aV1.insertMessage({ a2aTaskId: record.id, messageId: message.messageId, role: message.role, body: withIds, createdAt: now })
        const note = `[A2A v1:${message.role}] ${messageText(message)}`
        // The answer to an input-required task resumes it (input-required -> submitted, then working once claimed).
        const resumed = linked?.status === 'blocked'
        await storePush?.(repos, caller.tenantId, record.id)
        if (resumed) await this.#deps.tasks.resumeWithin(repos, caller.tenantId, record.bernsteinTaskId, note)
        else await this.#deps.tasks.appendNoteWithin(repos, caller.tenantId, record.bernsteinTaskId, note)
        return { id: record.id, bernsteinTaskId: record.bernsteinTaskId, contextId: contextId ?? record.id, resumed, body: withIds }
      }
      const view = await this.#deps.a2a.createWithin(repos, caller.tenantId, {
        sender: caller.sender,
        message: messageText(message),
        role: this.#roleOf(request),
      })
      const taskId = view.body.id
      await storePush?.(repos, caller.tenantId, taskId)
      const contextId =
        message.contextId !== undefined && message.contextId !== '' ? message.contextId : `${this.#deps.ids.shortId()}${this.#deps.ids.shortId()}`
      await repos.a2aV1.insertTask({ a2aTaskId: taskId, tenantId: caller.tenantId, contextId, createdAt: now })
      await repos.a2aV1.insertMessage({
        a2aTaskId: taskId,
        messageId: message.messageId,
        role: message.role,
        body: JSON.stringify({ ...JSON.parse(stored), taskId, contextId }),
        createdAt: now,
      })
      const body = JSON.stringify({ ...JSON.parse(stored), taskId, contextId })
      return { id: taskId, bernsteinTaskId: view.body.bernstein_task_id ?? '', contextId, resumed: false, body }
    })
    const historyLength = request.configuration?.historyLength
    // The executor runs on its own: a blocking send waits for the task (woken by the executor's changes) within its
    // bound, not for the executor, which may take longer.
    void this.#execute({ tenantId: caller.tenantId, a2aTaskId: id, bernsteinTaskId, contextId }, JSON.parse(body) as V1Message, resumed)
    if (request.configuration?.returnImmediately === true) return { task: await this.getTask(caller, id, historyLength) }
    return { task: await this.#waitSettled(caller, id, bernsteinTaskId, historyLength) }
  }

  /**
   * Runs the executor, if any, on a task whose message has committed. It never rejects: an executor that throws
   * fails the task (when the task can still fail) and is reported to `onExecutorError`.
   */
  async #execute(
    target: { tenantId: string; a2aTaskId: string; bernsteinTaskId: string; contextId: string },
    message: V1Message,
    resumed: boolean,
  ): Promise<void> {
    const executor = this.#deps.executor
    if (executor === undefined) return
    const updater = new LifecycleTaskUpdater(this.#deps, target)
    try {
      await executor.execute({ tenantId: target.tenantId, taskId: target.a2aTaskId, contextId: target.contextId, message, resumed }, updater)
    } catch (error) {
      this.#deps.onExecutorError?.(error, target.a2aTaskId)
      await updater.fail('the agent failed').catch(() => undefined)
    }
  }

  /** Reads the task until it is terminal or interrupted, or the blocking bound has passed; answers it as it then is. */
  async #waitSettled(scope: V1TaskScope, id: string, bernsteinTaskId: string, historyLength: number | undefined): Promise<V1Task> {
    const deadline = sleepUntil(this.#options.blockingTimeoutMs)
    for (;;) {
      const remaining = deadline - performance.now()
      const wake = remaining > 0 ? this.#deps.events.next(scope.tenantId, bernsteinTaskId, Math.min(remaining, this.#options.pollIntervalMs)) : null
      const task = await this.getTask(scope, id, historyLength)
      const state = task.status.state
      if (wake === null || TERMINAL_TASK_STATES.has(state) || INTERRUPTED_TASK_STATES.has(state)) {
        // A pending wait ends at its own timer (at most one poll interval); nothing else holds it.
        return task
      }
      await wake
    }
  }

  #roleOf(request: SendMessageRequest): string {
    const chosen = request.metadata?.[METADATA_ROLE] ?? request.message.metadata?.[METADATA_ROLE]
    return typeof chosen === 'string' && ROLE_PATTERN.test(chosen) ? chosen : this.#options.defaultRole
  }

  async #snapshot(scope: V1TaskScope, id: string): Promise<A2AV1TaskSnapshot> {
    const repos = this.#deps.store.repos
    await assertReachable(repos, scope, id)
    const found = await repos.a2a.getTaskWithLinkedState(scope.tenantId, id)
    if (!found) throw taskNotFound(id)
    return { record: found.record, linked: found.linked, artifacts: found.artifacts, contextId: await repos.a2aV1.contextOf(scope.tenantId, id) }
  }

  /** GetTask: the task with the last `historyLength` messages of its history (all when undefined, none for 0). */
  async getTask(scope: V1TaskScope, id: string, historyLength?: number): Promise<V1Task> {
    const snapshot = await this.#snapshot(scope, id)
    const history = historyLength === 0 ? undefined : ((await this.#deps.store.repos.a2aV1.messagesOf([id])).get(id) ?? [])
    return taskToWire(snapshot, history, historyLength)
  }

  /** ListTasks: the tenant's tasks, newest status first, by cursor; artifacts only when asked, history only with `historyLength`. */
  async listTasks(scope: V1TaskScope, request: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE
    const after = request.pageToken !== undefined && request.pageToken !== '' ? decodePageToken(request.pageToken) : undefined
    let statusAfter: number | undefined
    if (request.statusTimestampAfter !== undefined) {
      const ms = Date.parse(request.statusTimestampAfter)
      if (Number.isNaN(ms)) throw new A2AProtocolError('InvalidParams', 'statusTimestampAfter is not a timestamp', { field: 'statusTimestampAfter' })
      statusAfter = ms / 1000
    }
    const filter: A2AV1ListFilter = {
      tenantId: scope.tenantId,
      ...(hidesSignedDelegations(scope) && { withoutSignedDelegations: true }),
      ...(request.contextId !== undefined && request.contextId !== '' && { contextId: request.contextId }),
      ...(request.status !== undefined && request.status !== 'TASK_STATE_UNSPECIFIED' && { statuses: statusesInState(request.status) }),
      ...(statusAfter !== undefined && { statusAfter }),
    }
    const repos = this.#deps.store.repos
    // One more row than the page tells whether another page follows.
    const rows = await repos.a2aV1.list(filter, { ...(after && { after }), limit: pageSize + 1, withArtifacts: request.includeArtifacts === true })
    const page = rows.slice(0, pageSize)
    const historyLength = request.historyLength
    const histories = historyLength === undefined || historyLength === 0 ? undefined : await repos.a2aV1.messagesOf(page.map((r) => r.record.id))
    const tasks = page.map((row) =>
      taskToWire(row, histories === undefined ? undefined : (histories.get(row.record.id) ?? []), historyLength === undefined ? 0 : historyLength),
    )
    const last = page[page.length - 1]
    return {
      tasks,
      nextPageToken: rows.length > page.length && last ? encodePageToken({ statusTime: last.statusTime, id: last.record.id }) : '',
      pageSize,
      totalSize: await repos.a2aV1.count(filter),
    }
  }

  /**
   * CancelTask: cancels the linked Bernstein task (its receipt and chain record the cancellation, as any other).
   * Idempotent; a task that finished otherwise is TaskNotCancelableError.
   */
  async cancelTask(scope: V1TaskScope, id: string): Promise<V1Task> {
    const snapshot = await this.#snapshot(scope, id)
    const linked = snapshot.linked
    if (linked === undefined) throw new A2AProtocolError('TaskNotCancelableError', `Task '${id}' has no linked task to cancel`, { taskId: id })
    if (linked.status !== 'cancelled') {
      if (FINISHED_STATUSES.has(linked.status)) throw this.#notCancelable(id, linked.status)
      try {
        await this.#deps.tasks.cancel(scope.tenantId, snapshot.record.bernsteinTaskId, 'canceled through A2A v1 CancelTask')
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'illegal_transition') throw error
        // Cancelled meanwhile (idempotent), or in a state that cannot be cancelled.
        const now = await this.#snapshot(scope, id)
        if (now.linked?.status !== 'cancelled') throw this.#notCancelable(id, now.linked?.status ?? linked.status)
      }
    }
    return this.getTask(scope, id)
  }

  #notCancelable(id: string, status: keyof typeof TASK_STATE_OF): A2AProtocolError {
    return new A2AProtocolError('TaskNotCancelableError', `Task '${id}' is ${TASK_STATE_OF[status]} and cannot be canceled`, { taskId: id })
  }
}
