import type { Server } from 'node:http'
import { expect } from 'vitest'
import { type AppDeps, type App, createApp } from '../../src/app.js'
import { createHttpServer } from '../../src/http/http-server.js'
import { secretsEqual } from '../../src/auth/operator-token.js'
import { type ApiClient, createApiClient } from '../../src/client/index.js'
import type { TokenIdentity } from '../../src/auth/caller.js'
import { type Connection, type DatabaseOptions, connect, migrateToLatest } from '../../src/store/connect.js'
import { Store } from '../../src/store/store.js'
import { systemIds, systemClock } from '../../src/runtime.js'
import { TokenService } from '../../src/auth/token.service.js'
import { ReceiptAttestor } from '../../src/receipts/receipt-attestor.js'
import { NodeIdentity, type NodeProfile } from '../../src/identity/node-identity.js'
import { type NodeKeys, loadNodeKeys } from '../../src/identity/node-keys.js'
import { type TestDatabase, type TestEngine, createTestDatabase } from './engines.js'
import { PrometheusMetrics } from '../../src/http/prometheus-metrics.js'
import { type HttpResult, fetchOnce, httpRequest } from './raw-http.js'

export const OPERATOR_TOKEN = 'test-operator-token-0123456789'
/** The tracker-audit key of test servers: 64 hex characters whose ASCII bytes are the key. */
export const TEST_AUDIT_KEY = Buffer.from('0123456789abcdef'.repeat(4), 'ascii')

export interface TestApp {
  readonly url: string
  readonly engine: TestEngine
  readonly store: Store
  /** The app's own database connection (tests that provoke storage faults run statements on it). */
  readonly connection: Connection
  readonly app: App
  readonly dataDir: string
  /** Issues agent/operator tokens that this server accepts (same clock as the app). */
  readonly tokens: TokenService
  /** The node's keys (in `<dataDir>/keys`). */
  readonly keys: NodeKeys
  /** Operator client at the root prefix. */
  readonly client: ApiClient
  /** Builds a client with other credentials, tenant or prefix. */
  clientWith(options: { token?: string; tenant?: string; prefix?: '' | '/api/v1' }): ApiClient
  close(): Promise<void>
}

export interface TestAppOptions extends Partial<Omit<AppDeps, 'store'>> {
  readonly engine?: TestEngine
  /** Extra token resolution consulted after the operator token. */
  readonly extraTokens?: (token: string) => Promise<TokenIdentity | null>
  /** False: no receipt key material, every A2A response goes out unattested. */
  readonly attest?: boolean
  readonly profile?: Partial<NodeProfile>
  /** An existing database to share with other test servers (the caller creates and drops it). */
  readonly database?: TestDatabase
  /** Overrides of the connection options (a pool of one, a statement counter). */
  readonly connectOptions?: Partial<DatabaseOptions>
}

export function testProfile(overrides: Partial<NodeProfile> = {}): NodeProfile {
  return {
    issuer: 'test-node',
    name: 'bernstein-orchestrator',
    description: 'test node',
    tools: ['task_orchestration', 'code_review'],
    policies: { cost_cap_usd: 10, redaction_tier: 'standard', sandbox_profile: 'container' },
    publicBaseUrl: 'http://bernstein.test',
    version: '0.0.0-test',
    cardTtlSeconds: 86_400,
    renewBeforeSeconds: 300,
    ...overrides,
  }
}

