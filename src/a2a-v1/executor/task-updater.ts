import type { A2AService } from '../../a2a/a2a.service.js'
import type { Clock, Ids } from '../../runtime.js'
import type { Store } from '../../store/store.js'
import type { TaskService } from '../../tasks/task.service.js'
import type { V1Message, V1Part } from '../a2a-v1-wire.js'
import { storedV1Artifact } from '../v1-artifacts.js'
import type { ArtifactUpdate, TaskUpdater } from './agent-executor.js'

/** The agent id an in-process executor claims linked tasks as (what the task and its lineage name). */
export const EXECUTOR_AGENT = 'a2a-v1-executor'

export interface TaskUpdaterDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
  readonly tasks: TaskService
  readonly a2a: A2AService
}

export interface UpdaterTarget {
  readonly tenantId: string
  readonly a2aTaskId: string
  readonly bernsteinTaskId: string
  readonly contextId: string
}

const partsText = (parts: readonly V1Part[]): string =>
  parts
    .flatMap((p) => (typeof p.text === 'string' ? [p.text] : []))
    .join('\n')
    .trim()

/**
 * A {@link TaskUpdater} over the node's lifecycle: every event is a TaskService transition or an A2AService
 * artifact of the task's linked Bernstein task (so observers, the audit chain, completion receipts and the task
 * event source all see it); agent messages go into the task's v1 history.
 */
export class LifecycleTaskUpdater implements TaskUpdater {
  readonly #deps: TaskUpdaterDeps
  readonly #target: UpdaterTarget

  constructor(deps: TaskUpdaterDeps, target: UpdaterTarget) {
    this.#deps = deps
    this.#target = target
  }

  async #status() {
    return (await this.#deps.tasks.get(this.#target.tenantId, this.#target.bernsteinTaskId)).status
  }

  async #claimIfOpen(): Promise<void> {
    if ((await this.#status()) === 'open') await this.#deps.tasks.claim(this.#target.tenantId, this.#target.bernsteinTaskId, EXECUTOR_AGENT)
  }

  async #agentMessage(parts: readonly V1Part[]): Promise<void> {
    const { a2aTaskId, contextId } = this.#target
    const message: V1Message = { messageId: this.#deps.ids.shortId(), role: 'ROLE_AGENT', parts: [...parts], taskId: a2aTaskId, contextId }
    const now = this.#deps.clock.now()
    await this.#deps.store.transaction((repos) =>
      repos.a2aV1.insertMessage({ a2aTaskId, messageId: message.messageId, role: message.role, body: JSON.stringify(message), createdAt: now }),
    )
  }

  async working(text?: string): Promise<void> {
    await this.#claimIfOpen()
    await this.#deps.tasks.progress(this.#target.tenantId, this.#target.bernsteinTaskId, text ?? 'working', 0)
  }

  async addArtifact(artifact: ArtifactUpdate): Promise<void> {
    const artifactId = artifact.artifactId ?? this.#deps.ids.shortId()
    await this.#deps.a2a.addArtifact(this.#target.tenantId, this.#target.a2aTaskId, storedV1Artifact({ ...artifact, artifactId }))
  }

  async complete(message?: readonly V1Part[]): Promise<void> {
    if (message !== undefined) await this.#agentMessage(message)
    const text = message === undefined ? '' : partsText(message)
    await this.#deps.tasks.complete(this.#target.tenantId, this.#target.bernsteinTaskId, text === '' ? 'completed' : text)
  }

  async requireInput(message: readonly V1Part[]): Promise<void> {
    await this.#agentMessage(message)
    await this.#claimIfOpen()
    const text = partsText(message)
    await this.#deps.tasks.block(this.#target.tenantId, this.#target.bernsteinTaskId, text === '' ? 'input required' : text)
  }

  async fail(reason: string): Promise<void> {
    await this.#deps.tasks.fail(this.#target.tenantId, this.#target.bernsteinTaskId, reason)
  }
}
