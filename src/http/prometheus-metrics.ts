import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { TRACKER_AUDIT_CHAIN } from '../lineage/audit-trail.js'
import type { HomeShards } from '../lineage/partitions.js'
import { RECEIPT_SPINE_CHAIN } from '../receipts/receipt-attestor.js'
import type { Metrics, SignatureKind } from '../signature-metrics.js'
import type { Store } from '../store/store.js'
import { TASK_STATUSES } from '../tasks/task.js'
import type { RequestRecord } from './request-log.js'
import { type RouteDefinition, route } from './route.js'

/** Seconds; spans a cached JWKS read (sub-millisecond) to a slow PostgreSQL transaction. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Seconds a transaction holds a chain partition's head (docs/scaling.md): 20 µs to a second. */
const HOLD_BUCKETS = [0.00002, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

/** Chains whose length is exported (all partitions summed), by label. */
const CHAINS: Readonly<Record<string, string>> = { 'tracker-audit': TRACKER_AUDIT_CHAIN, 'receipt-spine': RECEIPT_SPINE_CHAIN }

/** Gets the metric a registry already holds under `name`, or registers a new one (idempotent per registry). */
function once<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make()
}

/**
 * The Prometheus side of {@link Metrics}, on an injected registry (never prom-client's global one, so tests can
 * build many apps). Calling it twice with the same registry returns hooks over the same series, which lets the
 * server hand them to the signers before the app exists.
 */
export class PrometheusMetrics implements Metrics {
  readonly registry: Registry
  readonly #requests: Counter<'operation_id' | 'method' | 'status'>
  readonly #latency: Histogram<'operation_id'>
  readonly #signed: Counter<'kind'>
  readonly #verified: Counter<'kind' | 'result'>

  /** A registry of its own (prom-client's default one is global to the process). */
  static newRegistry(): Registry {
    return new Registry()
  }

  /** The server's registry: a fresh one with Node's process metrics (CPU, memory, event loop, handles). */
  static forProcess(): PrometheusMetrics {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    return new PrometheusMetrics(registry)
  }

