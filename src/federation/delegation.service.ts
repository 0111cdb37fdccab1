import type { A2AMessage } from '../a2a/a2a-task.js'
import { type DelegateInput, type DelegatorDeps, type SendMessageInput, delegate, sendMessage } from './delegate.js'
import type { Delegation } from './delegation.js'
import { type FollowerDeps, follow, syncDue } from './follow.js'
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './peer-fetch.js'

export type { DelegateInput, SendMessageInput } from './delegate.js'

/** What the delegating and the following side need; the retrying `fetch` they share is given by its parts. */
export interface DelegationServiceDeps extends Omit<DelegatorDeps, 'peer'>, Omit<FollowerDeps, 'peer'> {
  readonly fetch?: typeof globalThis.fetch
  readonly sleep?: (ms: number) => Promise<void>
  readonly retry?: RetryPolicy
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Delegation to peer orchestrators over one ledger: the delegating side ({@link delegate}, {@link sendMessage})
 * and the following side ({@link follow}, {@link syncDue}), both speaking to peers through the typed client over
 * one retrying `fetch`.
 */
export class DelegationService {
  readonly #deps: DelegatorDeps & FollowerDeps

  constructor(deps: DelegationServiceDeps) {
    this.#deps = { ...deps, peer: { fetch: deps.fetch ?? globalThis.fetch, sleep: deps.sleep ?? sleep, policy: deps.retry ?? DEFAULT_RETRY_POLICY } }
  }

  list(tenantId?: string): Promise<Delegation[]> {
    return this.#deps.store.repos.federation.list(tenantId)
  }

  /** Delegates a local task to a peer, or returns its ledger row unchanged when the peer already accepted it. */
  delegate(input: DelegateInput): Promise<Delegation> {
    return delegate(this.#deps, input)
  }

  /** Sends a message into a task at a peer, recorded as `outbound` once the peer accepted it. */
  sendMessage(input: SendMessageInput): Promise<A2AMessage> {
    return sendMessage(this.#deps, input)
  }

  /** Polls one delegation's remote task once and settles it when it has ended. */
  follow(delegation: Delegation): Promise<Delegation> {
    return follow(this.#deps, delegation)
  }

  /** One pass over every delegation due for a poll (`all`: every followed one, ignoring backoff). */
  syncDue(options: { all?: boolean } = {}): Promise<Delegation[]> {
    return syncDue(this.#deps, options)
  }
}
