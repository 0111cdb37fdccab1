import type { components } from '../../generated/openapi.js'
import type { A2AReceipt, A2ATask, A2ATaskStatus } from './a2a-types.js'
import type { ApiClient } from './api-client.js'
import { type FailureOf, type Result, fail, ok } from '../result.js'
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

/** The task reached a terminal status: `status` says which (a `failed` task is still a finished wait). */
export interface SendAndWaitDone {
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

/**
 * Why the wait did not end with a terminal task, stable for branching:
 * - `invalid_argument`: the arguments are wrong (from JavaScript: a client without `POST`/`GET`, a body that is not
 *   an object, timing options that are not numbers or make no sense, a `sleep`/`now` that is not a function);
 *   nothing was sent;
 * - `send_failed`/`poll_failed`: the server answered with an error status (`httpStatus`; `error` is its body);
 * - `timeout`: no terminal status within `timeoutMs`;
 * - `aborted`: the signal fired (`error` is its reason);
 * - `receipt_rejected`: the task ended but, with `verify`, its receipt did not verify (`error` is the verification,
 *   `task` the final state).
 */
export type SendAndWaitFailure = 'invalid_argument' | 'send_failed' | 'poll_failed' | 'timeout' | 'aborted' | 'receipt_rejected'

/** What a failed wait carries beside `code` and `detail`. */
export interface SendAndWaitFailureData {
  readonly httpStatus: number | null
  readonly error: unknown
  /** The last state seen, when the task was created. */
  readonly task: A2ATask | null
  /** GET requests made. */
  readonly polls: number
}

/** `{ ok: true, value: SendAndWaitDone }`, or `{ ok: false, code, detail, httpStatus, error, task, polls }`. */
export type SendAndWaitResult = Result<SendAndWaitDone, SendAndWaitFailure, SendAndWaitFailureData>

/** The failure branch of {@link SendAndWaitResult}. */
export type SendAndWaitFailed = FailureOf<SendAndWaitResult>

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
const kindOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value)

/** The options with their defaults, or what is wrong with the arguments (a JavaScript caller's types are not checked). */
function checkArguments(client: unknown, body: unknown, options: unknown): Result<Required<Omit<SendAndWaitOptions, 'signal' | 'verify'>>, 'invalid_argument'> {
  const c = client as { POST?: unknown; GET?: unknown } | null
  if (typeof c !== 'object' || c === null || typeof c.POST !== 'function' || typeof c.GET !== 'function') {
    return fail('invalid_argument', 'client must be the typed client (createApiClient)')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail('invalid_argument', `body must be an object (got ${kindOf(body)})`)
  if (typeof options !== 'object' || options === null) return fail('invalid_argument', `options must be an object (got ${kindOf(options)})`)
  const o = options as { [K in keyof SendAndWaitOptions]?: unknown }
  const { timeoutMs = 60_000, initialDelayMs = 250, maxDelayMs = 5_000, sleep = timerSleep, now = Date.now } = o
  for (const [name, value] of Object.entries({ timeoutMs, initialDelayMs, maxDelayMs })) {
    if (typeof value !== 'number' || Number.isNaN(value)) return fail('invalid_argument', `${name} must be a number of milliseconds (got ${kindOf(value)})`)
  }
  if (!((initialDelayMs as number) > 0) || !((maxDelayMs as number) >= (initialDelayMs as number)) || !((timeoutMs as number) >= 0)) {
    return fail('invalid_argument', 'need 0 < initialDelayMs <= maxDelayMs and timeoutMs >= 0')
  }
  if (typeof sleep !== 'function') return fail('invalid_argument', `sleep must be a function (got ${kindOf(sleep)})`)
  if (typeof now !== 'function') return fail('invalid_argument', `now must be a function (got ${kindOf(now)})`)
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) return fail('invalid_argument', 'signal must be an AbortSignal')
  if (o.verify !== undefined && (typeof o.verify !== 'object' || o.verify === null)) {
    return fail('invalid_argument', 'verify must be the receipt trust: { trustedFingerprints }, { jwks } or { trustedJwk }')
  }
  return ok({ timeoutMs, initialDelayMs, maxDelayMs, sleep, now } as Required<Omit<SendAndWaitOptions, 'signal' | 'verify'>>)
}

const DETAIL: Readonly<Record<Exclude<SendAndWaitFailure, 'invalid_argument'>, string>> = {
  send_failed: 'POST /a2a/tasks/send answered an error',
  poll_failed: 'GET /a2a/tasks/{a2a_task_id} answered an error',
  timeout: 'the task did not end within timeoutMs',
  aborted: 'the signal aborted the wait',
  receipt_rejected: 'the task ended, but its receipt did not verify',
}

/**
 * Sends a task (`POST /a2a/tasks/send`) and polls `GET /a2a/tasks/{id}` with exponential backoff until the task
 * is `completed`, `failed` or `canceled`. HTTP errors, the timeout, an abort and arguments that make no sense come
 * back as data ({@link SendAndWaitFailure}); only a network failure throws, as everywhere in the client.
 *
 * @example
 * const client = createApiClient({ baseUrl: 'http://127.0.0.1:8052', token })
 * const result = await sendAndWait(client, { sender: 'peer@globex', message: 'Fix the flaky test' }, { timeoutMs: 120_000 })
 * if (result.ok) console.log(result.value.status, result.value.receipt?.entry_hash)
 * else console.error(result.code, result.detail, result.httpStatus, result.error)
 */
export async function sendAndWait(client: ApiClient, body: A2ATaskSend, options: SendAndWaitOptions = {}): Promise<SendAndWaitResult> {
  const checked = checkArguments(client, body, options)
  if (!checked.ok) return { ...checked, httpStatus: null, error: null, task: null, polls: 0 }
  const { timeoutMs, initialDelayMs, maxDelayMs, sleep, now } = checked.value
  const { signal } = options
  const started = now()
  let polls = 0
  let task: A2ATask | null = null
  const failed = (code: Exclude<SendAndWaitFailure, 'invalid_argument'>, httpStatus: number | null, error: unknown): SendAndWaitFailed => {
    const detail = httpStatus === null ? DETAIL[code] : `${DETAIL[code]}: HTTP ${httpStatus}`
    const why = code === 'receipt_rejected' ? `${detail}: ${(error as { detail?: string }).detail}` : detail
    return fail(code, why, { httpStatus, error, task, polls })
  }
  const finished = async (text: string, response: Response): Promise<SendAndWaitResult | null> => {
    const current = JSON.parse(text) as A2ATask
    task = current
    if (!isTerminalA2AStatus(current.status)) return null
    const done: SendAndWaitDone = { status: current.status, task: current, receipt: current.receipt ?? null, responseText: text, polls }
    if (options.verify === undefined) return ok(done)
    const verification = await verifyReceiptText(text, response.url || null, options.verify)
    return verification.ok ? ok({ ...done, verification }) : failed('receipt_rejected', null, verification)
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
