/**
 * Proof of possession from the client (RFC 9421, the same signatures nodes exchange, one copy:
 * `src/crypto/peer-http-signature.ts`): with `signWith`, every request the client sends is signed; with
 * `pinnedFingerprint` too, every answer must be signed by the node's pinned capability-card key for that very
 * request, or the call throws {@link AnswerUnverified}.
 *
 * It is a `fetch` wrapped around the client's own, so it signs the request exactly as it leaves, after every
 * middleware (the token and tenant included), and checks the answer before openapi-fetch or any middleware reads it.
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import { publicKeyFromPem } from '../crypto/ed25519.js'
import {
  DEFAULT_SIGNATURE_WINDOW_SECONDS,
  type PeerSignatureFailure,
  type PinnedPeerKey,
  pinnedPeerKey,
  signPeerRequest,
  verifyPeerAnswer,
} from '../crypto/peer-http-signature.js'
import type { PeerCardFailure } from './peer-card.js'

/** The key the client signs with: an Ed25519 private key and its `keyid` (by convention its fingerprint, `sha256:…`). */
export interface RequestSigner {
  readonly privateKey: KeyObject
  readonly keyid: string
}

/**
 * Why an answer was refused, stable for branching (the first four are the codes a node's federation ledger uses):
 * - `missing`: the answer carries no signature (labelled `peer`): a node that does not sign, or a relay that dropped it;
 * - `invalid`: a signature that does not verify under the pinned key: another key, a status changed on the way, or
 *   an answer bound to another request or another address;
 * - `stale`: signed outside the window (±300 s by default) of the client's clock;
 * - `digest`: the body is not the one signed (`Content-Digest` missing or not matching);
 * - `card`: the pinned key could not be established: the node's capability card was not served, not valid, or not
 *   signed by the pinned fingerprint (`cardFailure` says which, as `fetchAndVerifyPeerCard`'s codes). The request
 *   itself was then not sent.
 */
export type AnswerUnverifiedCode = PeerSignatureFailure | 'card'

/** The node answered (or its card did not establish the pinned key), but the answer cannot be believed. */
export class AnswerUnverified extends Error {
  readonly code: AnswerUnverifiedCode
  /** The status the refused answer came with; null for `card` (the request was not sent). */
  readonly status: number | null
  /** With `card`: why the node's card was refused. */
  readonly cardFailure: PeerCardFailure | null

  constructor(code: AnswerUnverifiedCode, detail: string, status: number | null, cardFailure: PeerCardFailure | null = null) {
    super(`answer not verified (${code}): ${detail}`)
    this.name = 'AnswerUnverified'
    this.code = code
    this.status = status
    this.cardFailure = cardFailure
  }
}

/** What {@link signingFetch} needs besides the fetch it wraps. */
export interface SigningOptions {
  readonly signWith: RequestSigner
  /** Resolves the pinned key, once; null: answers are not checked. */
  readonly pinnedKey: (() => Promise<PinnedPeerKey>) | null
  /** Unix seconds. */
  readonly now: () => number
  readonly windowSeconds?: number
}

/** The pinned key from the node's capability card, accepted only when the card is signed by `fingerprint`. */
export function pinnedKeyFromCard(
  fingerprint: string,
  fetchCard: (
    fingerprint: string,
  ) => Promise<{ ok: true; value: { card: { card: { public_key_pem: string } } } } | { ok: false; code: PeerCardFailure; detail: string }>,
): () => Promise<PinnedPeerKey> {
  let known: PinnedPeerKey | null = null
  return async () => {
    if (known !== null) return known
    const verdict = await fetchCard(fingerprint)
    if (!verdict.ok) throw new AnswerUnverified('card', `the node's capability card: ${verdict.code}: ${verdict.detail}`, null, verdict.code)
    // Only a success is kept: a card that fails (or a network error) is tried again on the next call.
    known = pinnedPeerKey(publicKeyFromPem(verdict.value.card.card.public_key_pem))
    return known
  }
}

/** `inner`, with every request signed and, with a pinned key, every answer checked before it is returned. */
export function signingFetch(inner: typeof globalThis.fetch, options: SigningOptions): typeof globalThis.fetch {
  const clock = { now: options.now }
  const windowSeconds = options.windowSeconds ?? DEFAULT_SIGNATURE_WINDOW_SECONDS
  return async (input, init) => {
    const original = new Request(input, init)
    // Before anything leaves: a node whose card is not signed by the pinned key is not sent the request (nor its token).
    const key = options.pinnedKey === null ? null : await options.pinnedKey()
    const bytes = original.body === null ? null : new Uint8Array(await original.clone().arrayBuffer())
    const body = bytes !== null && bytes.length > 0 ? bytes : undefined
    const headers: Record<string, string> = {}
    original.headers.forEach((value, name) => {
      headers[name] = value
    })
    const fields = await signPeerRequest(options.signWith, clock, {
      method: original.method,
      url: original.url,
      headers,
      ...(body !== undefined && { body }),
    })
    const sent = new Headers(original.headers)
    for (const [name, value] of Object.entries(fields)) sent.set(name, value)
    // The exact bytes that were hashed are the ones sent.
    const request = new Request(original, { headers: sent, ...(bytes !== null && { body: bytes }) })
    const response = await inner(request)
    if (key === null) return response
    const answerBody = new Uint8Array(await response.clone().arrayBuffer())
    const answerHeaders: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      answerHeaders[name] = value
    })
    const verdict = await verifyPeerAnswer(
      key,
      clock,
      windowSeconds,
      { method: request.method, url: request.url, headers: { ...headers, ...fields } },
      { status: response.status, headers: answerHeaders, body: original.method === 'HEAD' ? new Uint8Array(0) : answerBody },
    )
    if (!verdict.ok) {
      await response.body?.cancel().catch(() => undefined)
      throw new AnswerUnverified(verdict.code, verdict.detail, response.status)
    }
    return response
  }
}
