import type { Schema } from '../contract.js'
import type { Clock } from '../runtime.js'
import type { Store } from '../store/store.js'

export type HealthReport = Readonly<Schema<'HealthResponse'>>

export interface Readiness {
  readonly ready: boolean
  readonly reason: string
}

/** Health and readiness. Never throws: a database failure is reported, not raised. */
export class HealthService {
  readonly #store: Store
  readonly #clock: Clock
  readonly #startedAt: number
  #draining = false

  constructor(store: Store, clock: Clock) {
    this.#store = store
    this.#clock = clock
    this.#startedAt = clock.now()
  }

  /** The node is shutting down (SIGTERM): readiness is red from now on, whatever the database says. */
  markDraining(): void {
    this.#draining = true
  }

  async readiness(): Promise<Readiness> {
    if (this.#draining) return { ready: false, reason: 'draining' }
    try {
      await this.#store.ping()
      return { ready: true, reason: 'database reachable' }
    } catch (error) {
      return { ready: false, reason: `database unreachable: ${(error as Error).message}` }
    }
  }

  async report(): Promise<HealthReport> {
    const base = {
      uptime_s: Math.round((this.#clock.now() - this.#startedAt) * 1000) / 1000,
      memory_mb: Math.round((process.memoryUsage().rss / 1_048_576) * 10) / 10,
      restart_count: 0,
      is_readonly: false,
    }
    try {
      const counts = await this.#store.repos.tasks.countByStatus()
      const total = [...counts.values()].reduce((a, b) => a + b, 0)
      return {
        status: 'ok',
        ...base,
        task_count: total,
        agent_count: await this.#store.repos.a2a.countPeers(),
        task_queue_depth: counts.get('open') ?? 0,
        components: { database: 'ok', engine: this.#store.engine },
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
