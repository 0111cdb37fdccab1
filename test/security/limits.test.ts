/**
 * Limits and the network edge (issue "Security and limits", bernstein-behaviour.md §1.3-§1.7): per-client rate
 * limits, the IP allowlist with trusted-proxy X-Forwarded-For, the 1 MiB body cap and its order against auth,
 * security headers, opaque 500s, and configuration parsing.
 */
import { RateLimiterMemory } from 'rate-limiter-flexible'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import type { TaskObserver } from '../../src/tasks/task-events.js'
import { testEngines } from '../helpers/engines.js'
import { wireRequest } from '../helpers/raw-http.js'
import { OPERATOR_TOKEN, type TestApp, type TestAppOptions, rawRequest, startTestApp } from '../helpers/test-app.js'
import { loadOperations, refusalIn } from './support.js'

const MiB = 1_048_576
const MISSING = { detail: 'Missing or invalid Authorization header' }
const INVALID = { detail: 'Invalid or expired authentication token' }
const rateLimited = (bucket: string) => ({ detail: `Rate limit exceeded for bucket '${bucket}'`, bucket })
const notAllowed = (ip: string) => ({ detail: `IP ${ip} not in allowed list` })

/** A JSON body of exactly `size` bytes (a valid task, padded with insignificant whitespace). */
function jsonOfSize(size: number): Buffer {
  const core = '{"title":"sized"}'
  if (size < core.length) throw new Error('too small')
  return Buffer.from(core.slice(0, -1) + ' '.repeat(size - core.length) + '}')
}

/**
 * Health probes and discovery documents, which neither the IP allowlist nor the rate limits apply to: written out
 * here rather than read from the contract's `x-` extensions, so that this file checks the contract against the
 * requirement, not against itself.
 */
function isHealthOrDiscovery(path: string): boolean {
  const p = path === '/api/v1' ? '/' : path.startsWith('/api/v1/') ? path.slice('/api/v1'.length) : path
  return p.startsWith('/health/') || p === '/ready' || p === '/alive' || p.startsWith('/.well-known/')
}

const limiter = (points: number, duration: number): RateLimiterMemory => new RateLimiterMemory({ points, duration })

