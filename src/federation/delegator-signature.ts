import { publicKeyFromPem } from '../crypto/ed25519.js'
import { pinnedPeerKey } from '../crypto/peer-http-signature.js'
import type { TaskAccess, TaskAccessGuard, TaskRef } from '../a2a/a2a-task.js'
import type { Clock } from '../runtime.js'
import type { Store } from '../store/store.js'
import { type InboundSignatureOptions, checkPeerRequest, refused } from './inbound-signature.js'

/**
 * The rule for a task whose delegation was delivered signed by the sender's card key (RFC 9421, checked by the
 * {@link InboundSignatureGate} and recorded with the delegation): only that key's holder may act on it over the A2A
 * task API. Every request on it (the delegator's polls, its messages into the task, artifacts) by a tenant-bound caller
 * must be signed by the recorded key, within the window and with a nonce never seen (the same replay cache as
 * deliveries), else 401 and nothing is read or written. A signature that is present is checked whoever calls. A
 * caller bound to no tenant (the node's own operator token) may act unsigned: that token administers the whole node,
 * so no per-task rule could fence it. Tasks delivered unsigned (an operator's opt-out) and tasks not delegated at all
 * are as before.
 */
export class DelegatorSignatureGuard implements TaskAccessGuard {
  readonly #options: Pick<InboundSignatureOptions, 'windowSeconds' | 'targetBase'>
  readonly #deps: { readonly store: Store; readonly clock: Clock }

  constructor(options: Pick<InboundSignatureOptions, 'windowSeconds' | 'targetBase'>, deps: { readonly store: Store; readonly clock: Clock }) {
    this.#options = options
    this.#deps = deps
  }

  async check(ref: TaskRef, access: TaskAccess): Promise<void> {
    // The operator's unsigned request passes whatever the task is: no need to ask the database which it is.
    if (!access.tenantBound && !access.signed) return
    const pem = await this.#deps.store.repos.a2a.inboundSigningKey(access.tenantId, ref)
    if (pem === null) return
    const key = pinnedPeerKey(publicKeyFromPem(pem))
    const task = 'a2aTaskId' in ref ? `A2A task ${ref.a2aTaskId}` : `task ${ref.taskId}`
    if (!access.signed) {
      if (!access.tenantBound) return
      throw refused(
        'peer_signature_required',
        `${task} was delegated by a sender that signed its delivery: requests on it must be signed by that sender's card key ${key.keyid}, and Signature-Input and Signature (RFC 9421, label "peer") are missing`,
      )
    }
    await checkPeerRequest(key, access.received(), this.#options, this.#deps, {
      what: `request on ${task}`,
      replayed: 'a signed request is never taken twice',
    })
  }
}
