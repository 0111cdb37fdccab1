import { readCapped } from '../client/bounded-fetch.js'

/** How outbound calls to a peer are retried (Bernstein: 3 attempts, backoff 0.25·2^(n-1) s; 10 s / 30 s timeouts). */
export interface RetryPolicy {
  readonly maxAttempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  /** Per attempt, connection and response together. */
  readonly timeoutMs: number
  /** The largest answer read from a peer, in bytes; a longer one fails the request unread (no memory growth). */
  readonly maxAnswerBytes: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  timeoutMs: 30_000,
  maxAnswerBytes: 1_048_576,
})

/** Statuses worth retrying: the peer is overloaded or the request timed out; anything else is its answer. */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 425 || status === 429
}

/** `Retry-After` as milliseconds (delta-seconds or an HTTP date), or null when absent or unusable. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (header === null || header.trim() === '') return null
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs)
}

/**
 * What a peer exchange adds to plain HTTP: each attempt is signed afresh (its own `created` and nonce, so a retry is
 * not a replay), and the answer that would be returned is checked first.
 */
export interface PeerExchange {
  /** Fields to add to one attempt of `request` (whose body is the exact text sent). */
  sign(request: { method: string; url: string; headers: Record<string, string>; body?: string }): Promise<Record<string, string>>
  /** Null when the answer to the signed request is acceptable, else why not: it is then refused, not returned. */
  check?(
    request: { method: string; url: string; headers: Record<string, string> },
    answer: { status: number; headers: Record<string, string>; body: Uint8Array },
  ): Promise<{ readonly code: string; readonly detail: string } | null>
}

/** The peer answered, but its answer failed the exchange's check (unsigned, or not by the pinned key). */
export class PeerAnswerUnverified extends Error {
  readonly code: string
  readonly status: number

  constructor(code: string, detail: string, status: number) {
    super(detail)
    this.name = 'PeerAnswerUnverified'
    this.code = code
    this.status = status
  }
}

/** Every attempt failed without an answer (connection error or timeout); `message` says how the last one failed. */
export class PeerUnreachable extends Error {
  readonly attempts: number

  constructor(message: string, attempts: number) {
    super(message)
    this.name = 'PeerUnreachable'
    this.attempts = attempts
  }
}

/** A peer answered more than the policy's `maxAnswerBytes`: not retried, since it would answer the same again. */
export class PeerAnswerTooLarge extends PeerUnreachable {
  constructor(maxBytes: number, attempts: number) {
    super(`the peer's answer exceeds ${maxBytes} bytes (BERNSTEIN_PEER_MAX_ANSWER_BYTES); it was not read`, attempts)
    this.name = 'PeerAnswerTooLarge'
  }
}

/**
 * A peer's answer, read whole within its attempt (a body cut short by the timeout is retried like a lost
 * connection). `bodyText` keeps its exact text, which openapi-fetch parses away on error statuses.
 */
export class PeerAnswer extends Response {
  readonly bodyText: string

  constructor(text: string, from: Response) {
    // Statuses without a body cannot be given one, not even an empty one.
    super(NULL_BODY_STATUSES.has(from.status) ? null : text, { status: from.status, statusText: from.statusText, headers: from.headers })
    this.bodyText = text
  }
}

const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([204, 205, 304])

export interface PeerFetchDeps {
  /** The fetch that reaches the network (injected in tests). */
  readonly fetch: typeof globalThis.fetch
  readonly sleep: (ms: number) => Promise<void>
  readonly policy: RetryPolicy
  /** Called before each attempt (the delegation ledger counts delivery attempts). */
  readonly onAttempt?: (attempt: number) => Promise<void> | void
  /** Signs each attempt and checks the answer (requests to peers that prove who they are). */
  readonly exchange?: PeerExchange
}

/**
 * A `fetch` for talking to peers, given to the typed client: one logical request with bounded retries and
 * exponential backoff on connection errors, 5xx, 408, 425 and 429 (honouring `Retry-After`), each attempt under
 * the policy's timeout and refusing redirects, reading at most `maxAnswerBytes` of an answer. Other statuses are returned at once: they are the peer's answer,
 * as a {@link PeerAnswer}. When no attempt gets an answer it throws {@link PeerUnreachable}; with an
 * {@link PeerExchange}, every attempt is signed and an answer its check refuses throws {@link PeerAnswerUnverified}.
 */
export function peerFetch(deps: PeerFetchDeps): typeof globalThis.fetch {
  return async (input, init) => {
    const request = new Request(input, init)
    const body = request.body === null ? undefined : await request.text()
    const sent: RequestInit = { method: request.method, headers: Object.fromEntries(request.headers), ...(body !== undefined && { body }) }
    let lastError = 'no attempt made'
    for (let attempt = 1; attempt <= deps.policy.maxAttempts; attempt++) {
      await deps.onAttempt?.(attempt)
      let delay = Math.min(deps.policy.maxDelayMs, deps.policy.baseDelayMs * 2 ** (attempt - 1))
      let answer: { response: Response; bytes: Uint8Array; headers: Record<string, string> } | undefined
      try {
        const headers = deps.exchange
          ? {
              ...(sent.headers as Record<string, string>),
              ...(await deps.exchange.sign({
                method: request.method,
                url: request.url,
                headers: sent.headers as Record<string, string>,
                ...(body !== undefined && { body }),
              })),
            }
          : (sent.headers as Record<string, string>)
        const response = await deps.fetch(request.url, { ...sent, headers, signal: AbortSignal.timeout(deps.policy.timeoutMs), redirect: 'error' })
        const bytes = await readCapped(response, deps.policy.maxAnswerBytes)
        if (bytes === null) throw new PeerAnswerTooLarge(deps.policy.maxAnswerBytes, attempt)
        if (!isRetryableStatus(response.status) || attempt === deps.policy.maxAttempts) answer = { response, bytes, headers }
        else {
          lastError = `HTTP ${response.status}`
          const hinted = retryAfterMs(response.headers.get('retry-after'), Date.now())
          if (hinted !== null) delay = Math.min(Math.max(hinted, delay), 60_000)
        }
      } catch (error) {
        if (error instanceof PeerAnswerTooLarge) throw error
        lastError = describeNetworkError(error)
        if (attempt === deps.policy.maxAttempts) throw new PeerUnreachable(lastError, attempt)
      }
      if (answer !== undefined) {
        const { response, bytes, headers } = answer
        const refused = await deps.exchange?.check?.(
          { method: request.method, url: request.url, headers },
          { status: response.status, headers: Object.fromEntries(response.headers), body: bytes },
        )
        if (refused) throw new PeerAnswerUnverified(refused.code, refused.detail, response.status)
        return new PeerAnswer(new TextDecoder().decode(bytes), response)
      }
      await deps.sleep(delay)
    }
    throw new PeerUnreachable(lastError, deps.policy.maxAttempts)
  }
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  if (error.name === 'TimeoutError') return 'timed out'
  return cause?.code ? `${error.message} (${cause.code})` : (cause?.message ?? error.message)
}
