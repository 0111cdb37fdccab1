import { startCheckpointing } from './lineage/checkpoints.js'
import { runPeriodically } from './periodic.js'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible'
import { type App, createApp } from './app.js'
import { resolveOperatorToken, secretMatcher } from './auth/operator-token.js'
import type { Config } from './config.js'
import type { TokenResolver } from './auth/caller.js'
import { createHttpServer } from './http/http-server.js'
import type { Bucket, BucketLimiter } from './http/rate-limit.js'
import type { Logger } from './logger.js'
import { type Node, StartupError, openNode } from './node.js'
import { systemIds, systemClock } from './runtime.js'
import type { Connection } from './store/connect.js'
import { replicaSlot } from './store/replica-slot.js'
import type { Store } from './store/store.js'
import { TokenService } from './auth/token.service.js'

export { StartupError } from './node.js'

/** A node serving HTTP, from {@link startServer}. */
export interface RunningServer {
  /** Where it listens, e.g. `http://127.0.0.1:8052` (the port actually bound when BERNSTEIN_PORT=0). */
  readonly url: string
  /** The application and the database it serves; for tests and tools of this repository, not a stable API. */
  readonly app: App
  readonly store: Store
  /**
   * Drains (docs/reliability.md) and closes the database: readiness red at once, every answer `Connection: close`,
   * connections still accepted for the grace period, then refused requests (503) and in-flight ones finished, all
   * within the shutdown timeout. Idempotent.
   */
  close(): Promise<void>
}

/** Where a drain is: the HTTP server and the app read it on every answer and request. */
interface DrainState {
  /** SIGTERM received: readiness red, every answer closes its connection. */
  closing: boolean
  /** The grace period is over: no more connections accepted, requests still arriving answered 503. */
  refusing: boolean
}

/** Readiness goes red and every answer from now on says `Connection: close`: the first step of a drain. */
export function markDraining(app: App, drain: DrainState): void {
  drain.closing = true
  app.services.health.markDraining()
  // Streams end cleanly now (their clients reconnect, with Last-Event-ID, to a replica that is not draining).
  app.streams.endAll()
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    if (ms <= 0) return resolve()
    setTimeout(resolve, ms).unref()
  })

/**
 * The drain: readiness red and `Connection: close` at once, the follower told to stop; connections accepted and
 * served for `shutdownGraceMs`; then the listener closed, idle connections closed and requests still arriving on
 * open ones refused (503 with Retry-After, where the operation documents it), until every connection is closed or
 * `shutdownTimeoutMs` after the start, when the rest are destroyed. Then the follower's pass in progress is awaited.
 */
async function drainServer(server: Server, app: App, drain: DrainState, follower: { stop(): Promise<void> }, limits: Config['http']): Promise<void> {
  const started = performance.now()
  markDraining(app, drain)
  const followerStopped = follower.stop()
  await sleep(limits.shutdownGraceMs)
  drain.refusing = true
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), Math.max(0, limits.shutdownTimeoutMs - (performance.now() - started)))
    force.unref()
    server.close(() => {
      clearTimeout(force)
      resolve()
    })
    server.closeIdleConnections()
  })
  await followerStopped
}

/** Why binding failed, with what to do, for the errors an operator fixes; null for anything else. */
function bindFailure(error: unknown, host: string, port: number): StartupError | null {
  const code = (error as NodeJS.ErrnoException | null)?.code
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
  if (code === 'EADDRINUSE') return new StartupError(`${where} is already in use: stop the process listening there, or choose another BERNSTEIN_PORT`)
  if (code === 'EACCES') return new StartupError(`not allowed to listen on ${where}: ports below 1024 need privileges; choose another BERNSTEIN_PORT`)
  if (code === 'EADDRNOTAVAIL') return new StartupError(`cannot listen on ${where}: ${host} is not an address of this machine (BERNSTEIN_HOST)`)
  return null
}

/** Binds `server` and resolves with the port actually bound (the chosen one when `port` is 0). */
function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const refuse = (error: unknown): void => reject(bindFailure(error, host, port) ?? error)
    server.once('error', refuse)
    server.listen(port, host, () => {
      server.off('error', refuse)
      const address = server.address()
      resolve(typeof address === 'object' && address ? address.port : port)
    })
  })
}

