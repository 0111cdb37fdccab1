import type { ArtifactObserver } from '../../a2a/a2a.service.js'
import type { A2AArtifact } from '../../a2a/a2a-task.js'
import { TASK_STATE_OF } from '../../a2a/a2a-status.js'
import type { Clock, Ids } from '../../runtime.js'
import type { Repositories } from '../../store/store.js'
import type { Task } from '../../tasks/task.js'
import type { TaskChange, TaskObserver } from '../../tasks/task-events.js'
import { artifactToWire, isoTime } from '../a2a-v1-wire.js'

/** What a delivery POSTs: one A2A v1.0 StreamResponse (here a status or an artifact update). */
export type PushStreamResponse =
  | { readonly statusUpdate: { readonly taskId: string; readonly contextId: string; readonly status: { readonly state: string; readonly timestamp: string } } }
  | {
      readonly artifactUpdate: {
        readonly taskId: string
        readonly contextId: string
        readonly artifact: ReturnType<typeof artifactToWire>
        readonly append: boolean
        readonly lastChunk: boolean
      }
    }

/**
 * Writes the deliveries of a task's events, inside the transaction of the change (a task observer, and an artifact
 * observer for artifacts attached through the A2A API): for each config of each A2A task linked to the changed
 * task, an artifact update per artifact it has not been told of yet, then a status update when the v1 state
 * changed. Committed with the change or not at all, so an event is never lost between the change and its delivery.
 */
export class PushOutbox implements TaskObserver, ArtifactObserver {
  readonly #clock: Clock
  readonly #ids: Ids
  readonly #wake: () => void

  /** `wake`: told (after the transaction had a chance to commit) that deliveries were written. */
  constructor(deps: { readonly clock: Clock; readonly ids: Ids; readonly wake: () => void }) {
    this.#clock = deps.clock
    this.#ids = deps.ids
    this.#wake = deps.wake
  }

  async onTaskChange(repos: Repositories, change: TaskChange): Promise<void> {
    const { before, after } = change
    const state = TASK_STATE_OF[after.status]
    const changed = before === null || TASK_STATE_OF[before.status] !== state
    await this.#enqueue(repos, after, changed ? { state, timestamp: isoTime(after.updatedAt) } : null)
  }

  async onArtifact(repos: Repositories, task: Task, _artifact: A2AArtifact): Promise<void> {
    await this.#enqueue(repos, task, null)
  }

  async #enqueue(repos: Repositories, task: Task, status: { state: string; timestamp: string } | null): Promise<void> {
    let written = 0
    for (const record of await repos.a2a.findByBernsteinTask(task.tenantId, task.id)) {
      const configs = await repos.a2aV1Push.configsOf(task.tenantId, record.id)
      if (configs.length === 0) continue
      const contextId = (await repos.a2aV1.contextOf(task.tenantId, record.id)) ?? record.id
      const artifacts = await repos.a2a.artifacts(record.id)
      for (const config of configs) {
        const events: PushStreamResponse[] = []
        for (let i = config.artifactsSent; i < artifacts.length; i++) {
          const artifact = artifacts[i]
          if (artifact === undefined) continue
          events.push({ artifactUpdate: { taskId: record.id, contextId, artifact: artifactToWire(record.id, artifact, i), append: false, lastChunk: true } })
        }
        if (status !== null) events.push({ statusUpdate: { taskId: record.id, contextId, status } })
        for (const event of events) {
          await repos.a2aV1Push.insertDelivery({
            id: this.#ids.shortId() + this.#ids.shortId(),
            tenantId: task.tenantId,
            a2aTaskId: record.id,
            configId: config.configId,
            body: JSON.stringify(event),
            createdAt: this.#clock.now(),
          })
          written++
        }
        if (artifacts.length > config.artifactsSent) await repos.a2aV1Push.setArtifactsSent(task.tenantId, record.id, config.configId, artifacts.length)
      }
    }
    if (written > 0) setImmediate(this.#wake)
  }
}
