import { publicKeyFromPem } from '../crypto/ed25519.js'
import { AppError } from '../errors.js'
import type { Clock } from '../runtime.js'
import type { Store } from '../store/store.js'
import type { InboundGate, InboundGateResult, InboundTaskRequest } from './inbound.service.js'
import { type PinnedPeerKey, type ReceivedRequest, carriesSignature, pinnedPeerKey, verifyPeerRequest } from '../crypto/peer-http-signature.js'

export interface InboundSignatureOptions {
  /** Refuse deliveries without a signature (default: on when the node pins peers, BERNSTEIN_REQUIRE_PEER_SIGNATURE). */
  readonly requireSignature: boolean
  /** How far `created` may be from now, either side, in seconds. */
  readonly windowSeconds: number
  /**
   * The base URL requests are addressed to (BERNSTEIN_PUBLIC_BASE_URL when set): the signed `@target-uri` must be this
   * plus the path. Null: the scheme and `Host` the request arrived with.
   */
  readonly targetBase: string | null
}

/** Stable reasons of a 401 for a delivery whose sender did not prove it holds its card key. */
export type PeerSignatureRefusal = 'peer_signature_required' | 'peer_signature_invalid' | 'peer_signature_stale' | 'peer_signature_replayed'

export const refused = (reason: PeerSignatureRefusal, detail: string): AppError =>
  new AppError('unauthenticated', detail, { extra: { reason }, headers: { 'WWW-Authenticate': 'Bearer realm="bernstein-a2a"' } })

/**
 * The first check of an inbound delegation: the request must be signed (RFC 9421) by the key of the capability card
 * it carries (the card gate after it checks that card's own signature and that its key is pinned), over its method, target URI and exact body, `created` within the window, and its
 * nonce never seen before for that key (the replay cache is in the database, so every replica shares it). Only then
 * do the card, policy and lineage checks read the body. A refusal is a 401 with a stable `reason`; nothing is
 * created. Unlike the other gates this one writes: recording the nonce is what makes a replay fail.
 */
export class InboundSignatureGate implements InboundGate {
  readonly #options: InboundSignatureOptions
  readonly #deps: { readonly store: Store; readonly clock: Clock }

  constructor(options: InboundSignatureOptions, deps: { readonly store: Store; readonly clock: Clock }) {
    this.#options = options
    this.#deps = deps
  }

  async check(request: InboundTaskRequest): Promise<InboundGateResult> {
    const transport = request.transport
    if (transport === undefined || !carriesSignature(transport.headers)) {
      if (!this.#options.requireSignature) return {}
      throw refused(
        'peer_signature_required',
        'this node only accepts deliveries signed by the sender capability card key: Signature-Input and Signature (RFC 9421, label "peer") are missing',
      )
    }
    const { key, pem } = senderCardKey(request)
    await checkPeerRequest(key, { ...transport, body: request.raw }, this.#options, this.#deps, {
      what: 'delivery',
      replayed: 'a delivery is never accepted twice',
    })
    return { signingKey: pem }
  }
}

/**
 * Checks that `request` is signed by `key` (method, target URI, exact body, `created` within the window) and records
 * its nonce, refusing one already seen for that key (the replay cache is in the database: every replica shares it).
 * Throws the 401 {@link PeerSignatureRefusal}; `what` names the request in the detail.
 */
export async function checkPeerRequest(
  key: PinnedPeerKey,
  request: ReceivedRequest,
  options: Pick<InboundSignatureOptions, 'windowSeconds' | 'targetBase'>,
  deps: { readonly store: Store; readonly clock: Clock },
  words: { readonly what: string; readonly replayed: string },
): Promise<void> {
  const verdict = await verifyPeerRequest(key, deps.clock, options.windowSeconds, {
    method: request.method,
    url: (options.targetBase ?? request.origin) + request.path,
    headers: request.headers,
    body: request.body,
  })
  if (!verdict.ok) {
    if (verdict.code === 'missing') throw refused('peer_signature_required', `no signature labelled "peer": ${verdict.detail}`)
    if (verdict.code === 'stale') throw refused('peer_signature_stale', verdict.detail)
    throw refused('peer_signature_invalid', `the ${words.what}'s signature by ${key.keyid} does not verify: ${verdict.detail}`)
  }
  const fresh = await deps.store.repos.peerNonces.recordIfNew(
    key.keyid,
    verdict.value.nonce,
    deps.clock.now(),
    verdict.value.created + options.windowSeconds + 1,
  )
  if (!fresh) throw refused('peer_signature_replayed', `this signature nonce was already used: ${words.replayed}`)
}

/** The public key of the capability card the sender carries (its signature is the card gate's to check). */
function senderCardKey(request: InboundTaskRequest): { key: PinnedPeerKey; pem: string } {
  const card = request.senderRaw['capability_card']
  const body = typeof card === 'object' && card !== null ? (card as Record<string, unknown>)['card'] : undefined
  const pem = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['public_key_pem'] : undefined
  if (typeof pem !== 'string') throw refused('peer_signature_invalid', 'a signed delivery must carry the sender capability card whose key signed it')
  try {
    return { key: pinnedPeerKey(publicKeyFromPem(pem)), pem }
  } catch {
    throw refused('peer_signature_invalid', "the sender capability card's public_key_pem is not an Ed25519 public key")
  }
}
