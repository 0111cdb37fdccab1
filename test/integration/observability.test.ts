import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueCapabilityCard } from '../../src/cards/issue-capability-card.js'
import { OPEN_REQUIREMENTS } from '../../src/cards/policy-gate.js'
import { loadConfig } from '../../src/config.js'
import { generateEd25519KeyPair } from '../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { type RunningServer, startServer } from '../../src/server.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'
import { signedDelivery } from '../federation/nodes.js'

const METRICS_TOKEN = 'metrics-scraper-token-0123456789'

/** pino writing JSON lines into memory, as the server writes them to stdout. */
function capturedLogger(): { logger: pino.Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  let buffer = ''
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      buffer += chunk.toString('utf8')
      callback()
    },
  })
  const logger = pino({ level: 'info', base: { service: 'bernstein-a2a' } }, stream)
  return {
    logger,
    text: () => buffer,
    lines: () =>
      buffer
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}

/** The value of one sample in Prometheus text format, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const found: Record<string, string> = {}
    for (const pair of (match[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)) found[pair[1] as string] = pair[2] as string
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[4])
  }
  return undefined
}

const requestLines = (lines: Record<string, unknown>[]) => lines.filter((l) => l['msg'] === 'request')

describe('error logs', () => {
  let t: TestApp
  const log = capturedLogger()
  beforeAll(async () => {
    // An observer that fails unexpectedly: the request ends as the contract's 500 and the failure is logged.
    t = await startTestApp({
      logger: log.logger,
      taskObservers: [
        {
          async onTaskChange(_repos, change) {
            if (change.after.title === 'crash') throw new Error('observer crashed')
          },
        },
      ],
    })
  })
  afterAll(async () => t.close())

  it('carry the request id of the failed request, as its request log line does', async () => {
    const res = await rawRequest(t.url, {
      method: 'POST',
      path: '/tasks',
      body: JSON.stringify({ title: 'crash' }),
      headers: { 'x-request-id': 'req-crash-1' },
    })
    expect(res.status).toBe(500)
    expect(res.json).toEqual({ detail: 'Internal Server Error' })
    const failure = log.lines().find((l) => l['msg'] === 'request failed')
    expect(failure).toMatchObject({ level: 50, request_id: 'req-crash-1', method: 'POST', path: '/tasks', err: { message: 'observer crashed' } })
    expect(requestLines(log.lines()).find((l) => l['request_id'] === 'req-crash-1')).toMatchObject({ status: 500 })
  })
})

describe('request logs', () => {
  let t: TestApp
  const log = capturedLogger()
  beforeAll(async () => {
    t = await startTestApp({ logger: log.logger })
  })
  afterAll(async () => t.close())

  it('echoes a well-formed X-Request-Id and logs the operation by its template, never the concrete path', async () => {
    const res = await rawRequest(t.url, { method: 'GET', path: '/tasks/0123456789ab', headers: { 'x-request-id': 'req-abc.1:2' } })
    expect(res.status).toBe(404)
    expect(res.headers.get('x-request-id')).toBe('req-abc.1:2')
    const line = requestLines(log.lines()).find((l) => l['request_id'] === 'req-abc.1:2')
    expect(line).toMatchObject({
      method: 'GET',
      route: '/tasks/{task_id}',
      operation_id: 'getTask',
      status: 404,
      tenant: 'default',
      service: 'bernstein-a2a',
      level: 30,
    })
    expect(typeof line?.['duration_ms']).toBe('number')
    expect(JSON.stringify(line)).not.toContain('0123456789ab')
  })

  it('replaces a malformed or oversized request id with a generated UUID', async () => {
    for (const bad of ['has space', 'x'.repeat(200), '-leading-dash', 'semi;colon']) {
      const res = await rawRequest(t.url, { method: 'GET', path: '/health', headers: { 'x-request-id': bad } })
      const id = res.headers.get('x-request-id')
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(requestLines(log.lines()).some((l) => l['request_id'] === id && l['route'] === '/health')).toBe(true)
    }
  })

  it('generates an id when none is sent, and logs refused requests with their operation and tenant', async () => {
    const res = await rawRequest(t.url, { method: 'POST', path: '/api/v1/tasks', token: null, body: '{"title":"x"}', headers: { 'x-tenant-id': 'acme' } })
    expect(res.status).toBe(401)
    const id = res.headers.get('x-request-id')
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(requestLines(log.lines()).find((l) => l['request_id'] === id)).toMatchObject({
      route: '/api/v1/tasks',
      operation_id: 'createTaskApiV1',
      status: 401,
      tenant: null,
    })
  })

  it('names the tenant of an authenticated request', async () => {
    const { response } = await t.clientWith({ token: OPERATOR_TOKEN, tenant: 'globex' }).GET('/tasks')
    const id = response.headers.get('x-request-id')
    expect(requestLines(log.lines()).find((l) => l['request_id'] === id)).toMatchObject({ operation_id: 'listTasks', status: 200, tenant: 'globex' })
  })

  it('never writes tokens, Authorization headers or bodies', async () => {
    const agent = await t.tokens.create({ role: 'agent', tenant: 'default', expiresInSeconds: null })
    const marker = 'body-marker-7f3a9c'
    await t.client.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: `do it ${marker}` } })
    await t.clientWith({ token: agent.token }).GET('/tasks')
    await rawRequest(t.url, { method: 'GET', path: '/tasks', token: 'wrong-token-abcdefghijkl' })
    const text = log.text()
    expect(requestLines(log.lines()).length).toBeGreaterThan(5)
    for (const secret of [OPERATOR_TOKEN, agent.token, 'wrong-token-abcdefghijkl', marker, 'Bearer']) expect(text).not.toContain(secret)
    expect(text.toLowerCase()).not.toContain('authorization')
  })
})

describe('GET /metrics', () => {
  let t: TestApp
  const registry = new Registry()
  beforeAll(async () => {
    t = await startTestApp({
      metricsRegistry: registry,
      extraTokens: async (token) => (token === METRICS_TOKEN ? { role: 'metrics', tokenId: 'metrics-token', tenantId: null } : null),
    })
  })
  afterAll(async () => t.close())

  const scrape = async (token: string | null = OPERATOR_TOKEN) => rawRequest(t.url, { method: 'GET', path: '/metrics', token })

  it('counts requests by operationId and status, and their latency, after traffic', async () => {
    const before = (await scrape()).text
    const sendsBefore = sample(before, 'bernstein_http_requests_total', { operation_id: 'a2a_send_task_a2a_tasks_send_post', status: '201' }) ?? 0
    const sent = await t.client.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'count me' } })
    expect(sent.response.status).toBe(201)
    await t.client.GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } })
    const res = await scrape()
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(sample(res.text, 'bernstein_http_requests_total', { operation_id: 'a2a_send_task_a2a_tasks_send_post', method: 'POST', status: '201' })).toBe(
      sendsBefore + 1,
    )
    expect(sample(res.text, 'bernstein_http_requests_total', { operation_id: 'getTask', status: '404' })).toBe(1)
    expect(sample(res.text, 'bernstein_http_request_duration_seconds_count', { operation_id: 'getTask' })).toBe(1)
    expect(sample(res.text, 'bernstein_http_request_duration_seconds_bucket', { operation_id: 'getTask', le: '+Inf' })).toBe(1)
  })

  it('reads tasks by status and chain lengths from the store at scrape time', async () => {
    // Expected values come from this test's own writes, counted against the gauges read before them.
    const before = (await scrape()).text
    const open0 = sample(before, 'bernstein_tasks', { status: 'open' }) ?? 0
    const done0 = sample(before, 'bernstein_tasks', { status: 'done' }) ?? 0
    const audit0 = sample(before, 'bernstein_chain_length', { chain: 'tracker-audit' }) ?? 0
    const spine0 = sample(before, 'bernstein_chain_length', { chain: 'receipt-spine' }) ?? 0
    const sent = await t.client.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'gauge me' } })
    const taskId = sent.data?.bernstein_task_id as string
    const text = (await scrape()).text
    expect(sample(text, 'bernstein_tasks', { status: 'open' })).toBe(open0 + 1)
    expect(sample(text, 'bernstein_tasks', { status: 'done' })).toBe(done0)
    // A send appends one tracker-audit entry and one acceptance receipt to the spine.
    expect(sample(text, 'bernstein_chain_length', { chain: 'tracker-audit' })).toBe(audit0 + 1)
    expect(sample(text, 'bernstein_chain_length', { chain: 'receipt-spine' })).toBe(spine0 + 1)
    await t.client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: taskId } }, body: { result_summary: 'done' } })
    const after = (await scrape()).text
    expect(sample(after, 'bernstein_tasks', { status: 'done' })).toBe(done0 + 1)
    expect(sample(after, 'bernstein_tasks', { status: 'open' })).toBe(open0)
    // Completing appends a lifecycle entry and the completion receipt.
    expect(sample(after, 'bernstein_chain_length', { chain: 'tracker-audit' })).toBe(audit0 + 2)
    expect(sample(after, 'bernstein_chain_length', { chain: 'receipt-spine' })).toBe(spine0 + 2)
  })

  it('counts signatures made: receipts, the capability card and the agent card', async () => {
    const before = (await scrape()).text
    const receipts = sample(before, 'bernstein_signatures_made_total', { kind: 'receipt' }) ?? 0
    await t.client.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'sign me' } })
    await rawRequest(t.url, { method: 'GET', path: '/.well-known/agent.json', token: null })
    const after = (await scrape()).text
    expect(sample(after, 'bernstein_signatures_made_total', { kind: 'receipt' })).toBe(receipts + 1)
    expect(sample(after, 'bernstein_signatures_made_total', { kind: 'capability_card' })).toBeGreaterThanOrEqual(1)
    expect(sample(after, 'bernstein_signatures_made_total', { kind: 'agent_card' })).toBeGreaterThanOrEqual(1)
  })

  it('needs a token: 401 without one, 403 for an agent token', async () => {
    const anonymous = await scrape(null)
    expect(anonymous.status).toBe(401)
    expect(anonymous.text).not.toContain('bernstein_')
    const agent = await t.tokens.create({ role: 'agent', tenant: 'default', expiresInSeconds: null })
    const forbidden = await scrape(agent.token)
    expect(forbidden.status).toBe(403)
    expect(forbidden.json).toEqual({ detail: 'Agent tokens cannot access operator-only endpoints', required_permission: 'admin:manage' })
  })

  it('lets the metrics token read /metrics and nothing else but public paths', async () => {
    expect((await scrape(METRICS_TOKEN)).status).toBe(200)
    for (const [method, path] of [
      ['GET', '/tasks'],
      ['GET', '/lineage/tracker-audit'],
      ['POST', '/a2a/tasks/send'],
      ['GET', '/api/v1/tasks'],
    ] as const) {
      const res = await rawRequest(t.url, { method, path, token: METRICS_TOKEN, ...(method === 'POST' && { body: '{"sender":"a","message":"b"}' }) })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.json).toMatchObject({ detail: 'The metrics token can only read /metrics' })
    }
    expect((await rawRequest(t.url, { method: 'GET', path: '/health', token: METRICS_TOKEN })).status).toBe(200)
  })
})

describe('signatures verified', () => {
  let t: TestApp
  const registry = new Registry()
  const peer = generateEd25519KeyPair()
  beforeAll(async () => {
    t = await startTestApp({
      metricsRegistry: registry,
      inboundTrust: { trustedPeerFingerprints: [keyFingerprint(peer.publicKey)], requirements: OPEN_REQUIREMENTS, strictLineage: false },
    })
  })
  afterAll(async () => t.close())

  it("counts the inbound trust gate verifying peers' capability cards, valid and invalid", async () => {
    const card = await issueCapabilityCard({
      issuer: 'globex-orch',
      name: 'globex',
      tools: ['code_review'],
      policies: { cost_cap_usd: 5, redaction_tier: 'strict', sandbox_profile: 'microvm' },
      ttlSeconds: 3600,
      privateKey: peer.privateKey,
    })
    // Signed by the card's key, as a pinned peer must (RFC 9421), so that the card gate is what decides.
    const delegate = (capability_card: unknown, id: string) =>
      signedDelivery(
        t,
        JSON.stringify({
          sender: { name: 'globex-orch', description: 'Globex orchestrator', capabilities: [], endpoint: 'http://globex.test/a2a', capability_card },
          task: { id, message: 'review this', role: 'backend' },
        }),
        peer.privateKey,
      )
    expect((await delegate(card, 'remote-ok')).status).toBe(202)
    const stored = async (): Promise<number> => (await t.client.GET('/tasks', { params: { query: { limit: 500 } } })).data!.tasks.length
    const tasksBefore = await stored()
    expect(tasksBefore).toBe(1) // the accepted delegation
    const tampered = await delegate({ ...card, card: { ...card.card, description: 'not what was signed' } }, 'remote-bad')
    expect(tampered.status).toBe(409)
    expect(tampered.json).toEqual({ detail: 'sender capability card rejected (signature): card signature is invalid or the card has expired' })
    expect(await stored()).toBe(tasksBefore)
    const text = (await rawRequest(t.url, { method: 'GET', path: '/metrics' })).text
    expect(sample(text, 'bernstein_signatures_verified_total', { kind: 'capability_card', result: 'valid' })).toBe(1)
    expect(sample(text, 'bernstein_signatures_verified_total', { kind: 'capability_card', result: 'invalid' })).toBe(1)
  })
})

describe('BERNSTEIN_METRICS_TOKEN in the real server', () => {
  let server: RunningServer
  let dataDir: string
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-metrics-'))
    const config = loadConfig({
      BERNSTEIN_PORT: '0',
      BERNSTEIN_DATA_DIR: dataDir,
      BERNSTEIN_AUTH_TOKEN: OPERATOR_TOKEN,
      BERNSTEIN_METRICS_TOKEN: METRICS_TOKEN,
      BERNSTEIN_FEDERATION_POLL_MS: '0',
    })
    server = await startServer(config, pino({ level: 'silent' }))
  })
  afterAll(async () => {
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('grants /metrics (with process metrics) and is refused elsewhere; the operator token reads it too', async () => {
    const scraped = await rawRequest(server.url, { method: 'GET', path: '/metrics', token: METRICS_TOKEN })
    expect(scraped.status).toBe(200)
    expect(sample(scraped.text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(scraped.text).toContain('bernstein_tasks{status="open"} 0')
    expect((await rawRequest(server.url, { method: 'GET', path: '/tasks', token: METRICS_TOKEN })).status).toBe(403)
    expect((await rawRequest(server.url, { method: 'GET', path: '/metrics', token: OPERATOR_TOKEN })).status).toBe(200)
    expect((await rawRequest(server.url, { method: 'GET', path: '/metrics', token: 'not-a-token-0123456789' })).status).toBe(401)
  })

  it('refuses a metrics token that is short or equal to the operator token', () => {
    expect(() => loadConfig({ BERNSTEIN_METRICS_TOKEN: 'short' })).toThrow('BERNSTEIN_METRICS_TOKEN must be at least 16 characters')
    expect(() => loadConfig({ BERNSTEIN_METRICS_TOKEN: OPERATOR_TOKEN, BERNSTEIN_AUTH_TOKEN: OPERATOR_TOKEN })).toThrow('must differ')
  })
})
