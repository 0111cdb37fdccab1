import { BlockList, isIP } from 'node:net'
import { isAbsolute, resolve } from 'node:path'
import { codePointLength } from './text/unicode.js'

/** A configuration problem found at start-up; the message says which variable and why. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
export type SqliteSynchronous = 'full' | 'normal'

/** The node's configuration, read once from the environment by {@link loadConfig} and frozen (docs/configuration.md). */
export interface Config {
  readonly host: string
  readonly port: number
  readonly dataDir: string
  /**
   * Base URL peers use to reach this node; also the legacy card's endpoint and the signed card's `url`. Null when
   * BERNSTEIN_PUBLIC_BASE_URL is unset: the server then derives it from the address it bound
   * (`defaultPublicBaseUrl`), so that `BERNSTEIN_PORT=0` advertises the port actually chosen, not 0.
   */
  readonly publicBaseUrl: string | null
  readonly authToken: string | null
  readonly authDisabled: boolean
  /** A token that reads `GET /metrics` and nothing else (for a Prometheus scraper); null when unset. */
  readonly metricsToken: string | null
  readonly databaseUrl: string | null
  readonly sqliteSynchronous: SqliteSynchronous
  /** PostgreSQL pool: connections per process, connect/checkout timeout, statement timeout (0 = none). */
  readonly dbPoolSize: number
  readonly dbConnectTimeoutMs: number
  readonly dbStatementTimeoutMs: number
  /** PostgreSQL: prepare the hot statements once per connection under a name (off behind a pooler that cannot). */
  readonly dbPreparedStatements: boolean
  /** Apply pending migrations at start (default); when off, a server with pending migrations refuses to start. */
  readonly migrateOnStart: boolean
  readonly validateResponses: boolean
  readonly logLevel: LogLevel
  /** CIDRs allowed to call non-public paths; empty means no allowlist. Loopback is always allowed. */
  readonly allowedIps: readonly string[]
  /** Proxies whose `X-Forwarded-For` is believed. */
  readonly trustedProxyIps: readonly string[]
  /** Requests per minute per client; 0 disables the bucket. */
  readonly rateLimitWritePerMin: number
  readonly rateLimitReadPerMin: number
  /** Apply rate limits to loopback clients too (they are exempt by default, as in Bernstein). */
  readonly rateLimitLoopback: boolean
  /** Health (issue 26): failed authentications per minute per client address (0 disables the bucket). */
  readonly rateLimitAuthFailuresPerMin: number
  /** Health (issue 26): how long one database check answers readiness probes, in ms (0: every probe checks). */
  readonly readinessCacheMs: number
  /** This node's issuer name: capability card issuer and lineage envelope `source_issuer`. */
  readonly issuer: string
  /** Policies this node advertises in its capability card. */
  readonly cardPolicies: { readonly cost_cap_usd: number; readonly redaction_tier: string; readonly sandbox_profile: string }
  /** Inbound delegations: pinned peer card fingerprints (empty = any sender) and the policies they must meet. */
  readonly trustedPeerFingerprints: readonly string[]
  readonly peerRequirements: { readonly maxCostCapUsd: number; readonly minRedactionTier: string; readonly minSandboxProfile: string }
  /** Also require carried lineage entries to link up and hash correctly. */
  readonly lineageStrict: boolean
  /**
   * Inbound deliveries must be signed (RFC 9421) by the sender's pinned card key; default on when peers are pinned
   * (BERNSTEIN_REQUIRE_PEER_SIGNATURE). Off: unsigned deliveries (Bernstein 3.x peers) pass on the card alone.
   */
  readonly requirePeerSignature: boolean
  /** How far a peer signature's `created` may be from now, either side (BERNSTEIN_PEER_SIGNATURE_WINDOW_SECONDS). */
  readonly peerSignatureWindowSeconds: number
  /** Delegate to peers that cannot prove they hold their card key (BERNSTEIN_ALLOW_UNSIGNED_PEERS); off by default. */
  readonly allowUnsignedPeers: boolean
  /** Bearer tokens towards peers: a default, and per-peer-URL overrides. Never stored in the database. */
  readonly peerToken: string | null
  readonly peerTokens: Readonly<Record<string, string>>
  /** How often the server follows delegated tasks; 0 disables the loop (`federation sync` still works). */
  readonly federationPollMs: number
  /** The largest answer read from a peer (BERNSTEIN_PEER_MAX_ANSWER_BYTES, 1 MiB); a longer one fails the attempt unread. */
  readonly peerMaxAnswerBytes: number
  /** How long one request to a peer may take, answer included (BERNSTEIN_PEER_TIMEOUT_MS, 30 s). */
  readonly peerTimeoutMs: number
  /**
   * The longest a blocking A2A v1.0 SendMessage waits for its task to finish or be interrupted before answering it
   * as it stands; the request deadline of the operations that wait (`x-waits`) is extended by it.
   */
  readonly a2aBlockingTimeoutMs: number
  /** Answer A2A v1.0 messages with the built-in conformance agent (for the A2A conformance kit), not external workers. */
  readonly a2aConformanceAgent: boolean
  /**
   * A2A v1.0 streams (SSE): the keep-alive comment interval (0: none), the most bytes a stream may hold unsent before
   * its reader is disconnected, how long events stay resumable with `Last-Event-ID`, and how often a stream reads
   * its task's event log for events written by another replica.
   */
  readonly a2aStreams: {
    readonly keepAliveMs: number
    readonly maxBufferBytes: number
    readonly retentionMs: number
    readonly pollIntervalMs: number
    /** A stream is ended cleanly after this long (the client resumes with `Last-Event-ID`); 0: never. */
    readonly maxDurationMs: number
  }
  /** A2A v1.0 push notifications: delivery timing and retries, and the internal targets the operator allows (docs/a2a-v1-push.md). */
  readonly a2aPush: A2APushConfig
  /** The operator HMAC key file of the tracker-audit chain (64 hex chars; created 0600 on first start). */
  readonly auditKeyPath: string
  /** Connections, shutdown and load shedding (docs/reliability.md). */
  readonly http: HttpLimits
  /** Chain partitions per tenant (BERNSTEIN_CHAIN_SHARDS) and the signed checkpoint's interval (docs/scaling.md). */
  readonly chains: ChainPartitioning
}

