import type { Server } from 'node:http'
import { type App, createApp } from './app.js'
import { createHttpServer } from './http/http-server.js'
import { resolveOperatorToken, secretMatcher } from './auth/operator-token.js'
import { type Config, defaultPublicBaseUrl } from './config.js'
import type { TokenResolver } from './auth/caller.js'
import type { Logger } from './logger.js'
import { RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible'
import type { Bucket, BucketLimiter } from './http/rate-limit.js'
import { randomIds, systemClock } from './runtime.js'
import { type Connection, connect, databaseOptions, migrateToLatest, pendingMigrations } from './store/connect.js'
import { ensureAuditKey } from './lineage/audit-key.js'
import { ReceiptAttestor } from './receipts/receipt-attestor.js'
import { NodeIdentity, type NodeProfile } from './identity/node-identity.js'
import { loadNodeKeys } from './identity/node-keys.js'
import { packageVersion } from './version.js'
import { TokenService } from './auth/token.service.js'
import { Store } from './store/store.js'
import { PrometheusMetrics } from './http/prometheus-metrics.js'

export interface RunningServer {
  readonly url: string
  readonly app: App
  readonly store: Store
  /** Stops accepting connections, lets in-flight requests finish, then closes the database. */
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

/** Binds `server` and resolves with the port actually bound (the chosen one when `port` is 0). */
function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const address = server.address()
      resolve(typeof address === 'object' && address ? address.port : port)
    })
  })
}

/**
 * Follows delegated tasks in the background: one pass at a time (never overlapping), each delegation at its own
 * backoff. `stop` waits for a pass in progress to finish.
 */
function startFollower(app: App, intervalMs: number, logger: Logger): { stop(): Promise<void> } {
  if (intervalMs <= 0) return { stop: async () => {} }
  let running: Promise<void> | null = null
  const timer = setInterval(() => {
    if (running) return
    running = app.services.delegation
      .syncDue()
      .then(
        (settled) => {
          for (const d of settled) if (d.status === 'completed' || d.status === 'failed') logger.info({ delegation: d.id, status: d.status }, 'delegation settled')
        },
        (error: unknown) => logger.error({ err: error }, 'federation follower pass failed'),
      )
      .finally(() => {
        running = null
      })
  }, intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}

/** The table the PostgreSQL limiter store keeps its counters in (created by rate-limiter-flexible on first use). */
export const RATE_LIMIT_TABLE = 'rate_limits'

/** A limiter whose counters live in PostgreSQL, once its table exists; a memory limiter covers store outages. */
function postgresLimiter(pool: object, keyPrefix: string, points: number): Promise<BucketLimiter> {
  return new Promise((resolve, reject) => {
    const limiter: RateLimiterPostgres = new RateLimiterPostgres(
      {
        storeClient: pool,
        storeType: 'pool',
        tableName: RATE_LIMIT_TABLE,
        keyPrefix,
        points,
        duration: 60,
        // While the database is unreachable each replica counts on its own rather than not at all.
        insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: 60 }),
      },
      (error?: unknown) => (error ? reject(error) : resolve(limiter)),
    )
  })
}

/**
 * The per-client limiters. On PostgreSQL their counters are shared by every replica (one budget per client
 * however requests are balanced); on SQLite, a single process, they are in memory.
 */
export async function rateLimiters(
  limits: Pick<Config, 'rateLimitWritePerMin' | 'rateLimitReadPerMin'>,
  connection: Pick<Connection, 'sharedPool'>,
): Promise<Partial<Record<Bucket, BucketLimiter>>> {
  const make = (keyPrefix: Bucket, points: number): Promise<BucketLimiter> =>
    connection.sharedPool ? postgresLimiter(connection.sharedPool, keyPrefix, points) : Promise.resolve(new RateLimiterMemory({ keyPrefix, points, duration: 60 }))
  const limiters: Partial<Record<Bucket, BucketLimiter>> = {}
  if (limits.rateLimitWritePerMin > 0) limiters.default_write = await make('default_write', limits.rateLimitWritePerMin)
  if (limits.rateLimitReadPerMin > 0) limiters.default_read = await make('default_read', limits.rateLimitReadPerMin)
  return limiters
}

