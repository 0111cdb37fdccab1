/** How outbound calls to a peer are retried (Bernstein: 3 attempts, backoff 0.25·2^(n-1) s; 10 s / 30 s timeouts). */
export interface RetryPolicy {
  readonly maxAttempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  /** Per attempt, connection and response together. */
  readonly timeoutMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ maxAttempts: 4, baseDelayMs: 250, maxDelayMs: 10_000, timeoutMs: 30_000 })

export type PeerOutcome =
  | { readonly kind: 'response'; readonly status: number; readonly text: string; readonly attempts: number }
  | { readonly kind: 'network'; readonly error: string; readonly attempts: number }

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

export interface PeerRequestDeps {
  readonly fetch: typeof globalThis.fetch
  readonly sleep: (ms: number) => Promise<void>
  readonly policy: RetryPolicy
  readonly onAttempt?: (attempt: number) => Promise<void> | void
}

/**
 * One logical request to a peer with bounded retries and exponential backoff on connection errors, 5xx, 408,
 * 425 and 429 (honouring `Retry-After`). Other statuses are returned at once: they are the peer's answer.
 */
export async function requestPeer(deps: PeerRequestDeps, url: string, init: RequestInit): Promise<PeerOutcome> {
  let lastError = 'no attempt made'
  for (let attempt = 1; attempt <= deps.policy.maxAttempts; attempt++) {
    await deps.onAttempt?.(attempt)
    let delay = Math.min(deps.policy.maxDelayMs, deps.policy.baseDelayMs * 2 ** (attempt - 1))
    try {
      const response = await deps.fetch(url, { ...init, signal: AbortSignal.timeout(deps.policy.timeoutMs), redirect: 'error' })
      const text = await response.text()
      if (!isRetryableStatus(response.status) || attempt === deps.policy.maxAttempts) {
        return { kind: 'response', status: response.status, text, attempts: attempt }
      }
      lastError = `HTTP ${response.status}`
      const hinted = retryAfterMs(response.headers.get('retry-after'), Date.now())
      if (hinted !== null) delay = Math.min(Math.max(hinted, delay), 60_000)
    } catch (error) {
      lastError = describeNetworkError(error)
      if (attempt === deps.policy.maxAttempts) return { kind: 'network', error: lastError, attempts: attempt }
    }
    await deps.sleep(delay)
  }
  return { kind: 'network', error: lastError, attempts: deps.policy.maxAttempts }
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  if (error.name === 'TimeoutError') return 'timed out'
  return cause?.code ? `${error.message} (${cause.code})` : (cause?.message ?? error.message)
}
