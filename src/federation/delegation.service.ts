import type { A2AMessage } from '../a2a/a2a-task.js'
import type { LineageService } from '../lineage/lineage.service.js'
import type { PyObject } from '../canonical/python-json.js'
import type { Metrics } from '../signature-metrics.js'
import type { Clock, Ids } from '../runtime.js'
import type { Store } from '../store/store.js'
import type { TaskService } from '../tasks/task.service.js'
import { type DelegateInput, type DelegatorDeps, type SendMessageInput, delegate, sendMessage } from './delegate.js'
import type { Delegation } from './delegation.js'
import { type FollowerDeps, follow, syncDue } from './follow.js'
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './peer-fetch.js'

export type { DelegateInput, SendMessageInput } from './delegate.js'

export interface DelegationServiceDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
  readonly tasks: TaskService
  readonly lineage: LineageService
  /** This node as a v0.1 sender card, carrying its signed capability card under `capability_card`. */
  readonly senderCard: () => Promise<PyObject>
  /** The bearer token to use towards a peer when following it (tokens are never stored in the ledger). */
  readonly peerToken: (peerUrl: string) => string | null
  readonly fetch?: typeof globalThis.fetch
  readonly sleep?: (ms: number) => Promise<void>
  readonly retry?: RetryPolicy
  /** Told about the peer cards and completion receipts this service verifies. */
  readonly metrics?: Metrics
  /** Follower backoff between polls of one delegation. */
  readonly pollBaseMs?: number
  readonly pollMaxMs?: number
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Delegation to peer orchestrators over one ledger: the delegating side ({@link delegate}, {@link sendMessage})
 * and the following side ({@link follow}, {@link syncDue}), both speaking to peers through the typed client over
 * one retrying `fetch`.
 */
export class DelegationService {
  readonly #store: Store
  readonly #delegator: DelegatorDeps
  readonly #follower: FollowerDeps

  constructor(deps: DelegationServiceDeps) {
    const peer = { fetch: deps.fetch ?? globalThis.fetch, sleep: deps.sleep ?? sleep, policy: deps.retry ?? DEFAULT_RETRY_POLICY }
    const metrics = deps.metrics && { metrics: deps.metrics }
    this.#store = deps.store
    this.#delegator = { store: deps.store, clock: deps.clock, ids: deps.ids, tasks: deps.tasks, lineage: deps.lineage, senderCard: deps.senderCard, peer, ...metrics }
    this.#follower = {
      store: deps.store,
      clock: deps.clock,
      tasks: deps.tasks,
      peer,
      peerToken: deps.peerToken,
      ...metrics,
      ...(deps.pollBaseMs !== undefined && { pollBaseMs: deps.pollBaseMs }),
      ...(deps.pollMaxMs !== undefined && { pollMaxMs: deps.pollMaxMs }),
    }
  }

  list(tenantId?: string): Promise<Delegation[]> {
    return this.#store.repos.federation.list(tenantId)
  }

  /** Delegates a local task to a peer, or returns its ledger row unchanged when the peer already accepted it. */
  delegate(input: DelegateInput): Promise<Delegation> {
    return delegate(this.#delegator, input)
  }

  /** Sends a message into a task at a peer, recorded as `outbound` once the peer accepted it. */
  sendMessage(input: SendMessageInput): Promise<A2AMessage> {
    return sendMessage(this.#delegator, input)
  }

  /** Polls one delegation's remote task once and settles it when it has ended. */
  follow(delegation: Delegation): Promise<Delegation> {
    return follow(this.#follower, delegation)
  }

  /** One pass over every delegation due for a poll (`all`: every followed one, ignoring backoff). */
  syncDue(options: { all?: boolean } = {}): Promise<Delegation[]> {
    return syncDue(this.#follower, options)
  }
}