/** The server cannot start as configured (e.g. migrations pending with BERNSTEIN_MIGRATE_ON_START=0). */
export class StartupError extends Error {
  override readonly name = 'StartupError'
}

async function prepareSchema(connection: Connection, migrateOnStart: boolean, logger: Logger): Promise<void> {
  if (migrateOnStart) {
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
 * The composition root: builds real dependencies from the configuration, migrates, and listens. Everything
 * below it receives its dependencies; only this module and the CLI touch the process.
 */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const connection = connect(databaseOptions(config))
  let limiters: Partial<Record<Bucket, BucketLimiter>>
  try {
    await prepareSchema(connection, config.migrateOnStart, logger)
    limiters = await rateLimiters(config, connection)
  } catch (error) {
    await connection.close()
    throw error
  }
  const store = new Store(connection)

  let resolveToken: TokenResolver | null = null
  if (config.authDisabled) {
    logger.warn({}, 'AUTHENTICATION IS DISABLED (BERNSTEIN_AUTH_DISABLED): every request passes as the operator. Never expose this server.')
  } else {
    const operator = resolveOperatorToken(config.authToken, config.dataDir)
    if (operator.file) logger.info({ file: operator.file, created: operator.created }, `operator token is in ${operator.file}`)
    const tokens = new TokenService(store, systemClock, randomIds)
    const metricsToken = config.metricsToken
    const isOperator = secretMatcher(operator.token)
    const isMetrics = metricsToken === null ? () => false : secretMatcher(metricsToken)
    resolveToken = (token) => {
      if (isOperator(token)) return { role: 'operator', tokenId: null, tenantId: null }
      if (isMetrics(token)) return { role: 'metrics', tokenId: 'metrics-token', tenantId: null }
      return tokens.resolve(token)
    }
  }

  const auditKey = ensureAuditKey(config.auditKeyPath)
  const keys = await loadNodeKeys(config.dataDir)
  const metrics = PrometheusMetrics.forProcess()
  const attestor = new ReceiptAttestor({ key: keys.receipt, masterKey: auditKey, clock: systemClock, metrics })

  // Bind first, with no handler yet: the URL the node advertises (agent card `url`, legacy card `endpoint`, sender
  // card `endpoint`) must name the port actually bound, which BERNSTEIN_PORT=0 only tells after listening. Nothing
  // is signed before this point (the agent card is signed on first request, from the profile below), and the app is
  // attached synchronously after `listen` resolves, before any connection can be dispatched.
  const server = createHttpServer()
  let boundPort: number
  try {
    boundPort = await listen(server, config.port, config.host)
  } catch (error) {
    await store.close()
    throw error
  }
  const publicBaseUrl = config.publicBaseUrl ?? defaultPublicBaseUrl(config.host, boundPort)
  const identity = new NodeIdentity(store, keys, nodeProfile(config, publicBaseUrl), systemClock, metrics)
  const app = createApp({
    store,
    auditKey,
    issuer: config.issuer,
    attestor,
    identity,
    publicBaseUrl,
    resolveToken,
    validateResponses: config.validateResponses,
    logger,
    network: { allowedIps: config.allowedIps, trustedProxyIps: config.trustedProxyIps },
    rateLimiters: limiters,
    rateLimitLoopback: config.rateLimitLoopback,
    metricsRegistry: metrics.registry,
    inboundTrust: { trustedPeerFingerprints: config.trustedPeerFingerprints, requirements: config.peerRequirements, strictLineage: config.lineageStrict },
    federation: { peerToken: peerTokenResolver(config) },
  })
  server.on('request', app.express)
  const follower = startFollower(app, config.federationPollMs, logger)
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  return {
    url: `http://${host}:${boundPort}`,
    app,
    store,
    async close() {
      await follower.stop()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
      })
      await store.close()
    },
  }
}
