import type { A2AArtifact, A2ATaskRecord, LinkedTaskState } from '../a2a/a2a-task.js'
import type { TaskStatus } from '../tasks/task.js'

/** What A2A v1.0 stores beside an A2A task: its context (tasks created through `/a2a/tasks/send` have none). */
export interface A2AV1TaskRow {
  readonly a2aTaskId: string
  readonly tenantId: string
  readonly contextId: string
  readonly createdAt: number
}

/** One message of a task's history: the v1 Message as the client sent it (JSON text), in arrival order. */
export interface A2AV1MessageRow {
  readonly a2aTaskId: string
  readonly messageId: string
  readonly role: string
  readonly body: string
  readonly createdAt: number
}

/** An A2A task as the v1 surface reads it: the record, its linked task's state, its context, and its artifacts. */
export interface A2AV1TaskSnapshot {
  readonly record: A2ATaskRecord
  readonly linked: LinkedTaskState | undefined
  readonly contextId: string | null
  /** Absent when they were not asked for (ListTasks without `includeArtifacts`). */
  readonly artifacts: readonly A2AArtifact[] | undefined
}

/** Where a page of ListTasks starts: after this status time and id (newest first). */
export interface A2AV1ListCursor {
  readonly statusTime: number
  readonly id: string
}

export interface A2AV1ListFilter {
  readonly tenantId: string
  readonly contextId?: string
  /** Linked-task statuses the state filter stands for. */
  readonly statuses?: readonly TaskStatus[]
  /** Only tasks whose status time is after this (Unix seconds). */
  readonly statusAfter?: number
  /** Leaves out tasks whose delegation was delivered signed (`hidesSignedDelegations`). */
  readonly withoutSignedDelegations?: true
}
