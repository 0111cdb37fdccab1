import type { components } from '../../generated/openapi.js'
import type { A2AReceipt, A2ATask, A2ATaskStatus } from './a2a-types.js'
import type { ApiClient } from './api-client.js'
import { type A2AReceiptResult, type ReceiptTrust, verifyReceiptText } from './verify-receipt.js'

export type { A2AReceipt, A2ATask, A2ATaskStatus } from './a2a-types.js'
export type A2ATaskSend = components['schemas']['A2ATaskSendRequest']

/**
 * A2A statuses after which a task never changes again.
 *
 * @example TERMINAL_A2A_STATUSES.includes('completed') // true
 */
export const TERMINAL_A2A_STATUSES = ['completed', 'failed', 'canceled'] as const satisfies readonly A2ATaskStatus[]
export type TerminalA2AStatus = (typeof TERMINAL_A2A_STATUSES)[number]

/**
 * Narrows an A2A status to a terminal one.
 *
 * @example if (isTerminalA2AStatus(task.status)) console.log('finished:', task.status)
 */
export function isTerminalA2AStatus(status: string): status is TerminalA2AStatus {
  return (TERMINAL_A2A_STATUSES as readonly string[]).includes(status)
}

export interface SendAndWaitOptions {
  /** Give up after this long (default 60 000 ms). */
  readonly timeoutMs?: number
  /** First wait before polling (default 250 ms); doubled after every poll… */
  readonly initialDelayMs?: number
  /** …up to this (default 5 000 ms). */
  readonly maxDelayMs?: number
  readonly signal?: AbortSignal
  /** Injected wait (tests); defaults to a timer that the signal cancels. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  /** Injected clock in ms (tests); defaults to `Date.now`. */
  readonly now?: () => number
  /**
   * Verify the final response's receipt before calling the wait done, as {@link verifyTaskReceipt} does with this
   * trust (e.g. `{ trustedFingerprints: ['sha256:…'] }`: the node's JWKS, fetched from the node the client calls).
   * A receipt that does not verify, or a response without one, ends the wait with `receipt_rejected`.
   */
  readonly verify?: ReceiptTrust
}

/** The task reached a terminal status: `task.status` says which (a `failed` task is still a finished wait). */
export interface SendAndWaitDone {
  readonly ok: true
  readonly status: TerminalA2AStatus
  readonly task: A2ATask
  /** The newest receipt (the completion receipt once the task is done), or null when the node does not attest. */
  readonly receipt: A2AReceipt | null
  /** The exact bytes of the final response, for {@link verifyTaskReceipt}. */
  readonly responseText: string
  /** The receipt's verification, when `verify` was given (then always `ok: true` here). */
  readonly verification?: A2AReceiptResult
  /** GET requests made. */
  readonly polls: number
}

export interface SendAndWaitFailed {
  readonly ok: false
  /**
   * `send_failed`/`poll_failed`: the server answered with an error status (`httpStatus`, `error` is its body);
   * `timeout`: no terminal status within `timeoutMs`; `aborted`: the signal fired; `receipt_rejected`: the task
   * ended but, with `verify`, its receipt did not verify (`error` is the verification, `task` the final state).
   */
  readonly reason: 'send_failed' | 'poll_failed' | 'timeout' | 'aborted' | 'receipt_rejected'
  readonly httpStatus: number | null
  readonly error: unknown
  /** The last state seen, when the task was created. */
  readonly task: A2ATask | null
  readonly polls: number
}

export type SendAndWaitResult = SendAndWaitDone | SendAndWaitFailed

function timerSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}

function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || (error instanceof Error && error.name === 'AbortError')
}

/**
 * Sends a task (`POST /a2a/tasks/send`) and polls `GET /a2a/tasks/{id}` with exponential backoff until the task
 * is `completed`, `failed` or `canceled`. HTTP errors, the timeout and an abort come back as data
 * (`ok: false`); only a network failure throws, as everywhere in the client.
 *
 * @example
 * const client = createApiClient({ baseUrl: 'http://127.0.0.1:8052', token })
 * const result = await sendAndWait(client, { sender: 'peer@globex', message: 'Fix the flaky test' }, { timeoutMs: 120_000 })
 * if (result.ok) console.log(result.status, result.receipt?.entry_hash)
 * else console.error(result.reason, result.httpStatus, result.error)
 */
export async function sendAndWait(client: ApiClient, body: A2ATaskSend, options: SendAndWaitOptions = {}): Promise<SendAndWaitResult> {
  const { timeoutMs = 60_000, initialDelayMs = 250, maxDelayMs = 5_000, signal, sleep = timerSleep, now = Date.now } = options
  if (!(initialDelayMs > 0) || !(maxDelayMs >= initialDelayMs) || !(timeoutMs >= 0)) {
    throw new TypeError('sendAndWait: need 0 < initialDelayMs <= maxDelayMs and timeoutMs >= 0')
  }
  const started = now()
  let polls = 0
  let task: A2ATask | null = null
  const failed = (reason: SendAndWaitFailed['reason'], httpStatus: number | null, error: unknown): SendAndWaitFailed => ({
    ok: false,
    reason,
    httpStatus,
    error,
    task,
    polls,
  })
  const finished = async (text: string, response: Response): Promise<SendAndWaitResult | null> => {
    const current = JSON.parse(text) as A2ATask
    task = current
    if (!isTerminalA2AStatus(current.status)) return null
    const done: SendAndWaitDone = { ok: true, status: current.status, task: current, receipt: current.receipt ?? null, responseText: text, polls }
    if (options.verify === undefined) return done
    const verification = await verifyReceiptText(text, response.url || null, options.verify)
    return verification.ok ? { ...done, verification } : failed('receipt_rejected', null, verification)
  }

  try {
    const sent = await client.POST('/a2a/tasks/send', { body, parseAs: 'text', ...(signal && { signal }) })
    if (sent.error !== undefined || sent.data === undefined) return failed('send_failed', sent.response.status, sent.error)
    const done = await finished(sent.data, sent.response)
    if (done) return done
    const id = (task as A2ATask | null)?.id as string
    let delay = initialDelayMs
    for (;;) {
      if (signal?.aborted) return failed('aborted', null, signal.reason)
      const remaining = started + timeoutMs - now()
      if (remaining <= 0) return failed('timeout', null, null)
      await sleep(Math.min(delay, remaining), signal)
      if (signal?.aborted) return failed('aborted', null, signal.reason)
      delay = Math.min(delay * 2, maxDelayMs)
      polls += 1
      const got = await client.GET('/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: id } }, parseAs: 'text', ...(signal && { signal }) })
      if (got.error !== undefined || got.data === undefined) return failed('poll_failed', got.response.status, got.error)
      const result = await finished(got.data, got.response)
      if (result) return result
    }
  } catch (error) {
    if (isAbort(error, signal)) return failed('aborted', null, signal?.reason ?? error)
    throw error
  }
}
