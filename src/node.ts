/**
 * The one place a node is built from its configuration: the database (migrated), the audit key, the signing keys,
 * the published identity, the receipt attestor, the metrics and the domain services. The server (`startServer`)
 * puts HTTP in front of it; the CLI's commands use it without HTTP.
 *
 * @module
 */
import { ReceiptAttestor } from './receipts/receipt-attestor.js'
import { type Config, defaultPublicBaseUrl } from './config.js'
import { PrometheusMetrics } from './http/prometheus-metrics.js'
import { NodeIdentity, type NodeProfile } from './identity/node-identity.js'
import { type NodeKeys, loadNodeKeys, nodeJwks } from './identity/node-keys.js'
import { DEFAULT_RETRY_POLICY } from './federation/peer-fetch.js'
import { ensureAuditKey } from './lineage/audit-key.js'
import { ChainCheckpoints } from './lineage/checkpoints.js'
import { HomeShards, homeIds } from './lineage/partitions.js'
import { type Logger, silentLogger } from './logger.js'
import { systemIds, systemClock } from './runtime.js'
import { type Services, createServices } from './services.js'
import { type Connection, connect, databaseOptions, migrateToLatest, pendingMigrations } from './store/connect.js'
import { Store } from './store/store.js'
import { packageVersion } from './version.js'
import { ConformanceAgent } from './a2a-v1/executor/conformance-agent.js'

/** The node cannot start as configured (e.g. migrations pending with BERNSTEIN_MIGRATE_ON_START=0, a port in use). */
export class StartupError extends Error {
  override readonly name = 'StartupError'
}

/** What to do about migrations not yet applied: apply them, or refuse to open (BERNSTEIN_MIGRATE_ON_START=0). */
export type MigrationPolicy = 'apply' | 'refuse-pending'

export interface OpenStoreOptions {
  /** Default `apply`. */
  readonly migrations?: MigrationPolicy
  /** Told which migrations were applied. */
  readonly logger?: Logger
}

export interface OpenNodeOptions extends OpenStoreOptions {
  /**
   * The port the server bound. The node advertises it (agent card `url`, sender card `endpoint`) when
   * BERNSTEIN_PUBLIC_BASE_URL is unset; without it, the configured port (with BERNSTEIN_PORT=0 that names port 0,
   * which `delegate` refuses).
   */
  readonly boundPort?: number
  /** A `--peer-token` given for one CLI run: presented to every peer instead of BERNSTEIN_PEER_TOKEN(S); never stored. */
  readonly peerToken?: string | null
}

export interface Node {
  readonly config: Config
  readonly connection: Connection
  readonly store: Store
  /** The operator HMAC key of the tracker-audit chain (the ASCII bytes of `audit.key`). */
  readonly auditKey: Buffer
  readonly keys: NodeKeys
  readonly publicBaseUrl: string
  readonly identity: NodeIdentity
  readonly attestor: ReceiptAttestor
  /** This process's metrics (Node's process metrics and the signatures made and checked). */
  readonly metrics: PrometheusMetrics
  readonly services: Services
  /** Signed checkpoints of the chain partitions, and the verification of the whole node (docs/scaling.md). */
  readonly checkpoints: ChainCheckpoints
  /** The shards new task ids are drawn in: all, until the server ranks this replica among others (replica-slot.ts). */
  readonly home: HomeShards
  /** Closes the database. */
  close(): Promise<void>
}

/** This node's published profile; `publicBaseUrl` is the configured one or, when unset, derived from the bound address. */
export function nodeProfile(config: Config, publicBaseUrl: string): NodeProfile {
  return {
    issuer: config.issuer,
    name: 'bernstein-orchestrator',
    description: 'Bernstein, a deterministic orchestrator for CLI coding agents',
    tools: ['task_orchestration', 'agent_spawning', 'code_review', 'a2a_message'],
    policies: { ...config.cardPolicies },
    publicBaseUrl,
    version: packageVersion(),
    cardTtlSeconds: 86_400,
    renewBeforeSeconds: 300,
  }
}

/**
 * The token to present to a peer: `explicit` (a `--peer-token` given for one CLI run) for every peer, else a per-URL
 * one from BERNSTEIN_PEER_TOKENS, else BERNSTEIN_PEER_TOKEN.
 */