/**
 * Holds the requests that arrive between binding and the app being ready, and hands them to the app, in order,
 * once it is: a client that connects while the node opens gets its answer a little later, never a dropped request.
 */
function holdRequests(server: Server): { release(handler: (req: IncomingMessage, res: ServerResponse) => void): void } {
  const held: [IncomingMessage, ServerResponse][] = []
  const hold = (req: IncomingMessage, res: ServerResponse): void => void held.push([req, res])
  server.on('request', hold)
  return {
    release(handler) {
      server.off('request', hold)
      server.on('request', handler)
      for (const [req, res] of held.splice(0)) handler(req, res)
    },
  }
}

/** Stops listening and drops every connection (for a start that failed: nothing has been served). */
function abandon(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}

/**
 * Follows delegated tasks in the background: one pass at a time (never overlapping), each delegation at its own
 * backoff. `stop` waits for a pass in progress to finish.
 */
function startFollower(app: App, intervalMs: number, logger: Logger): { stop(): Promise<void> } {
  return runPeriodically(intervalMs, () =>
    app.services.delegation.syncDue().then(
      (settled) => {
        for (const d of settled)
          if (d.status === 'completed' || d.status === 'failed') logger.info({ delegation: d.id, status: d.status }, 'delegation settled')
      },
      (error: unknown) => logger.error({ err: error }, 'federation follower pass failed'),
    ),
  )
}

/**
 * How often the count deltas are folded (PostgreSQL, migration 016): at a few hundred writes a second a few thousand
 * rows, which the readers of the counts (`/health`, `/metrics`) sum in well under a millisecond.
 */
const COUNT_FOLD_INTERVAL_MS = 10_000

/** How often a replica is ranked again among the live ones (a replica started or gone moves the home shards). */
const REPLICA_RANK_INTERVAL_MS = 2_000

/**
 * PostgreSQL with several shards per tenant: ranks this replica among the live ones (src/store/replica-slot.ts) and
 * draws new task ids in its home shards from then on (docs/scaling.md, "Home shards"); the first ranking is awaited,
 * so that the first writes are home already. Elsewhere, or when PostgreSQL cannot rank it, every shard is home.
 */
async function startRanking(node: Node, logger: Logger): Promise<{ stop(): Promise<void> }> {
  node.metrics.observeHomeShards(node.home)
  const slot = node.config.chains.shards > 1 ? replicaSlot(node.connection) : null
  if (slot === null) return { stop: async () => {} }
  const rank = async (): Promise<void> => {
    const ranked = (await slot.refresh()) ?? { rank: 0, replicas: 1 }
    const before = node.home.assignment
    node.home.assign(ranked.rank, ranked.replicas)
    if (before.rank !== ranked.rank || before.replicas !== ranked.replicas)
      logger.info({ rank: ranked.rank, replicas: ranked.replicas, shards: node.home.shards }, 'home shards assigned')
  }
  await rank()
  const ranking = runPeriodically(REPLICA_RANK_INTERVAL_MS, rank)
  return {
    async stop() {
      await ranking.stop()
      await slot.close()
    },
  }
}

/** The table the PostgreSQL limiter store keeps its counters in (created by migration 015, not by the library). */
export const RATE_LIMIT_TABLE = 'rate_limits'

/** A limiter whose counters live in PostgreSQL (its table made by the migrations); a memory limiter covers store outages. */
function postgresLimiter(pool: object, keyPrefix: string, points: number): BucketLimiter {
  return new RateLimiterPostgres({
    storeClient: pool,
    storeType: 'pool',
    tableName: RATE_LIMIT_TABLE,
    // Created by the migrations, which run once under their lock; the library's own CREATE races across replicas.
    tableCreated: true,
    keyPrefix,
    points,
    duration: 60,
    // While the database is unreachable each replica counts on its own rather than not at all.
    insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: 60 }),
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
  const make = (keyPrefix: Bucket, points: number): BucketLimiter =>
    connection.sharedPool ? postgresLimiter(connection.sharedPool, keyPrefix, points) : new RateLimiterMemory({ keyPrefix, points, duration: 60 })
  const limiters: Partial<Record<Bucket, BucketLimiter>> = {}
  if (limits.rateLimitWritePerMin > 0) limiters.default_write = make('default_write', limits.rateLimitWritePerMin)
  if (limits.rateLimitReadPerMin > 0) limiters.default_read = make('default_read', limits.rateLimitReadPerMin)
  return limiters
}

