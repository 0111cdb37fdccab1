import type { KeyObject } from 'node:crypto'
import { signPushJwt } from '../../crypto/push-jwt.js'
import { isRetryableStatus, retryAfterMs } from '../../federation/peer-fetch.js'
import { type Logger, silentLogger } from '../../logger.js'
import type { Clock, Ids } from '../../runtime.js'
import type { Store } from '../../store/store.js'
import type { ClaimedDelivery, DeliveryOutcome } from './push-records.js'
import type { PushTargetGuard } from './push-target-guard.js'

/** How deliveries are attempted (docs/configuration.md, `BERNSTEIN_A2A_PUSH_*`). */
export interface PushDeliveryOptions {
  /** One attempt, connection and answer together. */
  readonly timeoutMs: number
  /** Attempts of one delivery before it is given up (`failed`). */
  readonly maxAttempts: number
  /** Wait before attempt n+1: `retryBaseMs · 2^(n-1)`, at most `retryMaxMs` (a receiver's `Retry-After` is heeded within it). */
  readonly retryBaseMs: number
  readonly retryMaxMs: number
  /** How often the worker looks for due deliveries (it is also woken when a change writes some); 0: no worker on this replica. */
  readonly pollIntervalMs: number
}

export const DEFAULT_PUSH_DELIVERY_OPTIONS: PushDeliveryOptions = Object.freeze({
  timeoutMs: 10_000,
  maxAttempts: 8,
  retryBaseMs: 1_000,
  retryMaxMs: 300_000,
  pollIntervalMs: 1_000,
})

/** The header carrying a delivery's signature (a JWT by the node's agent-card key). */
export const PUSH_SIGNATURE_HEADER = 'A2A-Notification-Signature'
/** The header carrying a config's `token` (the name a2a-js uses). */
export const PUSH_TOKEN_HEADER = 'X-A2A-Notification-Token'
/** Deliveries claimed per pass. */
const BATCH = 16
/** How long a delivery's signature is valid. */
const SIGNATURE_TTL_SECONDS = 300
/** Finished deliveries are kept this long (for operators), then deleted. */
const RETENTION_SECONDS = 86_400

export interface PushDeliveryDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
  readonly guard: PushTargetGuard
  readonly fetch: typeof globalThis.fetch
  /** The key deliveries are signed with, and its `kid` in the node's JWKS. */
  readonly signer: () => { readonly kid: string; readonly privateKey: KeyObject }
  /** `iss` of the signature (the node's public base URL) and where its JWKS is. */
  readonly issuer: string
  readonly jwksUrl: string
  readonly options?: Partial<PushDeliveryOptions>
  readonly logger?: Logger
}

/**
 * Delivers the outbox: claims due deliveries (each config's oldest pending one, so a config's events arrive in
 * order), POSTs each with its signature and the config's authentication, and records the outcome: delivered, a
 * retry at its backoff, or given up. Everything is in the database, so a restart (or another replica, once a
 * claim's lease has passed) carries on where this one stopped: at least once, never dropped.
 */
export class PushDeliveryWorker {
  readonly #deps: PushDeliveryDeps
  readonly #options: PushDeliveryOptions
  #logger: Logger
  #timer: NodeJS.Timeout | null = null
  #running: Promise<void> | null = null
  #started = false
  #again = false
  #purgedAt = 0

  constructor(deps: PushDeliveryDeps) {
    this.#deps = deps
    this.#options = { ...DEFAULT_PUSH_DELIVERY_OPTIONS, ...deps.options }
    this.#logger = deps.logger ?? silentLogger
  }

  /** Where the worker's warnings go (the server's logger, set when it starts the worker). */
  set logger(logger: Logger) {
    this.#logger = logger
  }

