import { TERMINAL_TASK_STATES, type TaskState } from '../a2a/a2a-status.js'
import type { Clock } from '../runtime.js'
import type { Store } from '../store/store.js'
import { A2AProtocolError } from './a2a-v1-errors.js'
import type { A2AV1Caller, A2AV1Service } from './a2a-v1.service.js'
import { METADATA_TASK_ID, type SendMessageRequest, type V1Message, type V1StreamResponse, type V1Task } from './a2a-v1-wire.js'
import type { TaskEventSource } from './task-events.js'
import type { V1TaskScope } from './task-visibility.js'

export interface A2AV1StreamOptions {
  /** A comment is sent this often on a stream with no event (so proxies and clients see it alive); 0: never. */
  readonly keepAliveMs: number
  /** The most bytes a stream may hold unsent; a reader further behind is disconnected. */
  readonly maxBufferBytes: number
  /** How long events stay in a task's log for `Last-Event-ID` resumption. */
  readonly retentionMs: number
  /** A stream reads its task's log at least this often (events written by another replica are seen this way). */
  readonly pollIntervalMs: number
  /** A stream is ended cleanly after this long, and the client resumes with `Last-Event-ID`; 0: never. */
  readonly maxDurationMs: number
}

export const DEFAULT_STREAM_OPTIONS: A2AV1StreamOptions = Object.freeze({
  keepAliveMs: 15_000,
  maxBufferBytes: 1024 * 1024,
  retentionMs: 600_000,
  pollIntervalMs: 250,
  maxDurationMs: 1_800_000,
})

/** One event of a task's stream: its id (its number in the task's log) and the StreamResponse. */
export interface TaskStreamEvent {
  readonly id: string
  readonly data: V1StreamResponse
}

export interface A2AV1StreamsDeps {
  readonly store: Store
  readonly clock: Clock
  readonly v1: A2AV1Service
  readonly events: TaskEventSource
  readonly options?: Partial<A2AV1StreamOptions>
}

/** Rows read from the log at a time. */
const BATCH = 100

const isTerminal = (state: string | null): boolean => state !== null && TERMINAL_TASK_STATES.has(state as TaskState)

/**
 * SendStreamingMessage and SubscribeToTask: a task's events as an async iterator, the Task first, then the rows of
 * its stream log (`StreamEventRecorder`) in order, ending after a terminal status. Every stream of a task, on any
 * replica, reads the same log, so they see the same events in the same order; a stream wakes at a change of the
 * task on this replica, and reads the log at least every `pollIntervalMs` for changes made on others.
 */
export class A2AV1Streams {
  readonly #deps: A2AV1StreamsDeps
  readonly options: A2AV1StreamOptions

  constructor(deps: A2AV1StreamsDeps) {
    this.#deps = deps
    this.options = { ...DEFAULT_STREAM_OPTIONS, ...deps.options }
  }

  /** SendStreamingMessage: sends the message (never blocking), then streams the task from the Task as it then was. */
  async sendStreaming(caller: A2AV1Caller, request: SendMessageRequest): Promise<AsyncGenerator<TaskStreamEvent>> {
    const sent = await this.#deps.v1.sendMessage(caller, { ...request, configuration: { ...request.configuration, returnImmediately: true } })
    // An agent that answered with a Message created no task: the stream is that one message.
    if (!('task' in sent)) return onlyMessage(sent.message)
    const started = sent.task
    // The log position first, then the task: an event in between is sent (again), never missed.
    const position = await this.#deps.store.repos.a2aV1Events.position(started.id)
    const task = await this.#deps.v1.getTask(caller, started.id, request.configuration?.historyLength)
    return this.#run(caller.tenantId, task, position.lastSeq, true)
  }

  /**
   * SubscribeToTask: the current Task, then its events; a finished task is UnsupportedOperationError. With
   * `lastEventId` (a reconnection) the events after it instead, as long as the log still holds them all (within
   * the retention window); otherwise the current Task first again.
   */
  async subscribe(scope: V1TaskScope, id: string, lastEventId?: number): Promise<AsyncGenerator<TaskStreamEvent>> {
    const repos = this.#deps.store.repos
    const position = await repos.a2aV1Events.position(id)
    const task = await this.#deps.v1.getTask(scope, id)
    if (lastEventId !== undefined && lastEventId <= position.lastSeq) {
      const next = await repos.a2aV1Events.after(id, lastEventId, this.#since(), 1)
      const complete = lastEventId === position.lastSeq || next[0]?.seq === lastEventId + 1
      if (complete) return this.#run(scope.tenantId, task, lastEventId, false)
    }
    if (isTerminal(task.status.state)) {
      throw new A2AProtocolError('UnsupportedOperationError', `Task '${id}' is ${task.status.state} and has no more events to stream`, { taskId: id })
    }
    return this.#run(scope.tenantId, task, position.lastSeq, true)
  }

  #since(): number {
    return this.#deps.clock.now() - this.options.retentionMs / 1000
  }

  /** The stream: the Task (when `withTask`), then the log after `seq`, until a terminal status. */
  async *#run(tenantId: string, task: V1Task, seq: number, withTask: boolean): AsyncGenerator<TaskStreamEvent> {
    if (withTask) {
      yield { id: String(seq), data: { task } }
      if (isTerminal(task.status.state)) return
    } else if (isTerminal(task.status.state) && seq >= (await this.#deps.store.repos.a2aV1Events.position(task.id)).lastSeq) {
      // A reconnection that had every event already, the last one terminal.
      return
    }
    const linkedId = String(task.metadata?.[METADATA_TASK_ID] ?? '')
    const repos = this.#deps.store.repos
    let last = seq
    for (;;) {
      // Asked before reading, so that a change between the read and the wait is not missed.
      const woken = this.#deps.events.next(tenantId, linkedId, this.options.pollIntervalMs)
      const rows = await repos.a2aV1Events.after(task.id, last, this.#since(), BATCH)
      for (const row of rows) {
        last = row.seq
        yield { id: String(row.seq), data: JSON.parse(row.body) as V1StreamResponse }
        if (row.kind === 'status' && isTerminal(row.state)) return
      }
      if (rows.length < BATCH) await woken
    }
  }
}

/** A stream of one Message (an agent's direct answer), with no event log behind it. */
async function* onlyMessage(message: V1Message): AsyncGenerator<TaskStreamEvent> {
  yield { id: '0', data: { message } }
}
