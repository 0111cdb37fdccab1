/**
 * Limits on what the client reads back: an answer longer than `maxAnswerBytes` is not read (the rest of its stream
 * is cancelled, so memory does not grow with it), and a call that has not received its whole answer within
 * `timeoutMs` is abandoned. Either way the call throws {@link AnswerRefused} with a stable `code`.
 *
 * @module
 */

/** The client's default limits: 1 MiB per answer; 120 s per call (connection, status and body together), above the 30 s a blocking A2A v1.0 SendMessage may wait by default. */
export const DEFAULT_MAX_ANSWER_BYTES = 1_048_576
export const DEFAULT_ANSWER_TIMEOUT_MS = 120_000

/**
 * Why an answer was not read, stable for branching:
 * - `too_large`: the answer is longer than `maxAnswerBytes` (declared so in `Content-Length`, or found so while reading);
 * - `timeout`: the whole answer did not arrive within `answerTimeoutMs`.
 */
export type AnswerRefusedCode = 'too_large' | 'timeout'

/** The node's answer was not read: too large, or too slow. */
export class AnswerRefused extends Error {
  readonly code: AnswerRefusedCode
  /** The status the answer came with; null when not even the status arrived in time. */
  readonly status: number | null

  constructor(code: AnswerRefusedCode, detail: string, status: number | null) {
    super(`answer refused (${code}): ${detail}`)
    this.name = 'AnswerRefused'
    this.code = code
    this.status = status
  }
}

/** What {@link boundedFetch} allows; `Infinity` lifts a limit. */
export interface AnswerLimits {
  readonly maxAnswerBytes: number
  readonly timeoutMs: number
}

/**
 * The body of an answer, read up to `maxBytes`: null (and the rest of the stream cancelled) when it is longer, so a
 * peer cannot make its reader buffer more than the cap. A declared Content-Length over the cap is refused unread.
 */
export async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array | null> {
  const declared = Number(response.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    return null
  }
  if (response.body === null) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let length = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    length += chunk.byteLength
    if (length > maxBytes) {
      await response.body.cancel().catch(() => undefined)
      return null
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, length)
}

/** Statuses whose answers have no body (a Response cannot be given one, not even an empty one). */
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 204, 205, 304])

/** `inner`, with each answer read whole within the limits, or {@link AnswerRefused}. */
export function boundedFetch(inner: typeof globalThis.fetch, limits: AnswerLimits): typeof globalThis.fetch {
  return async (input, init) => {
    const request = new Request(input, init)
    const timer = Number.isFinite(limits.timeoutMs) ? AbortSignal.timeout(limits.timeoutMs) : null
    const tooSlow = (status: number | null): AnswerRefused =>
      new AnswerRefused('timeout', `the whole answer did not arrive within ${limits.timeoutMs} ms (answerTimeoutMs)`, status)
    let response: Response
    try {
      response = await inner(request, timer === null ? undefined : { signal: AbortSignal.any([request.signal, timer]) })
    } catch (error) {
      if (timer?.aborted && !request.signal.aborted) throw tooSlow(null)
      throw error
    }
    let bytes: Uint8Array | null
    try {
      bytes = await readCapped(response, limits.maxAnswerBytes)
    } catch (error) {
      if (timer?.aborted && !request.signal.aborted) throw tooSlow(response.status)
      throw error
    }
    if (bytes === null)
      throw new AnswerRefused('too_large', `the answer exceeds ${limits.maxAnswerBytes} bytes (maxAnswerBytes); it was not read`, response.status)
    const read = new Response(NULL_BODY_STATUSES.has(response.status) ? null : bytes, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
    // A constructed Response has no URL; the answer's is kept (verifyTaskReceipt fetches the JWKS from that node).
    Object.defineProperty(read, 'url', { value: response.url })
    return read
  }
}
