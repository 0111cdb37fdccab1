import type { Schema } from '../contract.js'
import { a2aTaskNotFound, taskNotFound } from '../errors.js'
import type { Clock, Ids } from '../runtime.js'
import type { Repositories, Store } from '../store/store.js'
import type { Task } from '../tasks/task.js'
import { ESTIMATE_BY_COMPLEXITY, FINISHED_STATUSES } from '../tasks/task.js'
import type { TaskChange, TaskObserver } from '../tasks/task-events.js'
import type { TaskService } from '../tasks/task.service.js'
import { A2A_STATUS_OF } from './a2a-status.js'
import {
  type A2AArtifact,
  type A2AMessage,
  type A2ATaskRecord,
  type LinkedTaskState,
  type TaskAccess,
  type TaskAccessGuard,
  type TaskRef,
  assertArtifactRoom,
} from './a2a-task.js'
import type { A2ATaskResponseBody, AttestationKind, Attestor } from '../receipts/attestation.js'

export interface A2ATaskView {
  readonly body: A2ATaskResponseBody
  readonly receipt: Readonly<Record<string, unknown>> | null
  /** Which event the receipt attests, or `none` when the node could not attest. */
  readonly attestation: AttestationKind | 'none'
}

/** Bernstein's v0.1 agent card (`GET /a2a/agent-card`). */
export type LegacyAgentCard = Readonly<Schema<'A2AAgentCardResponse'>>

export interface A2AServiceDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
  readonly tasks: TaskService
  readonly attestor: Attestor
  readonly publicBaseUrl: string
  /** Told about every artifact attached to an A2A task, inside the attaching transaction (the audit trail). */
  readonly artifactObservers?: readonly ArtifactObserver[]
  /**
   * Asked before a request over HTTP reads or writes a task (`access` given): the signed-delegation rule
   * (src/federation/delegator-signature.ts). Calls without `access` (the node's own, the CLI's) are not asked.
   */
  readonly accessGuard?: TaskAccessGuard
}

export interface ArtifactObserver {
  onArtifact(repos: Repositories, task: Task, artifact: A2AArtifact): Promise<void>
}

/** Bernstein titles linked tasks with the first 80 characters (code points, as Python slices) of the message. */
export function linkedTaskTitle(message: string): string {
  return '[A2A] ' + Array.from(message).slice(0, 80).join('')
}

/** The A2A surface over the task store: send, read, artifacts, messages. */
export class A2AService implements TaskObserver {
  readonly #deps: A2AServiceDeps

  constructor(deps: A2AServiceDeps) {
    this.#deps = deps
  }

  agentCard(): LegacyAgentCard {
    return {
      name: 'bernstein-orchestrator',
      description: 'The open-source governance layer for AI agents, one git worktree per task',
      capabilities: ['task_orchestration', 'agent_spawning', 'code_review', 'a2a_message'],
      protocol_version: '0.1',
      endpoint: `${this.#deps.publicBaseUrl}/a2a`,
      provider: 'bernstein',
    }
  }