describe.each(testEngines())('limits and the network edge (%s)', (engine) => {
  const started: TestApp[] = []
  const start = async (options: TestAppOptions = {}): Promise<TestApp> => {
    const app = await startTestApp({ engine, ...options })
    started.push(app)
    return app
  }
  afterEach(async () => {
    while (started.length > 0) await started.pop()?.close()
  })

  const taskCount = async (app: TestApp, tenant = 'default'): Promise<number> => {
    const res = await rawRequest(app.url, { method: 'GET', path: '/tasks?limit=500', headers: { 'x-tenant-id': tenant } })
    return (res.json as { tasks: unknown[] }).tasks.length
  }

  describe('rate limits', () => {
    /**
     * The limiters (rate-limiter-flexible's memory store, as in production) read their window from Date.now(), and
     * take no clock: these tests freeze Date (timers stay real) and move it by hand instead of waiting.
     */
    const frozenDate = (): { advance(ms: number): void } => {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() })
      return { advance: (ms) => vi.setSystemTime(Date.now() + ms) }
    }
    afterEach(() => {
      vi.useRealTimers()
    })

    it('a burst gets 429 with the bucket, the exact text and Retry-After in whole seconds; nothing is written by a limited request', async () => {
      const time = frozenDate()
      const app = await start({ rateLimiters: { default_write: limiter(3, 60), default_read: limiter(5, 60) }, rateLimitLoopback: true })
      const agent = await app.tokens.create({ role: 'agent', tenant: 'burst', expiresInSeconds: null })
      for (let i = 0; i < 3; i++) {
        const ok = await rawRequest(app.url, { method: 'POST', path: '/tasks', token: agent.token, body: JSON.stringify({ title: `t${i}` }) })
        expect(ok.status).toBe(201)
      }
      // The window opened with the first request; 12.3 s of it have gone by.
      time.advance(12_300)
      const limited = await rawRequest(app.url, { method: 'POST', path: '/tasks', token: agent.token, body: JSON.stringify({ title: 'one too many' }) })
      expect(limited.status).toBe(429)
      expect(limited.json).toEqual(rateLimited('default_write'))
      // What is left of the window (47.7 s), rounded up to whole seconds.
      expect(limited.headers.get('retry-after')).toBe('48')
      expect(await taskCount(app, 'burst')).toBe(3)

      // Reads are another bucket: still served, until they run out in their turn.
      for (let i = 0; i < 5; i++) expect((await rawRequest(app.url, { method: 'GET', path: '/tasks', token: agent.token })).status).toBe(200)
      const readLimited = await rawRequest(app.url, { method: 'GET', path: '/tasks', token: agent.token })
      expect(readLimited.status).toBe(429)
      expect(readLimited.json).toEqual(rateLimited('default_read'))
    })

    it('the same client is served again once Retry-After has passed', async () => {
      const time = frozenDate()
      // A window far longer than the test: the memory store also drops a key with a real timer at the window's end,
      // which on a loaded machine could fire during a 1 s window and serve the client early; Date, frozen, decides.
      const app = await start({ rateLimiters: { default_read: limiter(2, 60) }, rateLimitLoopback: true })
      const agent = await app.tokens.create({ role: 'agent', tenant: 'window', expiresInSeconds: null })
      const get = () => rawRequest(app.url, { method: 'GET', path: '/tasks', token: agent.token })
      expect((await get()).status).toBe(200)
      expect((await get()).status).toBe(200)
      const limited = await get()
      expect(limited.status).toBe(429)
      expect(limited.headers.get('retry-after')).toBe('60')
      // A millisecond short of Retry-After the client is still limited…
      time.advance(Number(limited.headers.get('retry-after')) * 1000 - 1)
      const early = await get()
      expect(early.status).toBe(429)
      expect(early.json).toEqual(rateLimited('default_read'))
      // …and once it has passed, served again.
      time.advance(1)
      const again = await get()
      expect(again.status).toBe(200)
    })

    it('another client is unaffected: another agent token, another forwarded address', async () => {
      const app = await start({
        rateLimiters: { default_read: limiter(2, 60) },
        rateLimitLoopback: true,
        network: { allowedIps: [], trustedProxyIps: ['127.0.0.1'] },
      })
      const a = await app.tokens.create({ role: 'agent', tenant: 'shared', expiresInSeconds: null })
      const b = await app.tokens.create({ role: 'agent', tenant: 'shared', expiresInSeconds: null })
      const get = (token: string, headers: Record<string, string> = {}) => rawRequest(app.url, { method: 'GET', path: '/tasks', token, headers })
      await get(a.token)
      await get(a.token)
      expect((await get(a.token)).status).toBe(429)
      expect((await get(b.token)).status).toBe(200)
      // Agent tokens are keyed by token, not address: a's limit follows it through any proxy hop.
      expect((await get(a.token, { 'x-forwarded-for': '198.51.100.77' })).status).toBe(429)

      // The operator token has no id: it is keyed by the client address, here the forwarded one.
      const fromOne = { 'x-forwarded-for': '198.51.100.1' }
      expect((await get(OPERATOR_TOKEN, fromOne)).status).toBe(200)
      expect((await get(OPERATOR_TOKEN, fromOne)).status).toBe(200)
      const limited = await get(OPERATOR_TOKEN, fromOne)
      expect(limited.status).toBe(429)
      expect(limited.json).toEqual(rateLimited('default_read'))
      expect((await get(OPERATOR_TOKEN, { 'x-forwarded-for': '198.51.100.2' })).status).toBe(200)
      expect((await get(OPERATOR_TOKEN, { 'x-forwarded-for': '2001:db8::2' })).status).toBe(200)
    })

    it('loopback clients are exempt by default, but not when their address came through a trusted proxy', async () => {
      const app = await start({
        rateLimiters: { default_read: limiter(1, 60), default_write: limiter(1, 60) },
        network: { allowedIps: [], trustedProxyIps: ['127.0.0.1'] },
      })
      const agent = await app.tokens.create({ role: 'agent', tenant: 'loop', expiresInSeconds: null })
      for (let i = 0; i < 5; i++) {
        expect((await rawRequest(app.url, { method: 'GET', path: '/tasks' })).status).toBe(200)
        expect((await rawRequest(app.url, { method: 'GET', path: '/tasks', token: agent.token })).status).toBe(200)
        expect((await rawRequest(app.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: `loop ${i}` }) })).status).toBe(201)
      }
      const forwarded = { 'x-forwarded-for': '203.0.113.50' }
      expect((await rawRequest(app.url, { method: 'GET', path: '/tasks', headers: forwarded })).status).toBe(200)
      expect((await rawRequest(app.url, { method: 'GET', path: '/tasks', headers: forwarded })).status).toBe(429)
    })

    it('X-Forwarded-For from an untrusted peer does not make a new client: spoofed addresses share the peer bucket', async () => {
      const app = await start({ rateLimiters: { default_read: limiter(2, 60) }, rateLimitLoopback: true, network: { allowedIps: [], trustedProxyIps: [] } })
      const statuses: number[] = []
      for (const ip of ['198.51.100.10', '198.51.100.11', '198.51.100.12', '198.51.100.13']) {
        statuses.push((await rawRequest(app.url, { method: 'GET', path: '/tasks', headers: { 'x-forwarded-for': ip } })).status)
      }
      expect(statuses).toEqual([200, 200, 429, 429])
    })

    it('an unauthenticated burst learns nothing beyond 401 and does not spend the bucket', async () => {
      const app = await start({ rateLimiters: { default_read: limiter(1, 60), default_write: limiter(1, 60) }, rateLimitLoopback: true })
      for (let i = 0; i < 10; i++) {
        const anonymous = await rawRequest(app.url, { method: 'GET', path: '/tasks', token: null })
        expect({ status: anonymous.status, json: anonymous.json, retry: anonymous.headers.get('retry-after') }).toEqual({
          status: 401,
          json: MISSING,
          retry: null,
        })
        const wrong = await rawRequest(app.url, { method: 'POST', path: '/tasks', token: 'wrong-token', body: '{"title":"x"}' })
        expect({ status: wrong.status, json: wrong.json }).toEqual({ status: 401, json: INVALID })
      }
      // The same address, authenticated: its single point per bucket is still there.
      expect((await rawRequest(app.url, { method: 'GET', path: '/tasks' })).status).toBe(200)
      expect((await rawRequest(app.url, { method: 'POST', path: '/tasks', body: '{"title":"x"}' })).status).toBe(201)
      expect((await rawRequest(app.url, { method: 'GET', path: '/tasks' })).status).toBe(429)
    })

    it('the public pages outside health and discovery are limited too, per address, with the documented 429', async () => {
      const app = await start({ rateLimiters: { default_read: limiter(1, 60) }, rateLimitLoopback: true })
      // One read bucket per address: the first read spends its one point, every later one is refused.
      for (const path of ['/', '/openapi.json', '/openapi.yaml', '/docs']) {
        const first = await rawRequest(app.url, { method: 'GET', path, token: null })
        const second = await rawRequest(app.url, { method: 'GET', path, token: null })
        expect({ path, first: first.status, second: second.status, json: second.json }).toEqual({
          path,
          first: path === '/' ? 200 : 429,
          second: 429,
          json: rateLimited('default_read'),
        })
      }
    })

    it('every operation the IP allowlist and the rate limits apply to documents its 403 and 429', () => {
      const covered = loadOperations().filter((op) => !isHealthOrDiscovery(op.path))
      expect(covered.map((op) => op.operationId)).toEqual(expect.arrayContaining(['getRoot', 'getOpenApiJson', 'getOpenApiYaml', 'getDocs']))
      for (const op of covered)
        expect({ op: op.operationId, statuses: op.statuses }).toEqual({ op: op.operationId, statuses: expect.arrayContaining([403, 429]) })
    })

    it('health and discovery are never limited', async () => {
      const app = await start({ rateLimiters: { default_read: limiter(1, 60) }, rateLimitLoopback: true })
      for (let i = 0; i < 4; i++) {
        for (const path of ['/health/ready', '/health/live', '/ready', '/alive', '/api/v1/health/live', '/.well-known/agent.json']) {
          const res = await rawRequest(app.url, { method: 'GET', path, token: null })
          expect({ path, status: res.status }).toEqual({ path, status: 200 })
        }
      }
    })

    it('a failing limiter store does not take the API down (the request is served)', async () => {
      const broken = { consume: async () => Promise.reject(new Error('store unreachable')) }
      const app = await start({ rateLimiters: { default_read: broken, default_write: broken }, rateLimitLoopback: true })
      expect((await rawRequest(app.url, { method: 'GET', path: '/tasks' })).status).toBe(200)
      expect((await rawRequest(app.url, { method: 'POST', path: '/tasks', body: '{"title":"x"}' })).status).toBe(201)
    })
  })

  describe('IP allowlist', () => {
    let app: TestApp
    beforeAll(async () => {
      app = await startTestApp({
        engine,
        network: { allowedIps: ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32'], trustedProxyIps: ['127.0.0.1', '172.16.0.0/12'] },
      })
    })
    afterAll(async () => {
      await app?.close()
    })
    const from = (xff: string | null, path = '/tasks', token: string | null = OPERATOR_TOKEN) =>
      rawRequest(app.url, { method: 'GET', path, token, headers: xff === null ? {} : { 'x-forwarded-for': xff } })

    it('admits addresses inside the IPv4 and IPv6 CIDRs and single addresses', async () => {
      for (const ip of ['10.0.0.1', '10.255.255.254', '192.0.2.7', '2001:db8::1', '2001:db8:ffff::42', '::ffff:10.1.2.3']) {
        const res = await from(ip)
        expect({ ip, status: res.status }).toEqual({ ip, status: 200 })
      }
    })

    it('refuses anything else with 403 and the address, before authentication', async () => {
      for (const ip of ['11.0.0.1', '192.0.2.8', '203.0.113.9', '2001:db9::1', '::ffff:11.0.0.1']) {
        const res = await from(ip)
        const shown = ip.startsWith('::ffff:') ? ip.slice(7) : ip
        expect({ ip, status: res.status, json: res.json }).toEqual({ ip, status: 403, json: notAllowed(shown) })
        const anonymous = await from(ip, '/tasks', null)
        expect({ ip, status: anonymous.status, json: anonymous.json }).toEqual({ ip, status: 403, json: notAllowed(shown) })
      }
      const write = await rawRequest(app.url, { method: 'POST', path: '/tasks', headers: { 'x-forwarded-for': '203.0.113.9' }, body: '{"title":"blocked"}' })
      expect(write.status).toBe(403)
      expect(await taskCount(app)).toBe(0)
    })

    it('always admits a loopback peer, but never a loopback address a proxy forwards (issue 26)', async () => {
      expect((await from(null)).status).toBe(200)
      // The proxy (trusted, on 127.0.0.1) forwards a client that claims to be local: it is not this machine.
      for (const forwarded of ['127.0.0.1', '::ffff:127.0.0.1', '::1', '127.0.0.2', '127.0.0.1, 127.0.0.1']) {
        const res = await from(forwarded)
        const shown = forwarded
          .split(',')[0]
          ?.trim()
          .replace(/^::ffff:/, '')
        expect({ forwarded, status: res.status, json: res.json }).toEqual({ forwarded, status: 403, json: { detail: `IP ${shown} not in allowed list` } })
      }
    })

    it('exempts health and /.well-known/*, but not the other public paths', async () => {
      for (const path of ['/health/ready', '/health/live', '/ready', '/alive', '/api/v1/health/ready', '/api/v1/alive']) {
        const res = await from('203.0.113.9', path, null)
        expect({ path, status: res.status }).toEqual({ path, status: 200 })
      }
      for (const path of ['/.well-known/agent.json', '/.well-known/agent.json/keys', '/.well-known/no-such-document']) {
        const foreign = await from('203.0.113.9', path, null)
        const local = await from(null, path, null)
        expect({ path, status: foreign.status, text: foreign.text }).toEqual({ path, status: local.status, text: local.text })
        expect(foreign.status).not.toBe(403)
      }
      for (const path of ['/', '/openapi.json', '/openapi.yaml', '/docs', '/a2a/agent-card']) {
        const res = await from('203.0.113.9', path, null)
        expect({ path, status: res.status, json: res.json }).toEqual({ path, status: 403, json: notAllowed('203.0.113.9') })
      }
    })

    it('takes the client from X-Forwarded-For only behind a trusted proxy, right-most untrusted hop first', async () => {
      // The client put an allowed address on the left; the proxy appended the real one.
      expect((await from('10.1.2.3, 203.0.113.9')).json).toEqual(notAllowed('203.0.113.9'))
      // Trusted proxies (172.16.0.0/12) between client and us are skipped.
      expect((await from('203.0.113.9, 172.16.0.5, 172.20.1.1')).json).toEqual(notAllowed('203.0.113.9'))
      expect((await from('203.0.113.9, 10.1.2.3, 172.16.0.5')).status).toBe(200)
      // A proxy that writes the port (`ip:port`, `[v6]:port`) still names the client.
      expect((await from('10.1.2.3, 203.0.113.9:5555')).json).toEqual(notAllowed('203.0.113.9'))
      expect((await from('10.1.2.3, [2001:db9::1]:443')).json).toEqual(notAllowed('2001:db9::1'))
      expect((await from('203.0.113.9, 10.1.2.3:8080')).status).toBe(200)
      // An unreadable right-most hop is no licence to believe the client-written hops to its left.
      expect((await from('10.1.2.3, not-an-ip')).json).toEqual(notAllowed('unknown'))
      expect((await from('10.1.2.3, ')).json).toEqual(notAllowed('unknown'))
    })

    it('ignores X-Forwarded-For from an untrusted peer', async () => {
      const untrusted = await startTestApp({ engine, network: { allowedIps: ['10.0.0.0/8'], trustedProxyIps: ['192.0.2.1'] } })
      try {
        // The peer is loopback (allowed); a forged header neither locks it out nor lets it in as someone else.
        const res = await rawRequest(untrusted.url, { method: 'GET', path: '/tasks', headers: { 'x-forwarded-for': '203.0.113.9' } })
        expect(res.status).toBe(200)
      } finally {
        await untrusted.close()
      }
    })
  })

  describe('body cap', () => {
    let app: TestApp
    beforeAll(async () => {
      app = await startTestApp({ engine, rateLimiters: { default_write: limiter(1000, 60) }, rateLimitLoopback: true })
    })
    afterAll(async () => {
      await app?.close()
    })
    const POSTS = loadOperations().filter((o) => o.method === 'POST')

    it('an unauthenticated 2 MiB body gets 401, not 413', async () => {
      const body = jsonOfSize(2 * MiB)
      for (const op of POSTS.slice(0, 4)) {
        const path = op.path.replace(/\{[^}]+\}/g, 'abc')
        const anonymous = await rawRequest(app.url, { method: 'POST', path, token: null, body })
        expect({ path, status: anonymous.status, json: anonymous.json }).toEqual({ path, status: 401, json: MISSING })
        const wrong = await rawRequest(app.url, { method: 'POST', path, token: 'not-a-token', body })
        expect({ path, status: wrong.status, json: wrong.json }).toEqual({ path, status: 401, json: INVALID })
      }
    })

    it('an authenticated 2 MiB body gets 413 with the exact text on every POST operation, and writes nothing', async () => {
      const body = jsonOfSize(2 * MiB)
      const before = await taskCount(app)
      for (const op of POSTS) {
        const path = op.path.replace(/\{[^}]+\}/g, 'abc')
        const res = await rawRequest(app.url, { method: 'POST', path, body, headers: op.headers })
        // In the operation's own error format (A2A v1.0: a google.rpc.Status or a JSON-RPC error, reason PAYLOAD_TOO_LARGE).
        const detail = { detail: 'Request body 2097152 bytes exceeds 1048576-byte limit' }
        expect({ path, status: res.status, json: res.json }).toEqual({
          path,
          status: 413,
          json: refusalIn(op.errorFormat, 413, detail, 'PAYLOAD_TOO_LARGE', 'INVALID_ARGUMENT'),
        })
      }
      expect(await taskCount(app)).toBe(before)
    })

    it('the cap is 1 MiB exactly: 1048576 bytes are read, 1048577 are not', async () => {
      const atCap = await rawRequest(app.url, { method: 'POST', path: '/tasks', body: jsonOfSize(MiB) })
      expect(atCap.status).toBe(201)
      const over = await rawRequest(app.url, { method: 'POST', path: '/tasks', body: jsonOfSize(MiB + 1) })
      expect(over.status).toBe(413)
      expect(over.json).toEqual({ detail: 'Request body 1048577 bytes exceeds 1048576-byte limit' })
    })

    it('a chunked body without Content-Length is capped too', async () => {
      const chunk = Buffer.alloc(64 * 1024, 0x20)
      const chunks = [Buffer.from('{"title":"x"'), ...Array.from({ length: 40 }, () => chunk), Buffer.from('}')]
      const res = await wireRequest(app.url, {
        method: 'POST',
        path: '/tasks',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        chunks,
      })
      expect(res.status).toBe(413)
      // No Content-Length to quote: the limit alone, not a made-up size.
      expect(JSON.parse(res.text)).toEqual({ detail: 'Request body exceeds 1048576-byte limit' })
    })
  })

  describe('headers and errors', () => {
    const HELMET: Readonly<Record<string, string | RegExp>> = {
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'content-security-policy': /default-src 'self'/,
      'strict-transport-security': /max-age=\d+/,
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'x-dns-prefetch-control': 'off',
      'x-permitted-cross-domain-policies': 'none',
      'x-download-options': 'noopen',
      'origin-agent-cluster': '?1',
      'x-xss-protection': '0',
    }

    it('every kind of response carries helmet headers and no X-Powered-By', async () => {
      const app = await start({
        rateLimiters: { default_read: limiter(1, 60) },
        rateLimitLoopback: true,
        network: { allowedIps: ['10.0.0.0/8'], trustedProxyIps: ['127.0.0.1'] },
      })
      const responses = {
        200: await rawRequest(app.url, { method: 'GET', path: '/health/live', token: null }),
        401: await rawRequest(app.url, { method: 'GET', path: '/tasks', token: null }),
        403: await rawRequest(app.url, { method: 'GET', path: '/tasks', headers: { 'x-forwarded-for': '203.0.113.9' } }),
        404: await rawRequest(app.url, { method: 'GET', path: '/tasks/0123456789ab' }),
        413: await rawRequest(app.url, { method: 'POST', path: '/tasks', body: jsonOfSize(2 * MiB) }),
        422: await rawRequest(app.url, { method: 'POST', path: '/tasks', body: '{}' }),
        429: await rawRequest(app.url, { method: 'GET', path: '/tasks' }),
      }
      for (const [status, res] of Object.entries(responses)) {
        expect({ status: res.status }).toEqual({ status: Number(status) })
        expect(res.headers.get('x-powered-by')).toBeNull()
        expect(res.headers.get('content-type')).toMatch(/^application\/json/)
        for (const [name, value] of Object.entries(HELMET)) {
          const actual = res.headers.get(name)
          if (typeof value === 'string') expect({ status, name, actual }).toEqual({ status, name, actual: value })
          else expect(actual, `${status} ${name}`).toMatch(value)
        }
      }
    })

    it('an unexpected error is a 500 with a fixed text: no message, no stack; the error goes to the log', async () => {
      const logged: unknown[] = []
      const logger = { error: (obj: unknown) => logged.push(obj), warn() {}, info() {}, debug() {} }
      const app = await start({
        logger,
        resolveToken: async () => {
          throw new Error('token store exploded at /srv/secret/path.ts:42')
        },
      })
      const res = await rawRequest(app.url, { method: 'GET', path: '/tasks' })
      expect(res.status).toBe(500)
      expect(res.json).toEqual({ detail: 'Internal Server Error' })
      expect(res.text).not.toMatch(/exploded|secret|\.ts|at /)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      expect(res.headers.get('x-powered-by')).toBeNull()
      expect(JSON.stringify(logged.map((l) => String((l as { err?: unknown }).err)))).toMatch(/token store exploded/)
    })

    it('a failure inside a write rolls the write back and answers the fixed 500', async () => {
      const failing: TaskObserver = {
        onTaskChange: async (_repos, change) => {
          if (change.after.title === 'explode') throw new Error('observer failed with /internal/detail')
        },
      }
      const app = await start({ taskObservers: [failing] })
      const res = await rawRequest(app.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: 'explode' }) })
      expect(res.status).toBe(500)
      expect(res.json).toEqual({ detail: 'Internal Server Error' })
      expect(await taskCount(app)).toBe(0)
      expect((await rawRequest(app.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: 'fine' }) })).status).toBe(201)
      expect(await taskCount(app)).toBe(1)
    })

    it('requests the router or the body parser cannot read get JSON client errors, never an HTML page', async () => {
      const app = await start()
      const undecodable: [string, string][] = [
        ['/tasks/%FF', 'task_id'],
        ['/tasks/%', 'task_id'],
        ['/tasks/%E0%A4%A', 'task_id'],
        ['/a2a/tasks/%FF', 'a2a_task_id'],
        ['/tasks/%FF/claim', 'task_id'],
        ['/tasks/next/%C0%AF', 'role'],
        ['/api/v1/tasks/%ZZ', 'task_id'],
      ]
      for (const [path, param] of undecodable) {
        const method = path.endsWith('/claim') ? 'POST' : 'GET'
        const res = await rawRequest(app.url, { method, path, ...(method === 'POST' && { body: '{}' }) })
        // The route matcher cannot decode the path: the contract's 422 validation list, located at the parameter.
        expect({ path, status: res.status, json: res.json }).toEqual({
          path,
          status: 422,
          json: { detail: [{ loc: ['path', param], msg: 'Path parameter is not valid percent-encoded UTF-8', type: 'value_error' }] },
        })
        expect(res.headers.get('content-type'), path).toMatch(/^application\/json/)
        expect(res.text, path).not.toMatch(/<html|URIError|at decodeURIComponent/i)
      }
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const res = await rawRequest(app.url, { method: 'POST', path: '/tasks', body: '{"title":"not compressed"}', headers: { 'content-encoding': encoding } })
        // A status the operation documents (422), in the validation shape, located at the body.
        expect({ encoding, status: res.status, json: res.json }).toEqual({
          encoding,
          status: 422,
          json: { detail: [{ loc: ['body'], msg: 'Request body does not decode as its Content-Encoding', type: 'value_error' }] },
        })
      }
      expect(await taskCount(app)).toBe(0)
    })
  })
})

