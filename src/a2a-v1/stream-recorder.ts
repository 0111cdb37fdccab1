import type { ArtifactObserver } from '../a2a/a2a.service.js'
import { TASK_STATE_OF } from '../a2a/a2a-status.js'
import type { Clock } from '../runtime.js'
import type { Repositories } from '../store/store.js'
import type { Task } from '../tasks/task.js'
import type { TaskChange, TaskObserver } from '../tasks/task-events.js'
import { type V1StreamResponse, isoTime } from './a2a-v1-wire.js'
import { artifactChunk } from './v1-artifacts.js'

/** Told of each event of an A2A v1.0 task as it is logged, inside the transaction of the change that made it. */
export interface StreamEventListener {
  onStreamEvent(repos: Repositories, event: StreamEvent): Promise<void>
}

/** An event as it is logged, with how many push configs its task had when the change began to be recorded. */
export interface StreamEvent {
  readonly tenantId: string
  readonly a2aTaskId: string
  readonly body: V1StreamResponse
  readonly pushConfigs: number
}

/** The state a task's stream starts from: a new task is submitted, and its first change is the first event. */
const INITIAL_STATE = 'TASK_STATE_SUBMITTED'

/**
 * Writes the stream log of A2A v1.0 tasks (`a2a_v1_stream_events`): told of every change of a Bernstein task and
 * of every artifact attached to an A2A task, inside that transaction (under the linked task's row lock, which
 * orders them), it brings the log of each A2A task linked to it up to date: an `artifactUpdate` per artifact not
 * yet logged, then a `statusUpdate` when the v1 state differs from the last one logged. The log commits with the
 * change, so every stream, on every replica, reads the same events in the same order. Events older than the
 * retention window are dropped from a task's log at its next change.
 */
export class StreamEventRecorder implements TaskObserver, ArtifactObserver {
  readonly #clock: Clock
  readonly #retentionMs: number
  readonly #listeners: readonly StreamEventListener[]

  /** `listeners`: told of each event as it is logged, in the same transaction (push notifications). */
  constructor(clock: Clock, retentionMs: number, listeners: readonly StreamEventListener[] = []) {
    this.#clock = clock
    this.#retentionMs = retentionMs
    this.#listeners = listeners
  }

  async onTaskChange(repos: Repositories, change: TaskChange): Promise<void> {
    // A task being created has no A2A task linked to it yet (the A2A row is inserted after its task, in the same
    // transaction), and its creation is no event: its stream starts at SUBMITTED. Nothing to look up.
    if (change.before === null) return
    await this.#record(repos, change.after)
  }

  onArtifact(repos: Repositories, task: Task): Promise<void> {
    return this.#record(repos, task)
  }

  async #record(repos: Repositories, task: Task): Promise<void> {
    const records = await repos.a2a.findByBernsteinTask(task.tenantId, task.id)
    const now = this.#clock.now()
    for (const record of records) {
      const events = repos.a2aV1Events
      // One read for where the log stands and what surrounds it; the rest only when there is something to do.
      const position = await events.streamState(task.tenantId, record.id)
      const contextId = position.contextId ?? record.id
      // Artifacts are read only when there are new ones (a progress report reads none).
      const artifacts = position.artifactCount > position.artifacts ? await repos.a2a.artifacts(record.id) : []
      let seq = position.lastSeq
      let logged = position.artifacts
      // Artifacts first: a finishing task's result is part of what its final status reports.
      const previousState = position.lastState ?? INITIAL_STATE
      for (; logged < artifacts.length; ) {
        const artifact = artifacts[logged] as (typeof artifacts)[number]
        const body: V1StreamResponse = {
          artifactUpdate: { taskId: record.id, contextId, ...artifactChunk(record.id, artifact, logged) },
        }
        logged++
        await events.append({
          a2aTaskId: record.id,
          seq: ++seq,
          kind: 'artifact',
          state: previousState,
          artifacts: logged,
          body: JSON.stringify(body),
          createdAt: now,
        })
        await this.#tell(repos, task.tenantId, record.id, body, position.pushConfigs)
      }
      const state = TASK_STATE_OF[task.status]
      if (state !== previousState) {
        const body: V1StreamResponse = { statusUpdate: { taskId: record.id, contextId, status: { state, timestamp: isoTime(task.updatedAt) } } }
        await events.append({ a2aTaskId: record.id, seq: ++seq, kind: 'status', state, artifacts: logged, body: JSON.stringify(body), createdAt: now })
        await this.#tell(repos, task.tenantId, record.id, body, position.pushConfigs)
      }
      // Pruning deletes nothing while the oldest event is within the retention window: skip the statement then.
      const before = now - this.#retentionMs / 1000
      if (seq !== position.lastSeq && position.oldestAt !== null && position.oldestAt < before) await events.prune(record.id, before, seq)
    }
  }

  async #tell(repos: Repositories, tenantId: string, a2aTaskId: string, body: V1StreamResponse, pushConfigs: number): Promise<void> {
    for (const listener of this.#listeners) await listener.onStreamEvent(repos, { tenantId, a2aTaskId, body, pushConfigs })
  }
}