export function peerTokenResolver(config: Config, explicit: string | null = null): (peerUrl: string) => string | null {
  return (peerUrl) => explicit ?? config.peerTokens[peerUrl.replace(/\/+$/, '')] ?? config.peerToken
}

async function prepareSchema(connection: Connection, policy: MigrationPolicy, logger: Logger): Promise<void> {
  if (policy === 'apply') {
    const migrated = await migrateToLatest(connection)
    if (migrated.error) throw migrated.error
    const applied = (migrated.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
    if (applied.length > 0) logger.info({ applied }, `applied ${applied.length} migration(s)`)
    return
  }
  const pending = await pendingMigrations(connection)
  if (pending.length > 0) {
    throw new StartupError(
      `${pending.length} database migration(s) pending (${pending.join(', ')}) and BERNSTEIN_MIGRATE_ON_START=0: ` +
        'run `bernstein-a2a db migrate` with the same DATABASE_URL first, then start the server',
    )
  }
}

/**
 * Opens the node's database (the data dir's SQLite file, or DATABASE_URL) at the latest schema, without keys: for
 * commands that only read or write its state (tokens, the lineage chain).
 */
export async function openNodeStore(config: Config, options: OpenStoreOptions = {}): Promise<{ connection: Connection; store: Store }> {
  const connection = connect(databaseOptions(config))
  try {
    await prepareSchema(connection, options.migrations ?? 'apply', options.logger ?? silentLogger)
  } catch (error) {
    await connection.close()
    throw error
  }
  return { connection, store: new Store(connection) }
}

/** Opens the node: its database, keys (created 0600 at first use, as the audit key), identity and services. */
export async function openNode(config: Config, options: OpenNodeOptions = {}): Promise<Node> {
  const { connection, store } = await openNodeStore(config, options)
  try {
    const auditKey = ensureAuditKey(config.auditKeyPath)
    const keys = await loadNodeKeys(config.dataDir)
    const metrics = PrometheusMetrics.forProcess()
    const attestor = new ReceiptAttestor({ key: keys.receipt, masterKey: auditKey, clock: systemClock, metrics, partitions: config.chains })
    const home = new HomeShards(config.chains.shards)
    const publicBaseUrl = config.publicBaseUrl ?? defaultPublicBaseUrl(config.host, options.boundPort ?? config.port)
    const identity = new NodeIdentity(store, keys, nodeProfile(config, publicBaseUrl), systemClock, metrics)
    const services = createServices({
      store,
      auditKey,
      issuer: config.issuer,
      ids: homeIds(systemIds, home),
      identity,
      publicBaseUrl,
      attestor,
      metrics,
      health: { readinessCacheMs: config.readinessCacheMs },
      inboundTrust: { trustedPeerFingerprints: config.trustedPeerFingerprints, requirements: config.peerRequirements, strictLineage: config.lineageStrict },
      peerSignatures: {
        requireInbound: config.requirePeerSignature,
        windowSeconds: config.peerSignatureWindowSeconds,
        targetBase: config.publicBaseUrl,
        allowUnsignedPeers: config.allowUnsignedPeers,
      },
      federation: {
        peerToken: peerTokenResolver(config, options.peerToken ?? null),
        retry: { ...DEFAULT_RETRY_POLICY, timeoutMs: config.peerTimeoutMs, maxAnswerBytes: config.peerMaxAnswerBytes },
      },
      a2aV1: { blockingTimeoutMs: config.a2aBlockingTimeoutMs },
      chainPartitions: config.chains,
      ...(config.a2aConformanceAgent && {
        a2aV1Executor: new ConformanceAgent(),
        onExecutorError: (error: unknown, taskId: string) =>
          (options.logger ?? silentLogger).error({ err: error, taskId }, 'the A2A v1 conformance agent failed'),
      }),
      a2aV1Streams: config.a2aStreams,
      a2aV1Push: config.a2aPush,
    })
    const checkpoints = new ChainCheckpoints({
      store,
      issuer: config.issuer,
      clock: systemClock,
      ids: systemIds,
      key: keys.receipt,
      jwks: () => nodeJwks(keys),
      auditKey,
    })
    return { config, connection, store, auditKey, keys, publicBaseUrl, identity, attestor, metrics, services, checkpoints, home, close: () => store.close() }
  } catch (error) {
    await store.close()
    throw error
  }
}
