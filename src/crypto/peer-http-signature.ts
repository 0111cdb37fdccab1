/**
 * Proof of possession between peers: what a node signs with its capability-card key (RFC 9421, Ed25519), what it
 * demands of a peer's signature, and the freshness and replay rules. The bytes of cards, envelopes and receipts do
 * not change: the signatures travel in the `Signature-Input` / `Signature` fields, labelled {@link PEER_SIGNATURE_LABEL}.
 *
 * - A request covers `@method`, `@target-uri`, `content-digest` (RFC 9530 sha-256 of the exact body, when there is
 *   one) and the parameters `created`, `nonce`, `keyid`, `alg="ed25519"`. `keyid` is the card key's fingerprint
 *   (`sha256:` + hex of the raw key), the value operators pin.
 * - An answer covers `@status`, `content-digest`, the request's method and target URI as the answering node received
 *   them (`"@method";req`, `"@target-uri";req`) and the request's own signature (`"signature";req;key="peer"`), so it
 *   belongs to that request, sent to that address, and to no other; parameters `created`, `keyid`, `alg`.
 *
 * Pure (keys and clock given, nothing stored): the server's federation and the client SDK (`signWith`,
 * `pinnedFingerprint`) both sign and verify with this one copy.
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import { randomBytes } from 'node:crypto'
import { keyFingerprint } from './fingerprint.js'
import {
  type SignableRequest,
  contentDigest,
  contentDigestMatches,
  signHttpRequest,
  signHttpResponse,
  verifyHttpRequest,
  verifyHttpResponse,
} from './http-signature.js'
import { type Result, fail, ok } from '../result.js'
import type { Clock } from '../runtime.js'

/** What signing and verifying read of the clock: Unix seconds. */
type Seconds = Pick<Clock, 'now'>

export const PEER_SIGNATURE_LABEL = 'peer'

const REQUEST_COMPONENTS = ['"@method"', '"@target-uri"'] as const
const BODY_COMPONENT = '"content-digest"'
const ANSWER_COMPONENTS = ['"@status"', '"content-digest"', '"@method";req', '"@target-uri";req', `"signature";req;key="${PEER_SIGNATURE_LABEL}"`] as const

/** What a request nonce may be: what the replay cache can hold, in characters any nonce generator uses. */
const NONCE = /^[A-Za-z0-9._~+/=-]{8,128}$/

/** The acceptance window of `created`, either side of now, in seconds, when the operator sets none. */
export const DEFAULT_SIGNATURE_WINDOW_SECONDS = 300

/** A node's signing identity towards peers: its capability-card key and that key's fingerprint (the `keyid`). */
export interface PeerSigner {
  readonly keyid: string
  readonly privateKey: KeyObject
}

/** A peer's key as pinned: the public key of its verified capability card, and its fingerprint. */
export interface PinnedPeerKey {
  readonly keyid: string
  readonly publicKey: KeyObject
}

export function pinnedPeerKey(publicKey: KeyObject): PinnedPeerKey {
  return { keyid: keyFingerprint(publicKey), publicKey }
}

/** A request about to be sent to a peer: the exact body bytes (text is hashed as UTF-8), when it has one. */
export interface OutboundRequest {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | Uint8Array
}

/**
 * A request as received, for its RFC 9421 signature: method, `origin` (`scheme://host`) as addressed, `path` with
 * query, header fields (lowercase names, one string each) and the exact body bytes when it has one.
 */
export interface ReceivedRequest {
  readonly method: string
  readonly origin: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | Uint8Array | undefined
}

/** Whether a request carries a signature at all (either of the two fields), in received or raw Node header fields. */
export function carriesSignature(headers: Readonly<Record<string, string | readonly string[] | undefined>>): boolean {
  return headers['signature-input'] !== undefined || headers['signature'] !== undefined
}

/** A fresh nonce: 18 random bytes, base64url (24 characters). */
export function freshNonce(): string {
  return randomBytes(18).toString('base64url')
}

/** The fields to add to `request` so the peer can tell it comes from `signer`: `content-digest` and the signature. */
export async function signPeerRequest(
  signer: PeerSigner,
  clock: Seconds,
  request: OutboundRequest,
  nonce: string = freshNonce(),
): Promise<Record<string, string>> {
  const digest: Record<string, string> = request.body === undefined ? {} : { 'content-digest': contentDigest(request.body) }
  const signed: SignableRequest = { method: request.method, url: request.url, headers: { ...request.headers, ...digest } }
  const fields = await signHttpRequest(signed, {
    label: PEER_SIGNATURE_LABEL,
    components: request.body === undefined ? REQUEST_COMPONENTS : [...REQUEST_COMPONENTS, BODY_COMPONENT],
    privateKey: signer.privateKey,
    keyid: signer.keyid,
    created: Math.floor(clock.now()),
    nonce,
  })
  return { ...digest, ...fields }
}

