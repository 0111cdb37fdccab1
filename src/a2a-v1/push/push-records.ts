/** What the push notification store keeps: configs of a task and the deliveries of its events (migration 012). */

/** A stored push notification config. `token` and the authentication are the receiver's, given by the caller. */
export interface PushConfigRecord {
  readonly tenantId: string
  readonly a2aTaskId: string
  readonly configId: string
  readonly url: string
  readonly token: string | null
  readonly authScheme: string | null
  readonly authCredentials: string | null
  readonly createdAt: number
}

export type PushDeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One event to deliver to one config: the StreamResponse text, and where its attempts stand. */
export interface PushDeliveryRecord {
  readonly seq: number
  /** Unique; the signature's `jti`, so a receiver can drop a delivery it has already seen. */
  readonly id: string
  readonly tenantId: string
  readonly a2aTaskId: string
  readonly configId: string
  readonly body: string
  readonly status: PushDeliveryStatus
  readonly attempts: number
  readonly nextAttemptAt: number
  readonly lastError: string | null
  readonly createdAt: number
  readonly finishedAt: number | null
}

/** A delivery the caller claimed: it alone attempts it until `leaseUntil`; its outcome is recorded under `leaseOwner`. */
export interface ClaimedDelivery extends PushDeliveryRecord {
  readonly leaseOwner: string
}

/** What happened to an attempt. */
export type DeliveryOutcome =
  | { readonly kind: 'delivered'; readonly at: number }
  | { readonly kind: 'retry'; readonly at: number; readonly nextAttemptAt: number; readonly error: string }
  | { readonly kind: 'failed'; readonly at: number; readonly error: string }