/** The `auth_failure` bucket (failed authentications per client address), stored like the others; null when disabled. */
export async function authFailureLimiter(
  limits: Pick<Config, 'rateLimitAuthFailuresPerMin'>,
  connection: Pick<Connection, 'sharedPool'>,
): Promise<BucketLimiter | null> {
  const points = limits.rateLimitAuthFailuresPerMin
  if (points <= 0) return null
  return connection.sharedPool
    ? postgresLimiter(connection.sharedPool, 'auth_failure', points)
    : new RateLimiterMemory({ keyPrefix: 'auth_failure', points, duration: 60 })
}

/** Resolves bearer tokens: the operator token (configured, or generated in the data dir), the metrics token, issued tokens. */
function tokenResolver(config: Config, store: Store, logger: Logger): TokenResolver | null {
  if (config.authDisabled) {
    logger.warn({}, 'AUTHENTICATION IS DISABLED (BERNSTEIN_AUTH_DISABLED): every request passes as the operator. Never expose this server.')
    return null
  }
  const operator = resolveOperatorToken(config.authToken, config.dataDir)
  if (operator.file) logger.info({ file: operator.file, created: operator.created }, `operator token is in ${operator.file}`)
  const tokens = new TokenService({ store, clock: systemClock, ids: systemIds })
  const metricsToken = config.metricsToken
  const isOperator = secretMatcher(operator.token)
  const isMetrics = metricsToken === null ? () => false : secretMatcher(metricsToken)
  return (token) => {
    if (isOperator(token)) return { role: 'operator', tokenId: null, tenantId: null }
    if (isMetrics(token)) return { role: 'metrics', tokenId: 'metrics-token', tenantId: null }
    return tokens.resolve(token)
  }
}

/**
 * The server: binds, opens the node (`openNode`) and serves it. Everything below it receives its dependencies;
 * only this module, `src/node.ts` and the CLI touch the process.
 *
 * It binds first, before anything is created: a port in use is reported before the data directory, the keys, the
 * operator token or the database are touched, and the URL the node advertises (agent card `url`, legacy card
 * `endpoint`, sender card `endpoint`) names the port actually bound, which BERNSTEIN_PORT=0 only tells after
 * listening. Requests that arrive while the node opens wait for it.
 *
 * `logger` is pino's logger or anything with its `error`/`warn`/`info`/`debug` methods (`console` will do).
 *
 * @throws StartupError when the node cannot start as configured (the port in use, migrations pending with
 *   BERNSTEIN_MIGRATE_ON_START=0…); the message says what to do.
 * @example
 * const server = await startServer(loadConfig({ BERNSTEIN_PORT: '0' }), console)
 * console.log('serving on', server.url)
 * process.once('SIGTERM', () => void server.close())
 */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const drain: DrainState = { closing: false, refusing: false }
  const limits = config.http
  const server = createHttpServer({
    headersTimeoutMs: limits.headersTimeoutMs,
    requestTimeoutMs: limits.requestTimeoutMs,
    keepAliveTimeoutMs: limits.keepAliveTimeoutMs,
    maxConnections: limits.maxConnections,
    maxConnectionsPerIp: limits.maxConnectionsPerIp,
    limitLoopback: config.rateLimitLoopback,
    closing: () => drain.closing,
  })
  const waiting = holdRequests(server)
  const boundPort = await listen(server, config.port, config.host)
  let node: Node | undefined
  let app: App
  let ranking: { stop(): Promise<void> }
  try {
    node = await openNode(config, { boundPort, migrations: config.migrateOnStart ? 'apply' : 'refuse-pending', logger })
    app = await nodeApp(node, config, logger, () => drain.refusing)
    ranking = await startRanking(node, logger)
  } catch (error) {
    await node?.close()
    await abandon(server)
    throw error
  }
  const opened = node
  waiting.release(app.express)
  const followers = startFollower(app, config.federationPollMs, logger)
  // A2A v1.0 push deliveries: a loop on every replica (claims are safe across them), stopped with the follower.
  const pushDelivery = app.services.a2aV1PushDelivery
  pushDelivery.logger = logger
  pushDelivery.start()
  const follower = { stop: () => Promise.all([followers.stop(), pushDelivery.stop()]).then(() => {}) }
  const checkpointing = startCheckpointing(opened.checkpoints, config.chains.checkpointIntervalMs, (error) =>
    logger.error({ err: error }, 'chain checkpoint failed'),
  )
  const folding = runPeriodically(COUNT_FOLD_INTERVAL_MS, () =>
    opened.store.foldCounts().then(
      () => undefined,
      (error: unknown) => logger.error({ err: error }, 'folding the row counts failed'),
    ),
  )
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  let closing: Promise<void> | undefined
  return {
    url: `http://${host}:${boundPort}`,
    app,
    store: opened.store,
    close() {
      closing ??= (async () => {
        await drainServer(server, app, drain, follower, limits)
        await checkpointing.stop()
        await folding.stop()
        await ranking.stop()
        await opened.close()
      })()
      return closing
    },
  }
}

