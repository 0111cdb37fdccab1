import type { Middleware } from 'openapi-fetch'
import { type ApiClient, createApiClient } from '../client/index.js'
import { AppError } from '../errors.js'
import { PeerAnswer, PeerAnswerUnverified, PeerUnreachable } from './peer-fetch.js'

/** A peer's root URL without trailing slashes; anything but an absolute http(s) URL without credentials is bad input. */
export function normalisePeerUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new AppError('invalid_request', `peer URL '${url}' is not an absolute http(s) URL`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new AppError('invalid_request', `peer URL '${url}' is not http(s)`)
  // fetch refuses such a URL on every attempt; the URL is not echoed, since it holds a secret.
  if (parsed.username !== '' || parsed.password !== '')
    throw new AppError('invalid_request', 'a peer URL cannot carry credentials (user:password@); pass the peer token instead')
  return url.replace(/\/+$/, '')
}

/**
 * The typed client towards one peer, over a {@link peerFetch}. Tokens are given per request: the discovery
 * documents are fetched without one.
 */
export function peerClient(peerUrl: string, fetch: typeof globalThis.fetch): ApiClient {
  // peerFetch already reads every answer within the node's own limits (BERNSTEIN_PEER_MAX_ANSWER_BYTES, _TIMEOUT_MS).
  return createApiClient({ baseUrl: peerUrl, fetch, headers: { accept: 'application/json' }, maxAnswerBytes: Infinity, answerTimeoutMs: Infinity })
}

/** The `authorization` header for a peer token, none without one. */
export function bearer(token: string | null): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {}
}

/**
 * Sends `text` as the JSON body of a request whose operation describes no body: `POST /a2a/v0/tasks`, which the
 * peer validates by hand and whose lineage envelope is hashed, so its exact bytes are ours to choose.
 */
export function rawJsonBody(text: string): Middleware {
  return {
    onRequest({ request }) {
      const headers = new Headers(request.headers)
      headers.set('content-type', 'application/json')
      return new Request(request, { body: text, headers })
    },
  }
}

export type PeerOutcome =
  | { readonly kind: 'response'; readonly status: number; readonly text: string }
  | { readonly kind: 'network'; readonly error: string; readonly attempts: number }
  /** The peer answered `status`, but not as the exchange demands (`code` says how: `missing` means unsigned). */
  | { readonly kind: 'unverified'; readonly status: number; readonly code: string; readonly error: string }

/** What a client call over a {@link peerFetch} came to: the peer's status and exact text, an answer refused, or no answer at all. */
export async function peerOutcome(call: Promise<{ response: Response }>): Promise<PeerOutcome> {
  try {
    const { response } = await call
    if (!(response instanceof PeerAnswer)) throw new TypeError('peer calls go through peerFetch')
    return { kind: 'response', status: response.status, text: response.bodyText }
  } catch (error) {
    if (error instanceof PeerUnreachable) return { kind: 'network', error: error.message, attempts: error.attempts }
    if (error instanceof PeerAnswerUnverified) return { kind: 'unverified', status: error.status, code: error.code, error: error.message }
    throw error
  }
}

/** How much of a peer's error answer a ledger row's `lastError` keeps, in UTF-16 units. */
const MAX_PEER_DETAIL = 500

/**
 * A peer's error answer for the ledger: its `detail` when that is a string, else its text, cut to
 * {@link MAX_PEER_DETAIL} (marked with `…`) and never inside a surrogate pair, which would leave half a character.
 */
export function peerErrorDetail(text: string): string {
  let detail = text
  try {
    const body = JSON.parse(text) as { detail?: unknown } | null
    if (typeof body?.detail === 'string') detail = body.detail
  } catch {
    // Not JSON: the text itself.
  }
  if (detail.length <= MAX_PEER_DETAIL) return detail
  const cut = detail.slice(0, MAX_PEER_DETAIL)
  return (/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut) + '…'
}

/** A peer's JSON object before any check: the contract names its fields, their values are not trusted yet. */
export type Unverified<T> = { readonly [K in keyof T]?: unknown }
