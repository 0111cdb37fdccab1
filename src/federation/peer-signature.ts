/**
 * Proof of possession between peers, the server's side: the exchange a federation call makes (every attempt signed,
 * answers checked against the pinned card key) and how this node signs its answers. What is signed and verified,
 * and how, is {@link ../crypto/peer-http-signature.ts}, shared with the client SDK.
 *
 * @module
 */
import { signatureMember } from '../crypto/http-signature.js'
import { PEER_SIGNATURE_LABEL, type PeerSigner, type PinnedPeerKey, signPeerAnswer, signPeerRequest, verifyPeerAnswer } from '../crypto/peer-http-signature.js'
import type { AnswerSigner } from '../http/signed-answers.js'
import type { Clock } from '../runtime.js'
import type { PeerExchange } from './peer-fetch.js'
/**
 * The exchange with one peer: every attempt signed by `signer`; with a pinned `key`, every answer must be signed by
 * that key for that very request (else it is refused as {@link PeerAnswerUnverified}); without one (a peer the
 * operator allowed to stay unsigned), answers are taken as they come.
 */
export function peerExchange(signer: PeerSigner, clock: Clock, windowSeconds: number, key: PinnedPeerKey | null): PeerExchange {
  return {
    sign: (request) => signPeerRequest(signer, clock, request),
    ...(key !== null && {
      check: async (request, answer) => {
        const verdict = await verifyPeerAnswer(key, clock, windowSeconds, request, answer)
        return verdict.ok ? null : { code: verdict.code, detail: verdict.detail }
      },
    }),
  }
}

/**
 * How this node signs its answers to peers' signed requests (the HTTP layer's `AnswerSigner`): with the key of the
 * card it serves, bound to the request's signature labelled {@link PEER_SIGNATURE_LABEL}.
 */
export function peerAnswerSigner(identity: { peerSigner(): PeerSigner }, clock: Clock, targetBase: string | null): AnswerSigner {
  return {
    wants: (headers) => {
      const input = headers['signature-input']
      const signature = headers['signature']
      if (input === undefined || signature === undefined) return false
      return signatureMember({ signature: Array.isArray(signature) ? signature.join(', ') : signature }, PEER_SIGNATURE_LABEL) !== undefined
    },
    // The target URI as this node was addressed: its configured public URL when set (a relay cannot then pass its own
    // address off as ours), else the scheme and Host the request came with.
    sign: (request, status, body) =>
      signPeerAnswer(
        identity.peerSigner(),
        clock,
        { method: request.method, url: (targetBase ?? request.origin) + request.path, headers: request.headers },
        status,
        body,
      ),
  }
}