/**
 * Default chain partitions per tenant (docs/scaling.md, "The default partitioning"). SQLite has one writer, whose
 * group commit is the lock: partitions buy nothing there, and one keeps the chain the single file it always was. On
 * PostgreSQL every write holds its partition's head until its COMMIT is durable, so the partitions bound the cluster's
 * writes (partitions ÷ hold); 128 carry 10^4 writes/s at a hold of up to 12.8 ms, and replicas take disjoint shares.
 */
export const SQLITE_CHAIN_SHARDS = 1
export const POSTGRES_CHAIN_SHARDS = 128

/** How the tracker-audit chain and the receipt spine are partitioned and checkpointed (docs/scaling.md). */
export interface ChainPartitioning {
  /** Partitions per tenant of each chain (1-256; default 1 on SQLite, 128 on PostgreSQL); the default tenant's first one is the pre-partitioning chain. */
  readonly shards: number
  /** How often the server signs a checkpoint of every partition head, in ms (0: only `lineage checkpoint`). */
  readonly checkpointIntervalMs: number
}

/** A2A v1.0 push notification delivery (`BERNSTEIN_A2A_PUSH_*`). */
export interface A2APushConfig {
  /** Addresses, CIDRs and host names webhooks may name although loopback, private or link-local (none by default). */
  readonly allowedTargets: readonly string[]
  /** One attempt, answer included. */
  readonly timeoutMs: number
  /** Attempts of one delivery before it is given up. */
  readonly maxAttempts: number
  /** Backoff before attempt n+1: base · 2^(n-1), at most max. */
  readonly retryBaseMs: number
  readonly retryMaxMs: number
  /** How often the delivery worker looks for due deliveries; 0: no worker on this replica. */
  readonly pollIntervalMs: number
}

