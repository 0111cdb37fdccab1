import { AppError } from '../errors.js'
import type { TaskStatus } from '../tasks/task.js'
import type { ReceivedRequest } from '../crypto/peer-http-signature.js'

/** An A2A task record, linked to the Bernstein task that does the work. Times are Unix seconds. */
export interface A2ATaskRecord {
  readonly id: string
  readonly tenantId: string
  readonly bernsteinTaskId: string
  readonly sender: string
  readonly message: string
  readonly createdAt: number
  readonly updatedAt: number
  /** The newest receipt, or null when the node could not attest. */
  readonly receipt: Readonly<Record<string, unknown>> | null
  /** What the receipt attests: the acceptance, or the task's final outcome. */
  readonly receiptKind: 'acceptance' | 'completion' | null
}

/** What an A2A task's wire status and timestamps need of its linked Bernstein task. */
export interface LinkedTaskState {
  readonly status: TaskStatus
  readonly updatedAt: number
}

/**
 * An A2A task as read for its response, in one statement (one consistent snapshot): the record, its linked task's
 * state (absent if the task is gone) and its artifacts in the order they were added.
 */
export interface A2ATaskWithLinkedState {
  readonly record: A2ATaskRecord
  readonly linked: LinkedTaskState | undefined
  readonly artifacts: readonly A2AArtifact[]
}

export interface A2AArtifact {
  readonly name: string
  readonly contentType: string
  readonly data: string
  readonly createdAt: number
}

export type MessageDirection = 'inbound' | 'outbound'

export interface A2AMessage {
  readonly id: string
  readonly tenantId: string
  readonly sender: string
  readonly recipient: string
  readonly content: string
  readonly taskId: string
  readonly direction: MessageDirection
  readonly delivered: boolean
  readonly externalEndpoint: string | null
  readonly createdAt: number
}

/**
 * What identifies one inbound delegation: the delegator's id for it, within the tenant, the name the sender gives
 * and the key that vouched for the sender. The name alone is only a claim; on a node pinning its peers the verified
 * card key is not, so two pinned peers never share a delegation however they name themselves.
 */
export interface InboundKey {
  readonly tenantId: string
  readonly peerName: string
  /** Fingerprint of the verified capability-card key, or '' when the node does not require a card. */
  readonly senderKey: string
  readonly remoteTaskId: string
}

export interface FederatedInbound extends InboundKey {
  readonly id: string
  readonly taskId: string
  readonly a2aTaskId: string
  readonly message: string
  readonly role: string
  readonly createdAt: number
  /**
   * PEM of the capability-card key whose RFC 9421 signature the delivery carried and passed; null when it came
   * unsigned. Requests on the task by a tenant-bound caller must then be signed by it.
   */
  readonly signingKey: string | null
}

/** An A2A task (by its id) or a Bernstein task (by its id, what `POST /a2a/message` names) of one tenant. */
export type TaskRef = { readonly a2aTaskId: string } | { readonly taskId: string }

/** Who acts on a task over HTTP (the caller's tenant, and whether its token is bound to it) and the request itself. */
export interface TaskAccess {
  readonly tenantId: string
  readonly tenantBound: boolean
  /** Whether the request carries an RFC 9421 signature (`Signature-Input` or `Signature`). */
  readonly signed: boolean
  /** The request as received, built when called (it copies every header field): only a signature check needs it. */
  readonly received: () => ReceivedRequest
}

/**
 * Decides whether a request may act on a task (read it, add to it, message it), before anything is read or written:
 * throws the refusal (an AppError) or returns.
 */
export interface TaskAccessGuard {
  check(ref: TaskRef, access: TaskAccess): Promise<void>
}

export interface Peer {
  readonly tenantId: string
  readonly name: string
  readonly endpoint: string
  readonly capabilities: readonly string[]
  readonly status: 'active' | 'unreachable' | 'deregistered'
  readonly lastSeen: number
}

/**
 * Bounds on the artifacts a caller attaches to one A2A task (Bernstein has none: past what one response can carry,
 * every read of the task and every transition of its linked task failed). Sizes are the UTF-8 bytes of names and
 * data, as stored. The `result` and `error` artifacts a finishing task adds are not counted against them, so that a
 * task can always finish.
 */
export const MAX_ARTIFACTS_PER_TASK = 1000
export const MAX_ARTIFACT_BYTES_PER_TASK = 16 * 1024 * 1024

/** What the artifacts of one A2A task take up. */
export interface ArtifactUsage {
  readonly count: number
  readonly bytes: number
}

/** Throws `payload_too_large` when `artifact` does not fit beside what the task already holds. */
export function assertArtifactRoom(a2aTaskId: string, usage: ArtifactUsage, artifact: Pick<A2AArtifact, 'name' | 'data'>): void {
  if (usage.count >= MAX_ARTIFACTS_PER_TASK) {
    throw new AppError('payload_too_large', `A2A task '${a2aTaskId}' already has ${MAX_ARTIFACTS_PER_TASK} artifacts, the most a task keeps`)
  }
  const bytes = usage.bytes + Buffer.byteLength(artifact.name) + Buffer.byteLength(artifact.data)
  if (bytes > MAX_ARTIFACT_BYTES_PER_TASK) {
    throw new AppError('payload_too_large', `A2A task '${a2aTaskId}' artifacts would exceed ${MAX_ARTIFACT_BYTES_PER_TASK} bytes, the most a task keeps`)
  }
}