describe('configuration parsing', () => {
  const configError = (env: Record<string, string>): string => {
    try {
      loadConfig(env, '/tmp')
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError)
      return (error as Error).message
    }
    throw new Error(`loadConfig accepted ${JSON.stringify(env)}`)
  }

  it('parses IPv4 and IPv6 CIDRs and single addresses, trimmed', () => {
    const config = loadConfig({ BERNSTEIN_ALLOWED_IPS: ' 10.0.0.0/8 , 192.0.2.7,2001:db8::/32 ', BERNSTEIN_TRUSTED_PROXY_IPS: '127.0.0.1,::1/128' }, '/tmp')
    expect(config.allowedIps).toEqual(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32'])
    expect(config.trustedProxyIps).toEqual(['127.0.0.1', '::1/128'])
    expect(loadConfig({}, '/tmp').allowedIps).toEqual([])
  })

  it.each([
    ['10.0.0.0/33'],
    ['10.0.0/8'],
    ['10.0.0.0/8/1'],
    ['10.0.0.0/'],
    ['10.0.0.0/-1'],
    ['10.0.0.0/8.5'],
    ['2001:db8::/129'],
    ['localhost'],
    ['10.0.0.0/8,,192.0.2.1'],
    ['256.0.0.1'],
    ['10.0.0.0/8 10.1.0.0/16'],
  ])('refuses the bad CIDR list %j with a message naming the variable and the entry', (value) => {
    for (const name of ['BERNSTEIN_ALLOWED_IPS', 'BERNSTEIN_TRUSTED_PROXY_IPS']) {
      const message = configError({ [name]: value })
      expect(message).toMatch(new RegExp(`^${name}: '.*' is not an IPv4/IPv6 address or CIDR$`))
    }
  })

  it.each([['abc'], ['-1'], ['1.5'], ['1e3'], ['0x10'], ['ten']])('refuses the bad rate-limit number %j', (value) => {
    for (const name of ['BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN', 'BERNSTEIN_RATE_LIMIT_READ_PER_MIN']) {
      expect(configError({ [name]: value })).toBe(`${name} must be a whole number from 0 (disables) to 1000000, got '${value}'`)
    }
  })

  it('refuses limits and intervals past their maximum: a delay past 2^31 - 1 ms would fire after 1 ms', () => {
    for (const [name, max] of [
      ['BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN', 1_000_000],
      ['BERNSTEIN_MAX_CONNECTIONS', 1_000_000],
      ['BERNSTEIN_MAX_WRITES_IN_FLIGHT', 1_000_000],
      ['BERNSTEIN_REQUEST_DEADLINE_MS', 3_600_000],
      ['BERNSTEIN_MAX_EVENT_LOOP_DELAY_MS', 600_000],
      ['BERNSTEIN_MAX_WRITE_LATENCY_MS', 600_000],
      ['BERNSTEIN_FEDERATION_POLL_MS', 86_400_000],
    ] as const) {
      expect(configError({ [name]: String(max + 1) })).toBe(`${name} must be a whole number from 0 (disables) to ${max}, got '${max + 1}'`)
      expect(configError({ [name]: '3000000000' })).toMatch(/^\S+ must be a whole number from 0 \(disables\) to \d+, got '3000000000'$/)
      expect(() => loadConfig({ [name]: String(max) }, '/tmp')).not.toThrow()
    }
    expect(loadConfig({ BERNSTEIN_REQUEST_DEADLINE_MS: '3600000', BERNSTEIN_FEDERATION_POLL_MS: '0' }, '/tmp')).toMatchObject({
      http: { requestDeadlineMs: 3_600_000 },
      federationPollMs: 0,
    })
  })

  it('an empty switch is off for the five documented switches, and the default for the others, as any empty variable', () => {
    const pinned = { BERNSTEIN_TRUSTED_PEER_FINGERPRINTS: `sha256:${'a'.repeat(64)}` }
    // Pinned peers must sign: an empty value keeps that default instead of turning the requirement off.
    expect(loadConfig({ ...pinned, BERNSTEIN_REQUIRE_PEER_SIGNATURE: '' }, '/tmp').requirePeerSignature).toBe(true)
    expect(loadConfig({ ...pinned, BERNSTEIN_REQUIRE_PEER_SIGNATURE: ' ' }, '/tmp').requirePeerSignature).toBe(true)
    expect(loadConfig({ ...pinned, BERNSTEIN_REQUIRE_PEER_SIGNATURE: '0' }, '/tmp').requirePeerSignature).toBe(false)
    expect(loadConfig({ BERNSTEIN_DB_PREPARED_STATEMENTS: '' }, '/tmp').dbPreparedStatements).toBe(true)
    expect(loadConfig({ BERNSTEIN_ALLOW_UNSIGNED_PEERS: '', BERNSTEIN_A2A_CONFORMANCE_AGENT: '' }, '/tmp')).toMatchObject({
      allowUnsignedPeers: false,
      a2aConformanceAgent: false,
    })
    expect(
      loadConfig(
        {
          BERNSTEIN_AUTH_DISABLED: '',
          BERNSTEIN_MIGRATE_ON_START: '',
          BERNSTEIN_VALIDATE_RESPONSES: '',
          BERNSTEIN_RATE_LIMIT_LOOPBACK: '',
          BERNSTEIN_LINEAGE_STRICT: '',
        },
        '/tmp',
      ),
    ).toMatchObject({ authDisabled: false, migrateOnStart: false, validateResponses: false, rateLimitLoopback: false, lineageStrict: false })
  })

  it('accepts whole numbers (0 disables) and defaults to 30 writes / 300 reads per minute', () => {
    expect(loadConfig({ BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN: '0', BERNSTEIN_RATE_LIMIT_READ_PER_MIN: ' 12 ' }, '/tmp')).toMatchObject({
      rateLimitWritePerMin: 0,
      rateLimitReadPerMin: 12,
    })
    expect(loadConfig({}, '/tmp')).toMatchObject({ rateLimitWritePerMin: 30, rateLimitReadPerMin: 300, rateLimitLoopback: false })
  })

  it.each([['70000'], ['-1'], ['80a'], ['8.5']])('refuses the bad port %j', (value) => {
    expect(configError({ BERNSTEIN_PORT: value })).toBe(`BERNSTEIN_PORT must be a port number 0-65535, got '${value}'`)
  })

  it('refuses a bad loopback flag and a short operator token', () => {
    expect(configError({ BERNSTEIN_RATE_LIMIT_LOOPBACK: 'maybe' })).toBe(
      "BERNSTEIN_RATE_LIMIT_LOOPBACK must be one of 1/true/yes/on or 0/false/no/off, got 'maybe'",
    )
    expect(loadConfig({ BERNSTEIN_RATE_LIMIT_LOOPBACK: 'YES' }, '/tmp').rateLimitLoopback).toBe(true)
    expect(configError({ BERNSTEIN_AUTH_TOKEN: 'short' })).toBe('BERNSTEIN_AUTH_TOKEN must be at least 16 characters')
  })

  it('counts the documented character limits in code points, as Python does: an astral character is one, not two', () => {
    const emoji = '\u{1F600}'
    // 8 emoji are 16 UTF-16 code units but 8 characters: short.
    expect(configError({ BERNSTEIN_AUTH_TOKEN: emoji.repeat(8) })).toBe('BERNSTEIN_AUTH_TOKEN must be at least 16 characters')
    expect(configError({ BERNSTEIN_METRICS_TOKEN: emoji.repeat(8) })).toBe('BERNSTEIN_METRICS_TOKEN must be at least 16 characters')
    expect(loadConfig({ BERNSTEIN_AUTH_TOKEN: emoji.repeat(16), BERNSTEIN_METRICS_TOKEN: `m${emoji.repeat(15)}` }, '/tmp')).toMatchObject({
      authToken: emoji.repeat(16),
      metricsToken: `m${emoji.repeat(15)}`,
    })
    // 200 emoji are 400 code units but 200 characters: within the issuer's 1-200.
    expect(loadConfig({ BERNSTEIN_A2A_ISSUER: emoji.repeat(200) }, '/tmp').issuer).toBe(emoji.repeat(200))
    expect(configError({ BERNSTEIN_A2A_ISSUER: emoji.repeat(201) })).toBe('BERNSTEIN_A2A_ISSUER must be 1-200 printable characters')
    expect(configError({ BERNSTEIN_A2A_ISSUER: 'i'.repeat(201) })).toBe('BERNSTEIN_A2A_ISSUER must be 1-200 printable characters')
  })

  it.each([['bad\u0001name'], ['bad\u007fname'], ['bad\u0085name'], ['bad\u2028name'], ['bad\u2029name'], ['bad\ud800name']])(
    'refuses an issuer with a character that does not print: %j',
    (issuer) => {
      expect(configError({ BERNSTEIN_A2A_ISSUER: issuer })).toBe('BERNSTEIN_A2A_ISSUER must be 1-200 printable characters')
    },
  )

  it('reads per-peer tokens that carry "=" (base64 padding), and refuses a peer URL with a query or a fragment', () => {
    expect(loadConfig({ BERNSTEIN_PEER_TOKENS: 'https://peer-a.example/=dG9rZW4=, http://peer-b.example:8052=a=b==' }, '/tmp').peerTokens).toEqual({
      'https://peer-a.example': 'dG9rZW4=',
      'http://peer-b.example:8052': 'a=b==',
    })
    for (const entry of ['https://peer.example/x?a=b=token', 'https://peer.example#f=token', 'peer.example=token', '=token', 'https://peer.example=']) {
      expect(configError({ BERNSTEIN_PEER_TOKENS: entry })).toBe(`BERNSTEIN_PEER_TOKENS: '${entry}' is not <peer URL>=<token>`)
    }
  })
})
