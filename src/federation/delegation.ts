export const DELEGATION_STATUSES = ['pending', 'sent', 'accepted', 'in_progress', 'completed', 'failed', 'rejected'] as const
export type DelegationStatus = (typeof DELEGATION_STATUSES)[number]

/**
 * How far a peer proved who it is: `proven`, it answered a fresh challenge signed by the card key the delegator
 * pinned (RFC 9421), so every later answer is verified against that key; `card-only`, it served a pinned card but
 * cannot sign (Bernstein 3.x), accepted only because the operator allowed unsigned peers.
 */
export const TRUST_LEVELS = ['proven', 'card-only'] as const
export type TrustLevel = (typeof TRUST_LEVELS)[number]

/** One outbound delegation as the ledger keeps it. */
export interface Delegation {
  readonly id: string
  readonly tenantId: string
  readonly peerUrl: string
  readonly localTaskId: string
  /** The peer's federated id (its v0 answer's `id`). */
  readonly remoteId: string | null
  /**
   * The peer's own (Bernstein) task linked to this delegation, its 202 answer's `task_id`: the id a message into
   * the task at the peer names. Rows written before it was recorded hold the id we offered instead (`localTaskId`).
   */
  readonly remoteTaskId: string | null
  /** The peer's A2A task, followed with `GET /a2a/tasks/{id}`. */
  readonly remoteA2ATaskId: string | null
  readonly status: DelegationStatus
  readonly attempts: number
  readonly lastError: string | null
  readonly peerIssuer: string | null
  readonly peerFingerprint: string | null
  /** The peer's JWKS as fetched when the card was accepted: its receipt key is pinned from here. */
  readonly peerJwks: string | null
  readonly message: string
  readonly role: string
  readonly result: string | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly nextPollAt: number | null
  readonly polls: number
  /** Null until the peer's card was accepted and its proof of possession checked. */
  readonly trustLevel: TrustLevel | null
  /** The pinned card's public key (SPKI PEM): the key the peer's answers must be signed by when `proven`. */
  readonly peerCardKey: string | null
}

/** Still moving: the follower polls these. */
export const FOLLOWED_STATUSES: ReadonlySet<DelegationStatus> = new Set(['accepted', 'in_progress'])
