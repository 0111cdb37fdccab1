import type { Schema } from '../contract.js'
import type { Clock } from '../runtime.js'
import { STORAGE_RETRY_AFTER_S } from '../store/storage-fault.js'
import type { Store } from '../store/store.js'

export type HealthReport = Readonly<Schema<'HealthResponse'>>

export interface Readiness {
  readonly ready: boolean
  readonly reason: string
}

export interface HealthOptions {
  /** How long one database check answers readiness probes (BERNSTEIN_READINESS_CACHE_MS); 0 checks on every probe. */
  readonly readinessCacheMs?: number
}

/** Default of {@link HealthOptions.readinessCacheMs}. */
export const DEFAULT_READINESS_CACHE_MS = 1000

/**
 * Health and readiness. Never throws: a database failure is reported, not raised.
 *
 * Readiness is red while the node drains (`markDraining`, for good), while storage faults are being met (disk full,
 * I/O error, read-only storage: from the last one until {@link STORAGE_RETRY_AFTER_S} seconds have passed without
 * another), and while the database does not answer. The database is asked at most once per `readinessCacheMs`
 * however many probes arrive, so a probe costs at most one `select 1` per interval. The report reads the counts the
 * database keeps on write (`row_counts`): a few rows whatever the number of tasks.
 */
export class HealthService {
  readonly #store: Store
  readonly #clock: Clock
  readonly #startedAt: number
  readonly #cacheS: number
  #draining = false
  #storageFault: { readonly reason: string; readonly at: number } | null = null
  #database: { readonly readiness: Readiness; readonly at: number } | null = null
  #checking: Promise<Readiness> | null = null

  constructor(store: Store, clock: Clock, options: HealthOptions = {}) {
    this.#store = store
    this.#clock = clock
    this.#startedAt = clock.now()
    this.#cacheS = (options.readinessCacheMs ?? DEFAULT_READINESS_CACHE_MS) / 1000
    store.observeStorage((reason) => {
      this.#storageFault = { reason, at: this.#clock.now() }
    })
  }

  /** The node is shutting down: readiness is red from now on, so load balancers stop sending it new requests. */
  markDraining(): void {
    this.#draining = true
  }

  get draining(): boolean {
    return this.#draining
  }

  async readiness(): Promise<Readiness> {
    if (this.#draining) return { ready: false, reason: 'draining: the node is shutting down' }
    const now = this.#clock.now()
    const fault = this.#storageFault
    if (fault !== null) {
      if (now - fault.at < STORAGE_RETRY_AFTER_S) return { ready: false, reason: `storage unavailable: ${fault.reason}` }
      this.#storageFault = null
    }
    const cached = this.#database
    if (cached !== null && now - cached.at < this.#cacheS && now >= cached.at) return cached.readiness
    this.#checking ??= this.#checkDatabase().finally(() => {
      this.#checking = null
    })
    return this.#checking
  }

  async #checkDatabase(): Promise<Readiness> {
    let readiness: Readiness
    try {
      await this.#store.ping()
      readiness = { ready: true, reason: 'database reachable' }
    } catch (error) {
      readiness = { ready: false, reason: `database unreachable: ${(error as Error).message}` }
    }
    this.#database = { readiness, at: this.#clock.now() }
    return readiness
  }

  async report(): Promise<HealthReport> {
    const base = {
      uptime_s: Math.round((this.#clock.now() - this.#startedAt) * 1000) / 1000,
      memory_mb: Math.round((process.memoryUsage.rss() / 1_048_576) * 10) / 10,
      restart_count: 0,
      is_readonly: false,
    }
    try {
      const counts = await this.#store.repos.tasks.countedByStatus()
      const total = [...counts.values()].reduce((a, b) => a + b, 0)
      const fault = this.#storageFault !== null && this.#clock.now() - this.#storageFault.at < STORAGE_RETRY_AFTER_S ? this.#storageFault : null
      return {
        status: fault === null ? 'ok' : 'degraded',
        ...base,
        task_count: total,
        agent_count: await this.#store.repos.a2a.countPeers(),
        task_queue_depth: counts.get('open') ?? 0,
        components: { database: fault === null ? 'ok' : `error: storage unavailable: ${fault.reason}`, engine: this.#store.engine },
      }
    } catch (error) {
      return {
        status: 'degraded',
        ...base,
        task_count: 0,
        agent_count: 0,
        task_queue_depth: 0,
        components: { database: `error: ${(error as Error).message}`, engine: this.#store.engine },
      }
    }
  }
}
