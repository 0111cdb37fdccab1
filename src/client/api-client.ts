import createClient, { type Client, type Middleware } from 'openapi-fetch'
import type { ClientPaths } from './a2a-types.js'
import { DEFAULT_ANSWER_TIMEOUT_MS, DEFAULT_MAX_ANSWER_BYTES, boundedFetch } from './bounded-fetch.js'
import { fetchAndVerifyPeerCard } from './peer-card.js'
import { keepA2ATaskBodies } from './raw-body.js'
import { type RequestSigner, pinnedKeyFromCard, signingFetch } from './signed-requests.js'

export interface ApiClientOptions {
  /** Server root, e.g. `http://127.0.0.1:8052`; add `/api/v1` to use the versioned prefix for every call. */
  readonly baseUrl: string
  /** Bearer token (the operator token or an agent token). */
  readonly token?: string
  /** Sent as `x-tenant-id` (honoured for the operator token; agent tokens are bound to their tenant). */
  readonly tenant?: string
  /** Injected `fetch` (defaults to the global one). */
  readonly fetch?: typeof globalThis.fetch
  readonly headers?: Readonly<Record<string, string>>
  /**
   * Sign every request (RFC 9421, label `peer`: `@method`, `@target-uri`, `content-digest` when there is a body;
   * `created`, a fresh `nonce`, `keyid`, `alg="ed25519"`), as nodes sign their federation calls. `keyid` is, by
   * convention, the key's fingerprint (`keyFingerprint(publicKey)`, `sha256:…`).
   */
  readonly signWith?: RequestSigner
  /**
   * The node's capability-card key fingerprint (`sha256:…`), pinned out of band (needs `signWith`). The client
   * fetches the node's card once, accepts it only if signed by this key, and from then on every answer must be
   * signed by that key for that very request, within the window, over its exact status and body; otherwise the call
   * throws {@link AnswerUnverified} (its `code` says why). A card that fails refuses the call before it is sent.
   */
  readonly pinnedFingerprint?: string
  /** How far either side of now an answer's `created` may be, in seconds (default 300, the nodes' default). */
  readonly signatureWindowSeconds?: number
  /** Unix seconds, for `created` and the window (defaults to the system clock). */
  readonly now?: () => number
  /**
   * The largest answer the client reads, in bytes (default 1 MiB, {@link DEFAULT_MAX_ANSWER_BYTES}; `Infinity`: no
   * limit). A longer one is not read (the rest of its stream is cancelled) and the call throws {@link AnswerRefused}
   * with code `too_large`. An A2A task can hold up to 16 MiB of artifacts: raise it to read such tasks whole.
   */
  readonly maxAnswerBytes?: number
  /**
   * How long one call may take, the whole answer included, in milliseconds (default 120 000,
   * {@link DEFAULT_ANSWER_TIMEOUT_MS}; `Infinity`: no limit); past it the call throws {@link AnswerRefused} with code
   * `timeout`. Keep it above the node's blocking bound (30 s by default), which a blocking A2A v1.0 SendMessage may wait.
   */
  readonly answerTimeoutMs?: number
}

/** The typed client: every operation of openapi.yaml, A2A task responses narrowed ({@link ClientPaths}). */
export type ApiClient = Client<ClientPaths>

/**
 * A typed client for the bernstein-a2a API, generated from openapi.yaml (openapi-fetch). Every call resolves to
 * `{ data }` or `{ error }` typed per status; it throws only when the network fails, when an answer is too large or
 * too slow ({@link AnswerRefused}), or (with `pinnedFingerprint`) when an answer is not signed by the pinned key
 * ({@link AnswerUnverified}). An A2A task response keeps
 * its exact bytes, so that `verifyTaskReceipt(await client.GET('/a2a/tasks/{a2a_task_id}', …))` can check its
 * receipt.
 *
 * @example
 * const client = createApiClient({ baseUrl: 'http://127.0.0.1:8052', token: process.env.BERNSTEIN_TOKEN })
 * const { data, error } = await client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: 'Fix the flaky test' } })
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const client = createClient<ClientPaths>({
    baseUrl,
    fetch: signedFetch(baseUrl, options, limitedFetch(options)),
    headers: { ...options.headers },
  })
  const auth: Middleware = {
    onRequest({ request }) {
      if (options.token !== undefined) request.headers.set('Authorization', `Bearer ${options.token}`)
      if (options.tenant !== undefined) request.headers.set('x-tenant-id', options.tenant)
      return request
    },
  }
  client.use(auth, keepA2ATaskBodies)
  return client
}

/** The given fetch (else the global one), reading answers within the limits of the options. */
function limitedFetch(options: ApiClientOptions): typeof globalThis.fetch {
  const limits = {
    maxAnswerBytes: limit(options.maxAnswerBytes, DEFAULT_MAX_ANSWER_BYTES, 'maxAnswerBytes'),
    timeoutMs: limit(options.answerTimeoutMs, DEFAULT_ANSWER_TIMEOUT_MS, 'answerTimeoutMs'),
  }
  const inner: typeof globalThis.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  return limits.maxAnswerBytes === Infinity && limits.timeoutMs === Infinity ? inner : boundedFetch(inner, limits)
}

function limit(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !(value > 0)) throw new TypeError(`${name} must be a positive number (Infinity: no limit)`)
  return value
}

/** The client's fetch (`inner`, already limited), wrapped to sign when `signWith` is given. */
function signedFetch(baseUrl: string, options: ApiClientOptions, inner: typeof globalThis.fetch): typeof globalThis.fetch {
  const { signWith, pinnedFingerprint } = options
  if (signWith === undefined) {
    if (pinnedFingerprint !== undefined) throw new TypeError('pinnedFingerprint needs signWith: a node signs only its answers to signed requests')
    return inner
  }
  if (typeof signWith !== 'object' || signWith === null || typeof signWith.keyid !== 'string' || typeof signWith.privateKey !== 'object')
    throw new TypeError('signWith must be { privateKey: KeyObject, keyid: string }')
  if (pinnedFingerprint !== undefined && typeof pinnedFingerprint !== 'string') throw new TypeError('pinnedFingerprint must be a fingerprint (sha256:…)')
  const now = options.now ?? (() => Date.now() / 1000)
  // The card is served at the node's root, also when the client calls the /api/v1 mirrors; it is fetched unsigned.
  const root = baseUrl.replace(/\/api\/v1$/, '')
  return signingFetch(inner, {
    signWith,
    now,
    ...(options.signatureWindowSeconds !== undefined && { windowSeconds: options.signatureWindowSeconds }),
    pinnedKey:
      pinnedFingerprint === undefined
        ? null
        : pinnedKeyFromCard(pinnedFingerprint, (fingerprint) => fetchAndVerifyPeerCard(root, { trustedFingerprints: fingerprint, fetch: inner, now: now() })),
  })
}