/**
 * Why a peer's signature is not accepted. `missing`: the message carries no signature under our label (a peer that
 * cannot sign); every other code means a signature was there and is not good enough.
 */
export type PeerSignatureFailure = 'missing' | 'invalid' | 'stale' | 'digest'

/** The signature of a request received from a peer, checked: the key's fingerprint, `created` and the nonce. */
export interface VerifiedPeerRequest {
  readonly keyid: string
  readonly created: number
  readonly nonce: string
}

/**
 * Checks that `request` (as received: method, the target URI it was addressed to, its fields and exact body) is
 * signed by `key`, covering what {@link signPeerRequest} covers, with a `created` within `windowSeconds` of now.
 * The nonce is returned for the caller's replay cache; this function changes nothing.
 */
export async function verifyPeerRequest(
  key: PinnedPeerKey,
  clock: Seconds,
  windowSeconds: number,
  request: SignableRequest & { readonly body: string | Uint8Array | undefined },
): Promise<Result<VerifiedPeerRequest, PeerSignatureFailure>> {
  const hasBody = request.body !== undefined && request.body.length > 0
  const verified = await verifyHttpRequest(request, {
    label: PEER_SIGNATURE_LABEL,
    publicKey: key.publicKey,
    keyid: key.keyid,
    requiredComponents: hasBody ? [...REQUEST_COMPONENTS, BODY_COMPONENT] : REQUEST_COMPONENTS,
    requiredParams: ['created', 'nonce', 'keyid'],
  })
  if (!verified.ok) return fail(verified.code === 'signature_missing' ? 'missing' : 'invalid', verified.detail)
  if (hasBody || verified.value.components.includes(BODY_COMPONENT)) {
    const digest = contentDigestMatches(headerOf(request.headers, 'content-digest'), request.body ?? '')
    if (!digest.ok) return fail('digest', digest.detail)
  }
  const nonce = verified.value.nonce ?? ''
  if (!NONCE.test(nonce)) return fail('invalid', 'the nonce must be 8 to 128 characters of A-Z a-z 0-9 - _ . ~ + / =')
  const stale = staleness(verified.value.created ?? Number.NaN, clock, windowSeconds)
  if (stale !== null) return fail('stale', stale)
  return ok({ keyid: key.keyid, created: verified.value.created as number, nonce })
}

/** The fields to add to an answer with `status` and exactly `body` to `request` (which carried our label's signature). */
export async function signPeerAnswer(
  signer: PeerSigner,
  clock: Seconds,
  request: SignableRequest,
  status: number,
  body: string | Uint8Array,
): Promise<Record<string, string>> {
  const digest = { 'content-digest': contentDigest(body) }
  const fields = await signHttpResponse({ status, headers: digest }, request, {
    label: PEER_SIGNATURE_LABEL,
    components: ANSWER_COMPONENTS,
    privateKey: signer.privateKey,
    keyid: signer.keyid,
    created: Math.floor(clock.now()),
  })
  return { ...digest, ...fields }
}

/**
 * Checks that a peer's answer to our signed `request` is signed by the pinned `key`, covers its status, its exact
 * body and our request's signature, and was made within `windowSeconds` of now.
 */
export async function verifyPeerAnswer(
  key: PinnedPeerKey,
  clock: Seconds,
  windowSeconds: number,
  request: SignableRequest,
  answer: { readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: Uint8Array | string },
): Promise<Result<undefined, PeerSignatureFailure>> {
  const verified = await verifyHttpResponse({ status: answer.status, headers: answer.headers }, request, {
    label: PEER_SIGNATURE_LABEL,
    publicKey: key.publicKey,
    keyid: key.keyid,
    requiredComponents: ANSWER_COMPONENTS,
    requiredParams: ['created', 'keyid'],
  })
  if (!verified.ok) return fail(verified.code === 'signature_missing' ? 'missing' : 'invalid', verified.detail)
  const digest = contentDigestMatches(headerOf(answer.headers, 'content-digest'), answer.body)
  if (!digest.ok) return fail('digest', digest.detail)
  const stale = staleness(verified.value.created ?? Number.NaN, clock, windowSeconds)
  return stale === null ? ok() : fail('stale', stale)
}

/** Null when `created` is within the window of now, else why not. */
function staleness(created: number, clock: Seconds, windowSeconds: number): string | null {
  const now = clock.now()
  if (!Number.isFinite(created)) return 'the signature has no created time'
  if (created > now + windowSeconds) return `the signature was created ${Math.round(created - now)} s in the future (window ±${windowSeconds} s)`
  if (created < now - windowSeconds) return `the signature was created ${Math.round(now - created)} s ago (window ±${windowSeconds} s)`
  return null
}

function headerOf(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value
  return undefined
}