  /** Starts the loop (no-op when `pollIntervalMs` is 0 or already started). */
  start(): void {
    if (this.#started || this.#options.pollIntervalMs <= 0) return
    this.#started = true
    this.#schedule(0)
  }

  /** Stops the loop and waits for a pass in progress (its attempts are recorded; later ones wait in the database). */
  async stop(): Promise<void> {
    this.#started = false
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
    await this.#running
  }

  /** A change wrote deliveries: look now rather than at the next poll. */
  wake(): void {
    if (!this.#started) return
    if (this.#running) {
      this.#again = true
      return
    }
    this.#schedule(0)
  }

  #schedule(ms: number): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.#pass(), ms)
    this.#timer.unref()
  }

  #pass(): void {
    this.#timer = null
    if (!this.#started || this.#running) return
    this.#again = false
    this.#running = this.runDue()
      .then(
        (attempted) => {
          if (attempted >= BATCH) this.#again = true
        },
        (error: unknown) => this.#logger.error({ err: error }, 'push delivery pass failed'),
      )
      .finally(() => {
        this.#running = null
        if (this.#started) this.#schedule(this.#again ? 0 : this.#options.pollIntervalMs)
      })
  }

  /** One pass: claims the due deliveries and attempts them (different configs in parallel). How many were attempted. */
  async runDue(): Promise<number> {
    const now = this.#deps.clock.now()
    const owner = this.#deps.ids.shortId() + this.#deps.ids.shortId()
    // The lease outlives the attempts (parallel, each bounded by the timeout); past it another worker may retry them.
    const leaseUntil = now + (this.#options.timeoutMs * 2) / 1000 + 30
    const claimed = await this.#deps.store.transaction((repos) => repos.a2aV1Push.claimDue(owner, now, leaseUntil, BATCH))
    await Promise.all(claimed.map((delivery) => this.#attempt(delivery)))
    if (now - this.#purgedAt > 3600) {
      this.#purgedAt = now
      await this.#deps.store.transaction((repos) => repos.a2aV1Push.purgeFinished(now - RETENTION_SECONDS))
    }
    return claimed.length
  }

  async #attempt(delivery: ClaimedDelivery): Promise<void> {
    const outcome = await this.#send(delivery)
    if (outcome.kind !== 'delivered') {
      this.#logger.warn(
        {
          delivery: delivery.id,
          task: delivery.a2aTaskId,
          config: delivery.configId,
          attempt: delivery.attempts + 1,
          outcome: outcome.kind,
          error: outcome.error,
        },
        'push delivery attempt failed',
      )
    }
    await this.#deps.store.transaction((repos) => repos.a2aV1Push.finishAttempt(delivery.seq, delivery.leaseOwner, outcome))
  }

  async #send(delivery: ClaimedDelivery): Promise<DeliveryOutcome> {
    const config = await this.#deps.store.repos.a2aV1Push.getConfig(delivery.tenantId, delivery.a2aTaskId, delivery.configId)
    const at = () => this.#deps.clock.now()
    if (!config) return { kind: 'failed', at: at(), error: 'the push notification config was deleted' }
    const target = await this.#deps.guard.check(config.url)
    // A name that does not resolve now may resolve later (DNS outage): retried. An internal target is final.
    if (!target.ok && target.code === 'unresolvable') return this.#retry(delivery, target.detail, null)
    if (!target.ok) return { kind: 'failed', at: at(), error: `refused by the SSRF guard: ${target.detail}` }
    const iat = Math.floor(at())
    const signature = await signPushJwt(
      delivery.body,
      { iss: this.#deps.issuer, aud: config.url, jti: delivery.id, taskId: delivery.a2aTaskId, iat, exp: iat + SIGNATURE_TTL_SECONDS },
      this.#deps.signer(),
      this.#deps.jwksUrl,
    )
    const headers: Record<string, string> = { 'Content-Type': 'application/a2a+json', [PUSH_SIGNATURE_HEADER]: signature }
    if (config.authScheme !== null) headers['Authorization'] = `${config.authScheme} ${config.authCredentials ?? ''}`.trimEnd()
    if (config.token !== null) headers[PUSH_TOKEN_HEADER] = config.token
    let status: number
    let retryAfter: string | null
    try {
      const response = await this.#deps.fetch(target.value, {
        method: 'POST',
        headers,
        body: delivery.body,
        // Never followed: a redirect could lead anywhere, the guard's checks included.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.#options.timeoutMs),
      })
      status = response.status
      retryAfter = response.headers.get('retry-after')
      await response.body?.cancel().catch(() => {})
    } catch (error) {
      return this.#retry(
        delivery,
        `no answer: ${(error as Error).name === 'TimeoutError' ? `timed out after ${this.#options.timeoutMs} ms` : String((error as Error).message)}`,
        null,
      )
    }
    if (status >= 200 && status < 300) return { kind: 'delivered', at: at() }
    if (status >= 300 && status < 400) return { kind: 'failed', at: at(), error: `the receiver answered ${status} (redirects are not followed)` }
    if (!isRetryableStatus(status)) return { kind: 'failed', at: at(), error: `the receiver answered ${status}` }
    return this.#retry(delivery, `the receiver answered ${status}`, retryAfter)
  }

  #retry(delivery: ClaimedDelivery, error: string, retryAfter: string | null): DeliveryOutcome {
    const now = this.#deps.clock.now()
    const attempts = delivery.attempts + 1
    if (attempts >= this.#options.maxAttempts) return { kind: 'failed', at: now, error: `${error}; gave up after ${attempts} attempts` }
    const backoff = Math.min(this.#options.retryMaxMs, this.#options.retryBaseMs * 2 ** (attempts - 1))
    const asked = retryAfterMs(retryAfter, now * 1000)
    const waitMs = asked === null ? backoff : Math.min(this.#options.retryMaxMs, Math.max(backoff, asked))
    return { kind: 'retry', at: now, nextAttemptAt: now + waitMs / 1000, error }
  }
}