/** The real application on a real database, listening on an ephemeral loopback port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const engine = options.engine ?? 'sqlite'
  const database = options.database ?? (await createTestDatabase(engine))
  const connection = connect({ ...database.options, ...options.connectOptions })
  const migrated = await migrateToLatest(connection)
  if (migrated.error) throw migrated.error
  const store = new Store(connection)
  const tokens = new TokenService({ store, clock: options.clock ?? systemClock, ids: options.ids ?? systemIds })
  const resolveToken =
    options.resolveToken !== undefined
      ? options.resolveToken
      : // As the server resolves tokens: the operator's at once, issued ones when their lookup ends.
        (token: string): TokenIdentity | null | Promise<TokenIdentity | null> =>
          secretsEqual(token, OPERATOR_TOKEN)
            ? { role: 'operator', tokenId: null, tenantId: null }
            : (async () => (await tokens.resolve(token)) ?? (await options.extraTokens?.(token)) ?? null)()
  const keys = await loadNodeKeys(database.dataDir)
  const clock = options.clock ?? systemClock
  const profile = testProfile(options.profile)
  // With a registry, the signers report to it too (signatures made).
  const metrics = options.metricsRegistry ? new PrometheusMetrics(options.metricsRegistry) : undefined
  const app = createApp({
    publicBaseUrl: profile.publicBaseUrl,
    auditKey: TEST_AUDIT_KEY,
    issuer: profile.issuer,
    identity: new NodeIdentity(store, keys, profile, clock, metrics),
    ...(options.attest !== false && { attestor: new ReceiptAttestor({ key: keys.receipt, masterKey: TEST_AUDIT_KEY, clock, ...(metrics && { metrics }) }) }),
    // Streams end after 100 ms unless a test says otherwise: suites that read every operation's whole answer get one.
    a2aV1Streams: { maxDurationMs: 100 },
    ...options,
    store,
    resolveToken,
  })
  // The server the node runs on (src/server.ts), so that what Node answers before Express is tested too.
  const server: Server = createHttpServer()
  server.on('request', app.express)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (typeof address !== 'object' || address === null) throw new Error('no address')
  const url = `http://127.0.0.1:${address.port}`
  const clientWith = (o: { token?: string; tenant?: string; prefix?: '' | '/api/v1' }): ApiClient =>
    createApiClient({
      baseUrl: url + (o.prefix ?? ''),
      fetch: fetchOnce,
      ...(o.token !== undefined && { token: o.token }),
      ...(o.tenant !== undefined && { tenant: o.tenant }),
    })
  let closing: Promise<void> | undefined
  return {
    url,
    engine,
    store,
    connection,
    app,
    dataDir: database.dataDir,
    tokens,
    keys,
    client: clientWith({ token: OPERATOR_TOKEN }),
    clientWith,
    // Idempotent: a test may stop a node early (a peer going away) and the suite's cleanup close it again.
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeAllConnections()
        })
        await store.close()
        if (options.database === undefined) await database.drop()
      })()
      return closing
    },
  }
}

/** Raw HTTP (test/helpers/raw-http.ts) with the operator token unless `token` names another (`null`: none). */
export function rawRequest(
  url: string,
  init: { method: string; path: string; body?: string | Buffer; headers?: Record<string, string>; token?: string | null },
): Promise<HttpResult> {
  return httpRequest(url, { ...init, token: init.token === undefined ? OPERATOR_TOKEN : init.token })
}

/** The node's published JWKS (`GET /.well-known/agent.json/keys`, no token), what a peer verifies receipts against. */
export async function publishedJwks(url: string): Promise<unknown> {
  return (await rawRequest(url, { method: 'GET', path: '/.well-known/agent.json/keys', token: null })).json
}

/**
 * Everything a refused request could have touched, byte for byte: the task list, one A2A task as GET shows it
 * (`a2aTaskId`), and the default tenant's inbound delegations, messages and peers. Equal before and after means
 * the request changed nothing.
 */
export async function stateSnapshot(t: TestApp, a2aTaskId: string): Promise<unknown> {
  const tasks = await rawRequest(t.url, { method: 'GET', path: '/tasks?limit=500' })
  expect(tasks.status).toBe(200)
  const a2a = await rawRequest(t.url, { method: 'GET', path: `/a2a/tasks/${a2aTaskId}` })
  return {
    tasks: tasks.text,
    a2a: a2a.text,
    inbound: await t.store.repos.a2a.countInbound('default'),
    messages: await t.store.repos.a2a.messages('default'),
    peers: await t.store.repos.a2a.countPeers(),
  }
}