/** The Express application of an open node, configured as `config` says; `refusing` is the drain's refusal state. */
async function nodeApp(node: Node, config: Config, logger: Logger, refusing: () => boolean): Promise<App> {
  const limits = config.http
  return createApp({
    services: node.services,
    store: node.store,
    auditKey: node.auditKey,
    issuer: config.issuer,
    attestor: node.attestor,
    identity: node.identity,
    publicBaseUrl: node.publicBaseUrl,
    resolveToken: tokenResolver(config, node.store, logger),
    validateResponses: config.validateResponses,
    logger,
    network: { allowedIps: config.allowedIps, trustedProxyIps: config.trustedProxyIps },
    rateLimiters: await rateLimiters(config, node.connection),
    rateLimitLoopback: config.rateLimitLoopback,
    ...(await authFailureLimiter(config, node.connection).then((limiter) => limiter && { authFailureLimiter: limiter })),
    metricsRegistry: node.metrics.registry,
    admission: {
      maxWritesInFlight: limits.maxWritesInFlight,
      requestDeadlineMs: limits.requestDeadlineMs,
      maxEventLoopDelayMs: limits.maxEventLoopDelayMs,
      maxWriteLatencyMs: limits.maxWriteLatencyMs,
      waitBoundMs: config.a2aBlockingTimeoutMs,
      refusing,
    },
  })
}

/** A node's application without a listener: what {@link createNodeApp} gives. */
export interface NodeApp {
  /** The Express application: mount it at the root of a server of your own (it routes by the contract's paths). */
  readonly express: App['express']
  /** Closes the database. */
  close(): Promise<void>
}

/**
 * Opens the node `config` describes (database, migrations, keys) and builds its application, validator and all,
 * without listening: for a server of your own (the application must be mounted at its root) or an in-process test.
 * The node advertises the configured port; the federation follower is not started (`startServer` does both).
 *
 * @throws StartupError when the node cannot open as configured; the message says what to do.
 * @example
 * const node = await createNodeApp(loadConfig({ BERNSTEIN_DATA_DIR: './data' }), console)
 * const server = createServer(node.express).listen(8052)
 * process.once('SIGTERM', () => server.close(() => void node.close()))
 */
export async function createNodeApp(config: Config, logger: Logger): Promise<NodeApp> {
  const node = await openNode(config, { migrations: config.migrateOnStart ? 'apply' : 'refuse-pending', logger })
  try {
    const app = await nodeApp(node, config, logger, () => false)
    return { express: app.express, close: () => node.close() }
  } catch (error) {
    await node.close()
    throw error
  }
}