/** How the node holds up under slow clients, many connections, SIGTERM and overload (docs/reliability.md). */
export interface HttpLimits {
  /** Time to receive a request's header block (Node `headersTimeout`); 408 and close past it. */
  readonly headersTimeoutMs: number
  /** Time to receive a whole request, its body included (Node `requestTimeout`); 408 and close past it. */
  readonly requestTimeoutMs: number
  /** How long an idle kept-alive connection stays open (Node `keepAliveTimeout`). */
  readonly keepAliveTimeoutMs: number
  /** Open connections at most (0: no limit); one more is closed at once, unanswered. */
  readonly maxConnections: number
  /** Open connections per client address at most (0: no limit); loopback only with BERNSTEIN_RATE_LIMIT_LOOPBACK. */
  readonly maxConnectionsPerIp: number
  /** Writes (POST, PUT, PATCH, DELETE) in flight at most (0: no limit); one more is answered 503 with Retry-After. */
  readonly maxWritesInFlight: number
  /** From a request's body being read to its answer: past it, 503 with Retry-After (0: no deadline). */
  readonly requestDeadlineMs: number
  /**
   * Writes are shed (503 with Retry-After) while the event loop has lately run this late (0: never). On SQLite the
   * database work runs on the loop, so a backlog shows here before it shows as writes in flight.
   */
  readonly maxEventLoopDelayMs: number
  /**
   * Writes are shed (503 with Retry-After) while even the fastest write answered in the last half second took longer
   * than this from its body read to its answer (0: never): a queue inside the node, whatever the engine.
   */
  readonly maxWriteLatencyMs: number
  /** After SIGTERM: how long the node goes on accepting connections and serving (every answer `Connection: close`). */
  readonly shutdownGraceMs: number
  /** After SIGTERM: when the process exits at the latest, in-flight requests or not. */
  readonly shutdownTimeoutMs: number
}

type Env = Readonly<Record<string, string | undefined>>

const TRUTHY = new Set(['1', 'true', 'yes', 'on'])
const FALSY = new Set(['0', 'false', 'no', 'off'])

/** The switches docs/configuration.md says an empty value turns off; for every other one, empty is unset. */
const EMPTY_IS_OFF: ReadonlySet<string> = new Set([
  'BERNSTEIN_AUTH_DISABLED',
  'BERNSTEIN_RATE_LIMIT_LOOPBACK',
  'BERNSTEIN_LINEAGE_STRICT',
  'BERNSTEIN_MIGRATE_ON_START',
  'BERNSTEIN_VALIDATE_RESPONSES',
])

/**
 * A switch: on or off. Empty takes the default, as for any variable (an empty `BERNSTEIN_REQUIRE_PEER_SIGNATURE=`
 * must not turn off the signature pinned peers owe), except for the switches of {@link EMPTY_IS_OFF}.
 */
function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined) return fallback
  const value = raw.trim().toLowerCase()
  if (value === '') return EMPTY_IS_OFF.has(name) ? false : fallback
  if (TRUTHY.has(value)) return true
  if (FALSY.has(value)) return false
  throw new ConfigError(`${name} must be one of 1/true/yes/on or 0/false/no/off, got '${raw}'`)
}

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || value > 65_535) throw new ConfigError(`${name} must be a port number 0-65535, got '${raw}'`)
  return value
}

/** A whole number where 0 disables (a limit, an interval); at most `max` (timers: Node cuts a delay past 2^31 - 1 ms to 1 ms). */
function count(env: Env, name: string, fallback: number, max: number): number {
  return bounded(env, name, fallback, 0, max, '0 (disables)')
}

function bounded(env: Env, name: string, fallback: number, min: number, max: number, lowest: string = String(min)): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw.trim())
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) throw new ConfigError(`${name} must be a whole number from ${lowest} to ${max}, got '${raw}'`)
  return value
}

