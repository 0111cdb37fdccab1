/**
 * Issue 26, finding 6: failed authentications are limited per client address (a bucket of their own, shared by the
 * replicas on PostgreSQL) and a token of no known form is refused without a lookup; an address a trusted proxy
 * forwards is never loopback for the limits; NUL in a string is refused by the contract on both engines.
 */
import { RateLimiterMemory } from 'rate-limiter-flexible'
import { afterEach, describe, expect, it } from 'vitest'
import type { BucketLimiter } from '../../src/http/rate-limit.js'
import { authFailureLimiter } from '../../src/server.js'
import { type Connection, connect } from '../../src/store/connect.js'
import { type TestDatabase, createTestDatabase, testEngines } from '../helpers/engines.js'
import { OPERATOR_TOKEN, type TestApp, type TestAppOptions, rawRequest, startTestApp } from '../helpers/test-app.js'

const apps: TestApp[] = []
const connections: Connection[] = []
const databases: TestDatabase[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
  for (const c of connections.splice(0)) await c.close()
  for (const d of databases.splice(0)) await d.drop()
})

async function counted(options: TestAppOptions): Promise<{ app: TestApp; statements: string[] }> {
  const statements: string[] = []
  const app = await startTestApp({ ...options, connectOptions: { ...options.connectOptions, onQuery: (text) => statements.push(text) } })
  apps.push(app)
  return { app, statements }
}

/** Well-formed issued tokens (`bat_<id>.<secret>`) that no node issued: each one costs a lookup. */
const wrong = (n: number): string => `bat_${n.toString(16).padStart(12, '0')}.${'x'.repeat(43)}`
const AUTH_FAILURE_429 = { detail: "Rate limit exceeded for bucket 'auth_failure'", bucket: 'auth_failure' }
const INVALID = { detail: 'Invalid or expired authentication token' }

