/** The A2A v1.0 wire shapes (from the contract) and the making of a v1 Task from an A2A task of this node. */
import type { Schema } from '../contract.js'
import { TASK_STATE_OF } from '../a2a/a2a-status.js'
import type { A2AV1TaskSnapshot } from './a2a-v1-records.js'
import { artifactsToWire } from './v1-artifacts.js'

export type V1Task = Schema<'A2AV1Task'>
export type V1Message = Schema<'A2AV1Message'>
export type V1Part = Schema<'A2AV1Part'>
export type V1Artifact = Schema<'A2AV1Artifact'>
export type V1AgentCard = Schema<'A2AV1AgentCard'>
export type SendMessageRequest = Schema<'A2AV1SendMessageRequest'>
export type SendMessageResponse = Schema<'A2AV1SendMessageResponse'>
export type ListTasksRequest = Schema<'A2AV1ListTasksRequest'>
export type ListTasksResponse = Schema<'A2AV1ListTasksResponse'>
export type V1StreamResponse = Schema<'A2AV1StreamResponse'>

/** Keys of a v1 Task's `metadata` that carry what Bernstein adds: the linked task, the receipt and what it attests. */
export const METADATA_TASK_ID = 'bernstein.task_id'
export const METADATA_RECEIPT = 'bernstein.receipt'
export const METADATA_ATTESTATION = 'bernstein.attestation'

/** Unix seconds → ISO 8601 UTC with milliseconds. */
export function isoTime(seconds: number): string {
  return new Date(Math.round(seconds * 1000)).toISOString()
}

/** The text of a message for the linked Bernstein task: its text parts, one per line. */
export function messageText(message: V1Message): string {
  const texts = message.parts.flatMap((part) => (typeof part.text === 'string' ? [part.text] : []))
  return texts.length > 0 ? texts.join('\n') : '(a message without text parts)'
}

/**
 * The v1 Task of an A2A task. `history` is the stored messages (the last `historyLength` of them); a task sent
 * through `/a2a/tasks/send` has none stored, and shows its one message. `artifacts` appear when they were read.
 */
export function taskToWire(snapshot: A2AV1TaskSnapshot, history: readonly string[] | undefined, historyLength: number | undefined): V1Task {
  const { record, linked, contextId, artifacts } = snapshot
  const state = linked ? TASK_STATE_OF[linked.status] : 'TASK_STATE_SUBMITTED'
  const statusTime = Math.max(record.updatedAt, linked?.updatedAt ?? record.updatedAt)
  let messages: V1Message[] | undefined
  if (historyLength !== 0 && history !== undefined) {
    const stored = history.map((text) => JSON.parse(text) as V1Message)
    const all: V1Message[] =
      stored.length > 0
        ? stored
        : [{ messageId: record.id, role: 'ROLE_USER', parts: [{ text: record.message }], taskId: record.id, ...(contextId !== null && { contextId }) }]
    messages = historyLength === undefined ? all : all.slice(-historyLength)
  }
  return {
    id: record.id,
    ...(contextId !== null && { contextId }),
    status: { state, timestamp: isoTime(statusTime) },
    ...(artifacts !== undefined && artifacts.length > 0 && { artifacts: artifactsToWire(record.id, artifacts) }),
    ...(messages !== undefined && messages.length > 0 && { history: messages }),
    metadata: {
      [METADATA_TASK_ID]: record.bernsteinTaskId,
      // As JSON text: the receipt keeps Bernstein's snake_case format (what the offline verifier reads), and the
      // Task's own fields stay ProtoJSON's camelCase (the conformance kit's DM-SERIAL-001 scans every key).
      [METADATA_RECEIPT]: record.receipt === null ? null : JSON.stringify(record.receipt),
      [METADATA_ATTESTATION]: record.receiptKind ?? 'none',
    },
  }
}