/** Comma-separated addresses or CIDRs, each checked by Node's own parser so that a typo fails at start. */
function cidrs(env: Env, name: string): string[] {
  const raw = env[name]?.trim()
  if (!raw) return []
  return raw.split(',').map((part) => cidr(name, part.trim()))
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i

/** Comma-separated addresses, CIDRs or host names (BERNSTEIN_A2A_PUSH_ALLOWED_TARGETS). */
function pushTargets(env: Env, name: string): string[] {
  const raw = env[name]?.trim()
  if (!raw) return []
  return raw.split(',').map((part) => {
    const entry = part.trim()
    if (isIP(entry.split('/')[0] ?? '') !== 0) return cidr(name, entry)
    if (!HOST_NAME.test(entry)) throw new ConfigError(`${name}: '${entry}' is not an address, a CIDR or a host name`)
    return entry.toLowerCase()
  })
}

function cidr(name: string, entry: string): string {
  {
    const [address, prefix, extra] = entry.split('/')
    const family = isIP(address ?? '')
    const bits = prefix === undefined ? undefined : Number(prefix)
    const max = family === 6 ? 128 : 32
    if (family === 0 || extra !== undefined || (bits !== undefined && (!/^\d+$/.test(prefix ?? '') || bits > max))) {
      throw new ConfigError(`${name}: '${entry}' is not an IPv4/IPv6 address or CIDR`)
    }
    try {
      new BlockList().addSubnet(address ?? '', bits ?? max, family === 6 ? 'ipv6' : 'ipv4')
    } catch {
      throw new ConfigError(`${name}: '${entry}' is not an IPv4/IPv6 address or CIDR`)
    }
    return entry
  }
}

function usd(env: Env, name: string): number {
  const raw = env[name]?.trim() ?? ''
  const value = Number(raw)
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(value)) throw new ConfigError(`${name} must be a non-negative number of USD, got '${raw}'`)
  return value
}

function costCap(env: Env): number {
  return env['BERNSTEIN_A2A_COST_CAP_USD']?.trim() ? usd(env, 'BERNSTEIN_A2A_COST_CAP_USD') : 0
}

function fingerprints(env: Env, name: string): string[] {
  const raw = env[name]?.trim()
  if (!raw) return []
  return raw.split(',').map((part) => {
    const fp = part.trim().toLowerCase()
    if (!/^sha256:[0-9a-f]{64}$/.test(fp)) throw new ConfigError(`${name}: '${part.trim()}' is not a key fingerprint (sha256: + 64 hex)`)
    return fp
  })
}

/**
 * `BERNSTEIN_PEER_TOKENS=https://peer-a=token,https://peer-b=token`: each entry splits at its first `=`, so a token
 * may carry `=` (base64 padding); a peer's base URL has no query or fragment, which is where a URL could.
 */
