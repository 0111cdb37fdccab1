import type { Server } from 'node:http'
import { type App, createApp } from './app.js'
import { resolveOperatorToken, secretsEqual } from './auth/operator-token.js'
import type { Config } from './config.js'
import type { TokenIdentity } from './http/caller.js'
import type { Logger } from './logger.js'
import { RateLimiterMemory } from 'rate-limiter-flexible'
import type { Bucket, BucketLimiter } from './http/rate-limit.js'
import { randomIds, systemClock } from './runtime.js'
import { connect, migrateToLatest } from './store/connect.js'
import { ensureAuditKey } from './lineage/audit-key.js'
import { ReceiptAttestor } from './attestation/receipt-attestor.js'
import { NodeIdentity, type NodeProfile } from './identity/node-identity.js'
import { loadNodeKeys } from './identity/node-keys.js'
import { packageVersion } from './version.js'
import { TokenService } from './tokens/token.service.js'
import { Store } from './store/store.js'
import { PrometheusMetrics } from './http/metrics.js'

export interface RunningServer {
  readonly url: string
  readonly app: App
  readonly store: Store
  /** Stops accepting connections, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>
}

export function nodeProfile(config: Config): NodeProfile {
  return {
    issuer: config.issuer,
    name: 'bernstein-orchestrator',
    description: 'Bernstein, a deterministic orchestrator for CLI coding agents',
    tools: ['task_orchestration', 'agent_spawning', 'code_review', 'a2a_message'],
    policies: { ...config.cardPolicies },
    publicBaseUrl: config.publicBaseUrl,
    version: packageVersion(),
    cardTtlSeconds: 86_400,
    renewBeforeSeconds: 300,
  }
}

/** The token to present to a peer: a per-URL one from BERNSTEIN_PEER_TOKENS, else BERNSTEIN_PEER_TOKEN. */
export function peerTokenResolver(config: Config): (peerUrl: string) => string | null {
  return (peerUrl) => config.peerTokens[peerUrl.replace(/\/+$/, '')] ?? config.peerToken
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

function rateLimiters(config: Config): Partial<Record<Bucket, BucketLimiter>> {
  const limiters: Partial<Record<Bucket, BucketLimiter>> = {}
  if (config.rateLimitWritePerMin > 0) limiters.default_write = new RateLimiterMemory({ keyPrefix: 'default_write', points: config.rateLimitWritePerMin, duration: 60 })
  if (config.rateLimitReadPerMin > 0) limiters.default_read = new RateLimiterMemory({ keyPrefix: 'default_read', points: config.rateLimitReadPerMin, duration: 60 })
  return limiters
}

/**
 * The composition root: builds real dependencies from the configuration, migrates, and listens. Everything
 * below it receives its dependencies; only this module and the CLI touch the process.
 */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const connection = connect({ url: config.databaseUrl, dataDir: config.dataDir, sqliteSynchronous: config.sqliteSynchronous })
  const migrated = await migrateToLatest(connection)
  if (migrated.error) {
    await connection.close()
    throw migrated.error
  }
  const store = new Store(connection)

  let resolveToken: ((token: string) => Promise<TokenIdentity | null>) | null = null
  if (config.authDisabled) {
    logger.warn({}, 'AUTHENTICATION IS DISABLED (BERNSTEIN_AUTH_DISABLED): every request passes as the operator. Never expose this server.')
  } else {
    const operator = resolveOperatorToken(config.authToken, config.dataDir)
    if (operator.file) logger.info({ file: operator.file, created: operator.created }, `operator token is in ${operator.file}`)
    const tokens = new TokenService(store, systemClock, randomIds)
    const metricsToken = config.metricsToken
    resolveToken = async (token) => {
      if (secretsEqual(token, operator.token)) return { role: 'operator', tokenId: null, tenantId: null }
      if (metricsToken !== null && secretsEqual(token, metricsToken)) return { role: 'metrics', tokenId: 'metrics-token', tenantId: null }
      return tokens.resolve(token)
    }
  }

  const auditKey = ensureAuditKey(config.auditKeyPath)
  const keys = await loadNodeKeys(config.dataDir)
  const metrics = PrometheusMetrics.forProcess()
  const attestor = new ReceiptAttestor({ key: keys.receipt, masterKey: auditKey, clock: systemClock, metrics })
  const identity = new NodeIdentity(store, keys, nodeProfile(config), systemClock, metrics)
  const app = createApp({
    store,
    auditKey,
    issuer: config.issuer,
    attestor,
    identity,
    publicBaseUrl: config.publicBaseUrl,
    resolveToken,
    validateResponses: config.validateResponses,
    logger,
    network: { allowedIps: config.allowedIps, trustedProxyIps: config.trustedProxyIps },
    rateLimiters: rateLimiters(config),
    rateLimitLoopback: config.rateLimitLoopback,
    metricsRegistry: metrics.registry,
    inboundTrust: { trustedPeerFingerprints: config.trustedPeerFingerprints, requirements: config.peerRequirements, strictLineage: config.lineageStrict },
    federation: { peerToken: peerTokenResolver(config) },
  })
  const follower = startFollower(app, config.federationPollMs, logger)
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.express.listen(config.port, config.host, () => resolve(s))
    s.once('error', reject)
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  return {
    url: `http://${host}:${port}`,
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