describe.each(testEngines())('failed authentications (%s)', (engine) => {
  it('are limited per address: 429 with Retry-After once the bucket is empty, and then no token is looked up', async () => {
    const limiter: BucketLimiter = new RateLimiterMemory({ keyPrefix: 'auth_failure', points: 3, duration: 60 })
    const { app, statements } = await counted({ engine, authFailureLimiter: limiter, rateLimitLoopback: true })
    for (let n = 0; n < 3; n++) {
      const res = await rawRequest(app.url, { method: 'GET', path: '/tasks', token: wrong(n) })
      expect({ status: res.status, json: res.json }).toEqual({ status: 401, json: INVALID })
    }
    const refused = await rawRequest(app.url, { method: 'GET', path: '/tasks', token: wrong(3) })
    expect({ status: refused.status, json: refused.json }).toEqual({ status: 429, json: AUTH_FAILURE_429 })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)

    statements.length = 0
    for (const token of [wrong(4), OPERATOR_TOKEN]) {
      const blocked = await rawRequest(app.url, { method: 'GET', path: '/tasks', token })
      expect({ status: blocked.status, json: blocked.json }).toEqual({ status: 429, json: AUTH_FAILURE_429 })
    }
    expect(statements).toEqual([])
    // A public probe still answers: the token is ignored there, as a wrong one always is.
    expect((await rawRequest(app.url, { method: 'GET', path: '/health/ready', token: wrong(5) })).status).toBe(200)
  })

  it('a token of no known form is refused without touching the database', async () => {
    const { app, statements } = await counted({ engine })
    for (const token of ['nope', `bat_${'0'.repeat(12)}`, `bat_XYZ.${'x'.repeat(43)}`, 'x'.repeat(4000)]) {
      statements.length = 0
      const res = await rawRequest(app.url, { method: 'GET', path: '/tasks', token })
      expect({ status: res.status, json: res.json }).toEqual({ status: 401, json: INVALID })
      expect(statements).toEqual([])
    }
    statements.length = 0
    expect((await rawRequest(app.url, { method: 'GET', path: '/tasks', token: wrong(1) })).status).toBe(401)
    expect(statements.some((s) => /api_tokens/.test(s))).toBe(true)
  })

  it('a loopback address forwarded by a trusted proxy spends the rate limits like any other client', async () => {
    const { app } = await counted({
      engine,
      rateLimiters: { default_read: new RateLimiterMemory({ keyPrefix: 'default_read', points: 1, duration: 60 }) },
      network: { allowedIps: [], trustedProxyIps: ['127.0.0.1'] },
    })
    // The peer itself (loopback, forwarding nobody) stays exempt.
    for (let i = 0; i < 3; i++) expect((await rawRequest(app.url, { method: 'GET', path: '/tasks' })).status).toBe(200)
    const get = async (forwarded: string) => ({
      forwarded,
      status: (await rawRequest(app.url, { method: 'GET', path: '/tasks', headers: { 'x-forwarded-for': forwarded } })).status,
    })
    // `::ffff:127.0.0.1` is the same client as `127.0.0.1`, whose one read is spent; `::1` is another.
    const seen = [await get('127.0.0.1'), await get('127.0.0.1'), await get('::ffff:127.0.0.1'), await get('::1'), await get('::1')]
    expect(seen.map((r) => r.status)).toEqual([200, 429, 429, 200, 429])
  })

  it('NUL in a string that reaches the database is a 422 from the contract, and nothing is written', async () => {
    const { app } = await counted({ engine })
    const created = await rawRequest(app.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: 'ok' }) })
    const id = (created.json as { id: string }).id
    const cases: [string, string, unknown, (string | number)[]][] = [
      ['POST', '/tasks', { title: 'a\u0000b' }, ['body', 'title']],
      ['POST', '/tasks', { title: 't', owned_files: ['a', 'b\u0000'] }, ['body', 'owned_files', 1]],
      ['POST', `/tasks/${id}/claim`, { agent_id: 'a\u0000' }, ['body', 'agent_id']],
      ['POST', '/a2a/tasks/send', { sender: 'p', message: 'm\u0000' }, ['body', 'message']],
      ['GET', '/tasks?role=a%00b', undefined, ['query', 'role']],
    ]
    const before = await app.store.repos.tasks.countByStatus('default')
    for (const [method, path, body, loc] of cases) {
      const res = await rawRequest(app.url, { method, path, ...(body !== undefined && { body: JSON.stringify(body) }) })
      expect({ path, status: res.status }).toEqual({ path, status: 422 })
      expect(res.json).toEqual({ detail: [{ loc, msg: 'String must not contain the NUL character (\\u0000)', type: 'value_error' }] })
    }
    expect(await app.store.repos.tasks.countByStatus('default')).toEqual(before)
    expect((await app.client.GET('/tasks/{task_id}', { params: { path: { task_id: id } } })).data?.status).toBe('open')
  })
})

describe.skipIf(!testEngines().includes('postgres'))('failed authentications across replicas (postgres)', () => {
  it('share one budget per address: failures on one replica are refused on another', async () => {
    const database = await createTestDatabase('postgres')
    databases.push(database)
    const replica = async (): Promise<TestApp> => {
      const connection = connect(database.options)
      connections.push(connection)
      const limiter = await authFailureLimiter({ rateLimitAuthFailuresPerMin: 3 }, connection)
      const app = await startTestApp({ engine: 'postgres', database, rateLimitLoopback: true, ...(limiter && { authFailureLimiter: limiter }) })
      apps.push(app)
      return app
    }
    const [a, b] = [await replica(), await replica()]
    for (let n = 0; n < 3; n++) expect((await rawRequest(a.url, { method: 'GET', path: '/tasks', token: wrong(n) })).status).toBe(401)
    const refused = await rawRequest(b.url, { method: 'GET', path: '/tasks', token: wrong(9) })
    expect({ status: refused.status, json: refused.json }).toEqual({ status: 429, json: AUTH_FAILURE_429 })
  })
})