  /**
   * Creates the A2A task and its linked Bernstein task in one transaction, attested when keys exist. The receipt's
   * spine row and the A2A row go last, with the tracker-audit entry, just before the COMMIT: on PostgreSQL the
   * whole transaction is then one round trip once the chains' heads are known, and no head is locked across one.
   */
  async send(tenantId: string, input: { sender: string; message: string; role: string }): Promise<A2ATaskView> {
    // Set by every attempt of the transaction that gets as far as its COMMIT; the one that commits sets it last.
    const attested: { receipt: Readonly<Record<string, unknown>> | null } = { receipt: null }
    const body = await this.#deps.store.transaction(async (repos) => {
      const { record, body } = await this.#insertLinkedTask(repos, tenantId, input)
      await this.#deps.attestor.attestAtCommit(repos, body, 'acceptance', tenantId, async (receipt) => {
        attested.receipt = receipt
        await A2AService.#insertAccepted(repos, record, receipt)
      })
      return body
    })
    return A2AService.#accepted(body, attested.receipt)
  }

  /** The body of `send`, for callers that already hold a transaction (the federated accept path). */
  async createWithin(repos: Repositories, tenantId: string, input: { sender: string; message: string; role: string }): Promise<A2ATaskView> {
    const { record, body } = await this.#insertLinkedTask(repos, tenantId, input)
    // Attested before the row is written, so the row is inserted with its receipt (one INSERT, no UPDATE after it);
    // all of it commits together either way.
    const receipt = await this.#deps.attestor.attest(repos, body, 'acceptance', tenantId)
    await A2AService.#insertAccepted(repos, record, receipt)
    return A2AService.#accepted(body, receipt)
  }

  /** The new A2A task's row, with the receipt of its acceptance when the node could attest it. */
  static async #insertAccepted(repos: Repositories, record: A2ATaskRecord, receipt: Readonly<Record<string, unknown>> | null): Promise<void> {
    await repos.a2a.insert(receipt ? { ...record, receipt, receiptKind: 'acceptance' } : record)
  }

  static #accepted(body: A2ATaskResponseBody, receipt: Readonly<Record<string, unknown>> | null): A2ATaskView {
    return { body, receipt, attestation: receipt ? 'acceptance' : 'none' }
  }

  /** The linked Bernstein task, inserted; the A2A task's row and response body, not stored yet. */
  async #insertLinkedTask(
    repos: Repositories,
    tenantId: string,
    input: { sender: string; message: string; role: string },
  ): Promise<{ readonly record: A2ATaskRecord; readonly body: A2ATaskResponseBody }> {
    const task = this.#deps.tasks.newTask(tenantId, {
      title: linkedTaskTitle(input.message),
      description: input.message,
      role: input.role,
      complexity: 'medium',
      estimatedMinutes: ESTIMATE_BY_COMPLEXITY.medium,
    })
    await this.#deps.tasks.insertWithin(repos, task, input.sender)
    const record: A2ATaskRecord = {
      id: this.#deps.ids.ticketId(),
      tenantId,
      bernsteinTaskId: task.id,
      sender: input.sender,
      message: input.message,
      createdAt: task.createdAt,
      updatedAt: task.createdAt,
      receipt: null,
      receiptKind: null,
    }
    return { record, body: this.#responseBody(record, task, []) }
  }

  /** Reads an A2A task. A read never writes: the status is derived from the linked task each time. */
  async get(tenantId: string, id: string, access?: TaskAccess): Promise<A2ATaskView> {
    await this.#guard({ a2aTaskId: id }, access)
    const repos = this.#deps.store.repos
    const found = await repos.a2a.getTaskWithLinkedState(tenantId, id)
    if (!found) throw a2aTaskNotFound(id)
    const { record, linked, artifacts } = found
    const body = this.#responseBody(record, linked, artifacts)
    return { body, receipt: record.receipt, attestation: record.receiptKind ?? 'none' }
  }

  /**
   * Attaches an artifact. On a finished task the response changes after its completion receipt, so it is attested
   * again: the newest receipt always covers what GET shows. The linked task's row is locked first, the order every
   * task change takes its locks in (task, A2A row, receipt spine head, audit chain head at COMMIT), so that an attach racing
   * a completion waits for it, sees it, and does not deadlock on PostgreSQL.
   */
  async addArtifact(tenantId: string, id: string, input: { name: string; data: string; contentType: string }, access?: TaskAccess): Promise<A2AArtifact> {
    await this.#guard({ a2aTaskId: id }, access)
    return this.#deps.store.transaction(async (repos) => {
      const record = await repos.a2a.get(tenantId, id)
      if (!record) throw a2aTaskNotFound(id)
      const task = await repos.tasks.getForUpdate(tenantId, record.bernsteinTaskId)
      const artifact: A2AArtifact = { name: input.name, contentType: input.contentType, data: input.data, createdAt: this.#deps.clock.now() }
      assertArtifactRoom(id, await repos.a2a.artifactUsage(id), artifact)
      await repos.a2a.addArtifact(id, artifact)
      if (task) for (const observer of this.#deps.artifactObservers ?? []) await observer.onArtifact(repos, task, artifact)
      const touched = { ...record, updatedAt: Math.max(record.updatedAt, artifact.createdAt) }
      if (task && FINISHED_STATUSES.has(task.status)) await this.#attestFinal(repos, touched, task)
      else await repos.a2a.touch(id, artifact.createdAt)
      return artifact
    })
  }

  /** An inbound message for a Bernstein task: recorded, and injected into the task as a progress note. */
  async receiveMessage(
    tenantId: string,
    input: { sender: string; recipient: string; content: string; taskId: string },
    access?: TaskAccess,
  ): Promise<A2AMessage> {
    await this.#guard({ taskId: input.taskId }, access)
    return this.#deps.store.transaction(async (repos) => {
      const task = await repos.tasks.get(tenantId, input.taskId)
      if (!task) throw taskNotFound(input.taskId)
      const { sender, recipient, content, taskId } = input
      const message: A2AMessage = {
        id: this.#deps.ids.shortId(),
        tenantId,
        ...{ sender, recipient, content, taskId },
        direction: 'inbound',
        delivered: true,
        externalEndpoint: null,
        createdAt: this.#deps.clock.now(),
      }
      await repos.a2a.insertMessage(message)
      await this.#deps.tasks.appendNoteWithin(repos, tenantId, input.taskId, `[A2A:${input.sender}->${input.recipient}] ${input.content}`)
      return message
    })
  }

  async #guard(ref: TaskRef, access: TaskAccess | undefined): Promise<void> {
    if (access !== undefined) await this.#deps.accessGuard?.check(ref, access)
  }

  /**
   * When a linked task finishes, attest the A2A response as it stands at that moment (Bernstein #2609's
   * follow-up: REST receipts attested acceptance only). The result summary becomes a `result` artifact first (a
   * failure's or cancellation's reason an `error` artifact), so the attested body is exactly what a later GET shows.
   */
  async onTaskChange(repos: Repositories, change: TaskChange): Promise<void> {
    const { before, after } = change
    // Once finished, every change of the task changes the A2A response (its status or its `updated_at`: done ->
    // closed, a note from a message, done -> failed), so each one is attested: the newest receipt covers what GET shows.
    if (!before || !FINISHED_STATUSES.has(after.status)) return
    const entered = before.status !== after.status
    const records = await repos.a2a.findByBernsteinTask(after.tenantId, after.id)
    for (const record of records) {
      if (entered && after.status === 'done' && after.resultSummary !== null) {
        await repos.a2a.addArtifact(record.id, { name: 'result', contentType: 'text/plain', data: after.resultSummary, createdAt: after.updatedAt })
      }
      // A failed or cancelled task says why, so that the caller (a delegating peer) learns more than the status.
      if (entered && (after.status === 'failed' || after.status === 'cancelled') && after.terminalReason !== null) {
        await repos.a2a.addArtifact(record.id, { name: 'error', contentType: 'text/plain', data: after.terminalReason, createdAt: after.updatedAt })
      }
      await this.#attestFinal(repos, { ...record, updatedAt: Math.max(record.updatedAt, after.updatedAt) }, after)
    }
  }

  /** Attests the response of an A2A task whose linked task has finished, as GET will show it, and stores it. */
  async #attestFinal(repos: Repositories, record: A2ATaskRecord, task: LinkedTaskState): Promise<void> {
    const body = this.#responseBody(record, task, await repos.a2a.artifacts(record.id))
    const receipt = await this.#deps.attestor.attest(repos, body, 'completion', record.tenantId)
    if (receipt) await repos.a2a.setReceipt(record.id, receipt, 'completion', record.updatedAt)
    else await repos.a2a.touch(record.id, record.updatedAt)
  }

  #responseBody(record: A2ATaskRecord, task: LinkedTaskState | undefined, artifacts: readonly A2AArtifact[]): A2ATaskResponseBody {
    return {
      id: record.id,
      bernstein_task_id: record.bernsteinTaskId,
      sender: record.sender,
      message: record.message,
      status: task ? A2A_STATUS_OF[task.status] : 'submitted',
      artifacts: artifacts.map((a) => ({ name: a.name, content_type: a.contentType, data: a.data, created_at: a.createdAt })),
      created_at: record.createdAt,
      updated_at: Math.max(record.updatedAt, task?.updatedAt ?? record.updatedAt),
    }
  }
}
