/**
 * The in-process executor interface: an agent embedded in the node (the official SDK's `AgentExecutor` idea) answers
 * A2A v1.0 messages without an external worker. It is told the request and publishes what happens through a
 * {@link TaskUpdater}, whose every event goes through the node's own task store and lifecycle: the linked Bernstein
 * task moves through its transition table (so the tracker-audit chain records it and a finishing task is attested
 * with a completion receipt), artifacts are stored as any A2A artifact, and the per-task event source wakes waiters
 * and streams. An executor never writes anything itself.
 *
 * @module
 */
import type { V1Message, V1Part } from '../a2a-v1-wire.js'

/** What an executor is told about the message it answers. */
export interface RequestContext {
  readonly tenantId: string
  /** The A2A task id (the v1 Task's `id`). */
  readonly taskId: string
  readonly contextId: string
  /** The message as stored, `taskId` and `contextId` filled in. */
  readonly message: V1Message
  /** True when the message continues a task that was waiting for input (input-required → working). */
  readonly resumed: boolean
}

/** An artifact an executor adds. Chunks of one artifact share `artifactId`; `append` adds parts to the earlier chunks. */
export interface ArtifactUpdate {
  readonly artifactId?: string
  readonly name?: string
  readonly description?: string
  readonly parts: readonly V1Part[]
  readonly append?: boolean
  readonly lastChunk?: boolean
  readonly metadata?: Readonly<Record<string, unknown>>
}

/**
 * The events an executor publishes for its task. Each is one change through the node's lifecycle; an event the
 * transition table does not allow (completing a canceled task) throws, and the executor's run ends there.
 */
export interface TaskUpdater {
  /** The task is being worked on (TASK_STATE_WORKING): the linked task is claimed, then reports progress. */
  working(text?: string): Promise<void>
  addArtifact(artifact: ArtifactUpdate): Promise<void>
  /** Completes the task; `message` (an agent message) goes into its history and its text becomes the result. */
  complete(message?: readonly V1Part[]): Promise<void>
  /** Asks the client for more input (TASK_STATE_INPUT_REQUIRED); its next message with this `taskId` resumes the task. */
  requireInput(message: readonly V1Part[]): Promise<void>
  /** Fails the task (TASK_STATE_FAILED) with a reason. */
  fail(reason: string): Promise<void>
}

export interface AgentExecutor {
  /**
   * Optional: answers a new message (one without `taskId`) directly with a Message, before anything is stored, so
   * that no task is created (SendMessage answers `{message}`). Null: a task is created and {@link execute} runs.
   */
  reply?(message: V1Message): V1Message | null
  /** Works on the task: called after the message is stored and committed, for a new task and for a resumed one. */
  execute(context: RequestContext, updater: TaskUpdater): Promise<void>
}
