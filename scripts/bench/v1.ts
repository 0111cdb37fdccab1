/**
 * The A2A v1.0 binding beside the SDK's own server (issue 25): what the node can do today is probed first, and a
 * case whose server side is absent is reported as skipped with the reason, never as a failure.
 * - `SendMessage`, blocking, completed in process by the conformance agent (`tck-complete-task-…` message ids);
 *   needs the agent, enabled by a flag in the node's environment (`--v1-agent-env NAME=VALUE`).
 * - `GetTask` over JSON-RPC at `/a2a/v1`.
 * - Stream fan-out: 100 subscribers (`SubscribeToTask`, SSE) on one task while a worker reports progress on it
 *   through the lifecycle API; events per second delivered to all of them together.
 */
import { sendMessageBody } from './cases.js'
import type { RunningProcess } from './proc.js'
import { AUTH_HEADERS } from './systems.js'
import { MAX_ARTIFACTS_PER_TASK } from '../../src/a2a/a2a-task.js'

export const V1_PATH = '/a2a/v1'
const V1_HEADERS = { ...AUTH_HEADERS, 'content-type': 'application/json', 'a2a-version': '1.0' }

/** The message id prefix that has the conformance agent complete the task at once. */
export const COMPLETE_PREFIX = 'tck-complete-task'

/** The task of a SendMessage answer is completed (the check on every measured answer). */
export const completedTask = (body: string): boolean => body.includes('"TASK_STATE_COMPLETED"')

/** Why the conformance-agent case cannot run on `proc`, or null when a blocking SendMessage comes back completed. */
export async function conformanceAgentAbsent(proc: RunningProcess, timeoutMs: number): Promise<string | null> {
  try {
    const response = await fetch(proc.url + V1_PATH, {
      method: 'POST',
      headers: V1_HEADERS,
      body: sendMessageBody(`${COMPLETE_PREFIX}-probe`),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const body = await response.text()
    if (response.status === 200 && completedTask(body)) return null
    return `skipped: conformance agent absent (a blocking SendMessage '${COMPLETE_PREFIX}-probe' answered ${response.status} without a completed task)`
  } catch (error) {
    return `skipped: conformance agent absent (a blocking SendMessage '${COMPLETE_PREFIX}-probe' got no answer: ${String(error)})`
  }
}

const jsonRpc = (method: string, params: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })

/** Opens `SubscribeToTask` on `taskId`; resolves to the response when it is an event stream, else to the reason it is not. */
async function subscribe(proc: RunningProcess, taskId: string, signal: AbortSignal): Promise<Response | string> {
  const response = await fetch(proc.url + V1_PATH, {
    method: 'POST',
    headers: { ...V1_HEADERS, accept: 'text/event-stream' },
    body: jsonRpc('SubscribeToTask', { id: taskId }),
    signal,
  })
  const type = response.headers.get('content-type') ?? ''
  if (response.status === 200 && type.startsWith('text/event-stream') && response.body) return response
  return `skipped: streaming absent (SubscribeToTask answered ${response.status} ${type || 'without a content type'}: ${reasonOf(await response.text())})`
}

/** The JSON-RPC error message of an answer, or its first 200 characters. */
export function reasonOf(body: string): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message
    if (typeof message === 'string') return message.slice(0, 200)
  } catch {
    // not JSON
  }
  return body.slice(0, 200)
}

async function post(proc: RunningProcess, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(proc.url + path, {
    method: 'POST',
    headers: { ...AUTH_HEADERS, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${proc.name}: POST ${path} answered ${response.status}: ${text.slice(0, 300)}`)
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>)
}

/** A task in progress to stream: sent, then claimed by a worker through the lifecycle API. */
async function taskInProgress(proc: RunningProcess): Promise<{ a2aId: string; taskId: string }> {
  const sent = await post(proc, '/a2a/tasks/send', { sender: 'bench@fan-out', message: 'stream me' })
  const a2aId = String(sent['id'])
  const taskId = String(sent['bernstein_task_id'])
  await post(proc, `/tasks/${taskId}/claim`, {})
  return { a2aId, taskId }
}

/** Artifacts attached at most during a fan-out window: a few under what a task keeps. */
const MAX_PRODUCED = MAX_ARTIFACTS_PER_TASK - 10

/** How long the fan-out waits after the window for deliveries still on their way. */
const GRACE_MS = 10_000

export interface FanOutResult {
  readonly subscribers: number
  /** Artifacts attached (events made) while the subscribers listened. */
  readonly produced: number
  /** Events received by all subscribers together over the window, per second. */
  readonly deliveredPerSecond: number
  /** Share of the expected deliveries (produced × subscribers) that arrived by the end of the grace after the window. */
  readonly completeness: number
  readonly seconds: number
}

/** Counts the SSE events (blocks ending in a blank line that carry `data:`) arriving on a stream until it ends or is aborted. */
async function countEvents(response: Response, onEvent: () => void): Promise<void> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true }).replaceAll('\r\n', '\n')
      let end = buffer.indexOf('\n\n')
      while (end >= 0) {
        if (/^data:/m.test(buffer.slice(0, end))) onEvent()
        buffer = buffer.slice(end + 2)
        end = buffer.indexOf('\n\n')
      }
    }
  } catch {
    // aborted at the end of the window
  }
}

/**
 * `subscribers` streams on one task in progress while artifacts are attached to it as fast as the node takes them
 * (one at a time; each is one `artifactUpdate` event, where a progress report changes no v1 state and so is no
 * event) for `seconds`, at most {@link MAX_PRODUCED} (a task keeps {@link MAX_ARTIFACTS_PER_TASK}); delivered events per second
 * over the window. Resolves to the reason instead when the node does not stream.
 */
export async function fanOut(proc: RunningProcess, subscribers: number, seconds: number): Promise<FanOutResult | string> {
  const { a2aId } = await taskInProgress(proc)
  const controller = new AbortController()
  try {
    const first = await subscribe(proc, a2aId, controller.signal)
    if (typeof first === 'string') return first
    const rest = await Promise.all(Array.from({ length: subscribers - 1 }, () => subscribe(proc, a2aId, controller.signal)))
    const refused = rest.find((r): r is string => typeof r === 'string')
    if (refused !== undefined) throw new Error(`${proc.name}: subscriber refused: ${refused}`)
    const streams = [first, ...(rest as Response[])]
    let delivered = 0
    // A subscription starts with the task as it is (spec §3): not one of the reports, so not counted.
    const reading = streams.map((s) => {
      let seen = 0
      return countEvents(s, () => {
        if (seen++ > 0) delivered++
      })
    })
    const started = performance.now()
    const deadline = started + seconds * 1000
    let produced = 0
    while (performance.now() < deadline && produced < MAX_PRODUCED) {
      await post(proc, `/a2a/tasks/${a2aId}/artifacts`, { name: `step-${produced + 1}.txt`, data: `step ${produced + 1}` })
      produced++
    }
    const window = (performance.now() - started) / 1000
    const inWindow = delivered
    // What is still on its way: wait for every expected delivery, at most a grace period.
    const expected = produced * subscribers
    const grace = performance.now() + GRACE_MS
    while (delivered < expected && performance.now() < grace) await new Promise((resolve) => setTimeout(resolve, 50))
    const completeness = expected > 0 ? delivered / expected : 0
    controller.abort()
    await Promise.all(reading)
    return { subscribers, produced, deliveredPerSecond: inWindow / window, completeness, seconds: window }
  } finally {
    controller.abort()
  }
}