function peerTokenMap(env: Env): Record<string, string> {
  const raw = env['BERNSTEIN_PEER_TOKENS']?.trim()
  const map: Record<string, string> = {}
  if (!raw) return map
  for (const pair of raw.split(',')) {
    const at = pair.indexOf('=')
    const url = pair.slice(0, at).trim().replace(/\/+$/, '')
    const token = pair.slice(at + 1).trim()
    if (at <= 0 || token === '' || !/^https?:\/\/[^?#]+$/.test(url)) throw new ConfigError(`BERNSTEIN_PEER_TOKENS: '${pair.trim()}' is not <peer URL>=<token>`)
    map[url] = token
  }
  return map
}

function issuerName(env: Env): string {
  const raw = env['BERNSTEIN_A2A_ISSUER']?.trim()
  if (!raw) return 'bernstein'
  // Printable: no control character (C0, DEL, C1), line or paragraph separator, or lone surrogate.
  if (codePointLength(raw) > 200 || /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u.test(raw)) throw new ConfigError('BERNSTEIN_A2A_ISSUER must be 1-200 printable characters')
  return raw
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = raw.trim().toLowerCase()
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`)
  return value as T
}

function baseUrl(env: Env, name: string): string | null {
  const raw = env[name]?.trim()
  if (!raw) return null
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got '${raw}'`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got '${raw}'`)
  return raw.replace(/\/+$/, '')
}

/** A wildcard address names no host a peer could reach: its loopback stands in for it. */
const LOOPBACK_OF_WILDCARD: Readonly<Record<string, string>> = { '0.0.0.0': '127.0.0.1', '::': '::1' }

/**
 * The public base URL when BERNSTEIN_PUBLIC_BASE_URL is unset: `http://<host>:<port>` of the address bound (a
 * wildcard, 0.0.0.0 or ::, is advertised as its loopback; an IPv6 host in brackets). `port` is the port actually
 * bound, which differs from the configured one when that is 0.
 */
export function defaultPublicBaseUrl(host: string, port: number): string {
  const advertised = LOOPBACK_OF_WILDCARD[host] ?? host
  const urlHost = advertised.includes(':') ? `[${advertised}]` : advertised
  return `http://${urlHost}:${port}`
}

/**
 * Reads the environment once. The only module that looks at `process.env`: everything else receives the frozen
 * result, so tests build configurations without touching global state. Every variable, with its default, is in
 * docs/configuration.md; relative paths are resolved against `cwd`.
 *
 * @throws ConfigError naming the variable that is wrong and why.
 * @example
 * const config = loadConfig({ BERNSTEIN_PORT: '0', BERNSTEIN_DATA_DIR: './.sdd' })   // loadConfig() reads process.env
 * console.log(config.port, config.dataDir)
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const host = env['BERNSTEIN_HOST']?.trim() || '127.0.0.1'
  const listenPort = port(env, 'BERNSTEIN_PORT', 8052)
  const rawDataDir = env['BERNSTEIN_DATA_DIR']?.trim() || '.sdd'
  const dataDir = isAbsolute(rawDataDir) ? rawDataDir : resolve(cwd, rawDataDir)
  const publicBaseUrl = baseUrl(env, 'BERNSTEIN_PUBLIC_BASE_URL')
  const authToken = env['BERNSTEIN_AUTH_TOKEN']?.trim() || null
  if (authToken !== null && codePointLength(authToken) < 16) throw new ConfigError('BERNSTEIN_AUTH_TOKEN must be at least 16 characters')
  const metricsToken = env['BERNSTEIN_METRICS_TOKEN']?.trim() || null
  if (metricsToken !== null && codePointLength(metricsToken) < 16) throw new ConfigError('BERNSTEIN_METRICS_TOKEN must be at least 16 characters')
  if (metricsToken !== null && metricsToken === authToken) throw new ConfigError('BERNSTEIN_METRICS_TOKEN must differ from BERNSTEIN_AUTH_TOKEN')
  const databaseUrl = env['DATABASE_URL']?.trim() || null
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must be a postgres:// URL (SQLite is the default and needs no URL), got '${databaseUrl}'`)
  }
  return Object.freeze({
    host,
    port: listenPort,
    dataDir,
    publicBaseUrl,
    authToken,
    authDisabled: flag(env, 'BERNSTEIN_AUTH_DISABLED', false),
    metricsToken,
    databaseUrl,
    sqliteSynchronous: oneOf(env, 'BERNSTEIN_SQLITE_SYNCHRONOUS', ['full', 'normal'] as const, 'full'),
    dbPoolSize: bounded(env, 'BERNSTEIN_DB_POOL_SIZE', 10, 1, 1000),
    dbConnectTimeoutMs: bounded(env, 'BERNSTEIN_DB_CONNECT_TIMEOUT_MS', 5_000, 1, 600_000),
    dbStatementTimeoutMs: bounded(env, 'BERNSTEIN_DB_STATEMENT_TIMEOUT_MS', 30_000, 0, 86_400_000),
    dbPreparedStatements: flag(env, 'BERNSTEIN_DB_PREPARED_STATEMENTS', true),
    migrateOnStart: flag(env, 'BERNSTEIN_MIGRATE_ON_START', true),
    validateResponses: flag(env, 'BERNSTEIN_VALIDATE_RESPONSES', true),
    logLevel: oneOf(env, 'BERNSTEIN_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    allowedIps: Object.freeze(cidrs(env, 'BERNSTEIN_ALLOWED_IPS')),
    trustedProxyIps: Object.freeze(cidrs(env, 'BERNSTEIN_TRUSTED_PROXY_IPS')),
    rateLimitWritePerMin: count(env, 'BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN', 30, 1_000_000),
    rateLimitReadPerMin: count(env, 'BERNSTEIN_RATE_LIMIT_READ_PER_MIN', 300, 1_000_000),
    rateLimitLoopback: flag(env, 'BERNSTEIN_RATE_LIMIT_LOOPBACK', false),
    rateLimitAuthFailuresPerMin: count(env, 'BERNSTEIN_RATE_LIMIT_AUTH_FAILURES_PER_MIN', 20, 1_000_000),
    readinessCacheMs: bounded(env, 'BERNSTEIN_READINESS_CACHE_MS', 1000, 0, 60_000),
    chains: {
      shards: bounded(env, 'BERNSTEIN_CHAIN_SHARDS', databaseUrl === null ? SQLITE_CHAIN_SHARDS : POSTGRES_CHAIN_SHARDS, 1, 256),
      checkpointIntervalMs: bounded(env, 'BERNSTEIN_CHECKPOINT_INTERVAL_MS', 60_000, 0, 86_400_000),
    },
    issuer: issuerName(env),
    trustedPeerFingerprints: Object.freeze(fingerprints(env, 'BERNSTEIN_TRUSTED_PEER_FINGERPRINTS')),
    peerRequirements: Object.freeze({
      maxCostCapUsd: env['BERNSTEIN_REQUIRE_COST_CAP_USD']?.trim() ? usd(env, 'BERNSTEIN_REQUIRE_COST_CAP_USD') : Infinity,
      minRedactionTier: oneOf(env, 'BERNSTEIN_REQUIRE_REDACTION_TIER', ['none', 'basic', 'standard', 'strict'] as const, 'none'),
      minSandboxProfile: oneOf(env, 'BERNSTEIN_REQUIRE_SANDBOX_PROFILE', ['none', 'process', 'container', 'microvm'] as const, 'none'),
    }),
    lineageStrict: flag(env, 'BERNSTEIN_LINEAGE_STRICT', false),
    requirePeerSignature: flag(env, 'BERNSTEIN_REQUIRE_PEER_SIGNATURE', fingerprints(env, 'BERNSTEIN_TRUSTED_PEER_FINGERPRINTS').length > 0),
    peerSignatureWindowSeconds: bounded(env, 'BERNSTEIN_PEER_SIGNATURE_WINDOW_SECONDS', 300, 1, 3600),
    allowUnsignedPeers: flag(env, 'BERNSTEIN_ALLOW_UNSIGNED_PEERS', false),
    peerToken: env['BERNSTEIN_PEER_TOKEN']?.trim() || null,
    peerTokens: Object.freeze(peerTokenMap(env)),
    federationPollMs: count(env, 'BERNSTEIN_FEDERATION_POLL_MS', 5000, 86_400_000),
    peerMaxAnswerBytes: bounded(env, 'BERNSTEIN_PEER_MAX_ANSWER_BYTES', 1_048_576, 1024, 1_073_741_824),
    peerTimeoutMs: bounded(env, 'BERNSTEIN_PEER_TIMEOUT_MS', 30_000, 100, 600_000),
    a2aBlockingTimeoutMs: bounded(env, 'BERNSTEIN_A2A_BLOCKING_TIMEOUT_MS', 30_000, 0, 600_000),
    a2aConformanceAgent: flag(env, 'BERNSTEIN_A2A_CONFORMANCE_AGENT', false),
    a2aStreams: Object.freeze({
      keepAliveMs: bounded(env, 'BERNSTEIN_A2A_STREAM_KEEPALIVE_MS', 15_000, 0, 600_000),
      maxBufferBytes: bounded(env, 'BERNSTEIN_A2A_STREAM_BUFFER_BYTES', 1_048_576, 1024, 268_435_456),
      retentionMs: bounded(env, 'BERNSTEIN_A2A_STREAM_RETENTION_MS', 600_000, 1000, 604_800_000),
      pollIntervalMs: bounded(env, 'BERNSTEIN_A2A_STREAM_POLL_MS', 250, 10, 60_000),
      maxDurationMs: bounded(env, 'BERNSTEIN_A2A_STREAM_MAX_MS', 1_800_000, 0, 86_400_000),
    }),
    cardPolicies: Object.freeze({
      cost_cap_usd: costCap(env),
      redaction_tier: oneOf(env, 'BERNSTEIN_A2A_REDACTION_TIER', ['none', 'basic', 'standard', 'strict'] as const, 'standard'),
      sandbox_profile: oneOf(env, 'BERNSTEIN_A2A_SANDBOX_PROFILE', ['none', 'process', 'container', 'microvm'] as const, 'container'),
    }),
    a2aPush: Object.freeze({
      allowedTargets: Object.freeze(pushTargets(env, 'BERNSTEIN_A2A_PUSH_ALLOWED_TARGETS')),
      timeoutMs: bounded(env, 'BERNSTEIN_A2A_PUSH_TIMEOUT_MS', 10_000, 100, 120_000),
      maxAttempts: bounded(env, 'BERNSTEIN_A2A_PUSH_MAX_ATTEMPTS', 8, 1, 100),
      retryBaseMs: bounded(env, 'BERNSTEIN_A2A_PUSH_RETRY_BASE_MS', 1_000, 1, 3_600_000),
      retryMaxMs: bounded(env, 'BERNSTEIN_A2A_PUSH_RETRY_MAX_MS', 300_000, 1, 86_400_000),
      pollIntervalMs: bounded(env, 'BERNSTEIN_A2A_PUSH_POLL_MS', 1_000, 0, 3_600_000),
    }),
    auditKeyPath: env['BERNSTEIN_AUDIT_KEY_PATH']?.trim() ? resolve(cwd, env['BERNSTEIN_AUDIT_KEY_PATH'].trim()) : resolve(dataDir, 'audit.key'),
    http: httpLimits(env),
  })
}

/**
 * Connections, shutdown and load shedding, one block (docs/reliability.md). The request timeout is sized for the
 * body cap (1 MiB): 30 s lets a client as slow as 35 KB/s send the largest body the node accepts.
 */
function httpLimits(env: Env): HttpLimits {
  const shutdownGraceMs = bounded(env, 'BERNSTEIN_SHUTDOWN_GRACE_MS', 0, 0, 600_000)
  const shutdownTimeoutMs = bounded(env, 'BERNSTEIN_SHUTDOWN_TIMEOUT_MS', 10_000, 1, 600_000)
  if (shutdownTimeoutMs < shutdownGraceMs) {
    throw new ConfigError(`BERNSTEIN_SHUTDOWN_TIMEOUT_MS (${shutdownTimeoutMs}) must be at least BERNSTEIN_SHUTDOWN_GRACE_MS (${shutdownGraceMs})`)
  }
  return Object.freeze({
    headersTimeoutMs: bounded(env, 'BERNSTEIN_HTTP_HEADERS_TIMEOUT_MS', 10_000, 1, 600_000),
    requestTimeoutMs: bounded(env, 'BERNSTEIN_HTTP_REQUEST_TIMEOUT_MS', 30_000, 1, 3_600_000),
    keepAliveTimeoutMs: bounded(env, 'BERNSTEIN_HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 1, 600_000),
    maxConnections: count(env, 'BERNSTEIN_MAX_CONNECTIONS', 1_000, 1_000_000),
    maxConnectionsPerIp: count(env, 'BERNSTEIN_MAX_CONNECTIONS_PER_IP', 100, 1_000_000),
    maxWritesInFlight: count(env, 'BERNSTEIN_MAX_WRITES_IN_FLIGHT', 128, 1_000_000),
    requestDeadlineMs: count(env, 'BERNSTEIN_REQUEST_DEADLINE_MS', 5_000, 3_600_000),
    maxEventLoopDelayMs: count(env, 'BERNSTEIN_MAX_EVENT_LOOP_DELAY_MS', 2_000, 600_000),
    maxWriteLatencyMs: count(env, 'BERNSTEIN_MAX_WRITE_LATENCY_MS', 500, 600_000),
    shutdownGraceMs,
    shutdownTimeoutMs,
  })
}