  constructor(registry: Registry) {
    this.registry = registry
    const registers = [registry]
    this.#requests = once(
      registry,
      'bernstein_http_requests_total',
      () =>
        new Counter({
          name: 'bernstein_http_requests_total',
          help: 'HTTP requests by operationId and status',
          labelNames: ['operation_id', 'method', 'status'],
          registers,
        }),
    )
    this.#latency = once(
      registry,
      'bernstein_http_request_duration_seconds',
      () =>
        new Histogram({
          name: 'bernstein_http_request_duration_seconds',
          help: 'HTTP request latency by operationId',
          labelNames: ['operation_id'],
          buckets: LATENCY_BUCKETS,
          registers,
        }),
    )
    this.#signed = once(
      registry,
      'bernstein_signatures_made_total',
      () =>
        new Counter({
          name: 'bernstein_signatures_made_total',
          help: 'Ed25519 signatures made (receipts, capability cards, agent cards)',
          labelNames: ['kind'],
          registers,
        }),
    )
    this.#verified = once(
      registry,
      'bernstein_signatures_verified_total',
      () => new Counter({ name: 'bernstein_signatures_verified_total', help: 'Signatures verified, by verdict', labelNames: ['kind', 'result'], registers }),
    )
  }

  signatureMade(kind: SignatureKind): void {
    this.#signed.inc({ kind })
  }

  signatureVerified(kind: SignatureKind, valid: boolean): void {
    this.#verified.inc({ kind, result: valid ? 'valid' : 'invalid' })
  }

  /** Counts a finished request; paths outside the contract share the `unknown` label so cardinality stays bounded. */
  observeRequest(record: RequestRecord): void {
    const operationId = record.operationId ?? 'unknown'
    this.#requests.inc({ operation_id: operationId, method: record.method, status: String(record.status) })
    this.#latency.observe({ operation_id: operationId }, record.durationMs / 1000)
  }

  /** The writes in flight (BERNSTEIN_MAX_WRITES_IN_FLIGHT sheds past its limit), read at scrape time. */
  observeWritesInFlight(read: () => number): void {
    this.registry.removeSingleMetric('bernstein_http_writes_in_flight')
    new Gauge({
      name: 'bernstein_http_writes_in_flight',
      help: 'Write requests admitted and not yet answered (load shedding answers 503 past BERNSTEIN_MAX_WRITES_IN_FLIGHT)',
      registers: [this.registry],
      collect() {
        this.set(read())
      },
    })
  }

  /** This replica's share of the chain shards (docs/scaling.md, "Home shards"), read at scrape time. */
  observeHomeShards(home: HomeShards): void {
    for (const name of ['bernstein_replicas', 'bernstein_home_shards']) this.registry.removeSingleMetric(name)
    new Gauge({
      name: 'bernstein_replicas',
      help: 'Replicas of this deployment live on its PostgreSQL, as this one last counted them (1 when not counted)',
      registers: [this.registry],
      collect() {
        this.set(home.assignment.replicas)
      },
    })
    new Gauge({
      name: 'bernstein_home_shards',
      help: 'Shards per tenant this replica draws new task ids in, of BERNSTEIN_CHAIN_SHARDS',
      registers: [this.registry],
      collect() {
        let owned = 0
        for (let shard = 0; shard < home.shards; shard++) if (home.owns(shard)) owned++
        this.set(owned)
      },
    })
  }

  /**
   * Gauges read from the store at scrape time: tasks by status (all tenants) and the length of the tracker-audit
   * chain and the receipt spine. Replaces gauges of an earlier store on the same registry.
   */
  observeStore(store: Store): void {
    for (const name of ['bernstein_tasks', 'bernstein_chain_length']) this.registry.removeSingleMetric(name)
    const faults = once(
      this.registry,
      'bernstein_storage_faults_total',
      () =>
        new Counter({
          name: 'bernstein_storage_faults_total',
          help: 'Writes refused with 503 because the storage could not keep them (disk full, I/O error, read-only), by reason',
          labelNames: ['reason'],
          registers: [this.registry],
        }),
    )
    store.observeStorage((reason) => faults.inc({ reason }))
    const hold = once(
      this.registry,
      'bernstein_chain_lock_hold_seconds',
      () =>
        new Histogram({
          name: 'bernstein_chain_lock_hold_seconds',
          help: 'Per write: from taking a chain partition head (lock) to COMMIT returned (the serialised section, docs/scaling.md)',
          buckets: HOLD_BUCKETS,
          registers: [this.registry],
        }),
    )
    store.observeChainHold((seconds) => hold.observe(seconds))
    new Gauge({
      name: 'bernstein_tasks',
      help: 'Tasks by status (all tenants), read from the database at scrape time',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const counts = await store.repos.tasks.countedByStatus()
        for (const status of TASK_STATUSES) this.set({ status }, counts.get(status) ?? 0)
      },
    })
    new Gauge({
      name: 'bernstein_chain_length',
      help: 'Entries in the tracker-audit chain and the receipt spine, all partitions (chain_heads)',
      labelNames: ['chain'],
      registers: [this.registry],
      async collect() {
        for (const [label, chain] of Object.entries(CHAINS)) {
          this.set(
            { chain: label },
            (await store.repos.chains.heads(chain)).reduce((sum, head) => sum + head.length, 0),
          )
        }
      },
    })
  }
}

/** `GET /metrics`: the registry in Prometheus' text format (who may read it is decided by auth/authorize). */
export function metricsRoutes(metrics: PrometheusMetrics): RouteDefinition[] {
  return [
    route('getMetrics', 'get', '/metrics', async () => ({ status: 200, raw: await metrics.registry.metrics(), contentType: metrics.registry.contentType })),
  ]
}
