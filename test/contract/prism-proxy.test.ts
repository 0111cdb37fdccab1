import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadContract } from '../../src/http/openapi-document.js'
import { type RunningPrism, startPrism } from '../helpers/prism.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

/**
 * The server contract: the real server behind `prism proxy --errors`, which checks every response against
 * openapi.yaml and turns a violation into a 500 `…#VIOLATIONS`. Every operation of the document is exercised
 * (the list comes from the document itself), with its success and its documented error statuses.
 * `--validate-request=false` forwards the deliberately invalid requests, so the server's own 4xx bodies are
 * checked too. (Prism answers unparseable JSON and a missing Authorization header itself, without forwarding, so
 * those two are sent as a wrong body shape and a wrong token instead.)
 */

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

interface Operation {
  readonly method: (typeof METHODS)[number]
  /** As in the document, e.g. `/api/v1/tasks/{task_id}`. */
  readonly template: string
  readonly operationId: string
  readonly statuses: readonly string[]
}

const document = loadContract().document
const operations: Operation[] = Object.entries(document.paths).flatMap(([template, item]) =>
  METHODS.filter((m) => item[m] !== undefined).map((method) => {
    const op = item[method] as { operationId?: string; responses?: Record<string, unknown> }
    return { method, template, operationId: op.operationId ?? `${method} ${template}`, statuses: Object.keys(op.responses ?? {}) }
  }),
)

const PREFIX = '/api/v1'
const unprefixed = (template: string): string => (template.startsWith(PREFIX + '/') ? template.slice(PREFIX.length) : template)

interface Request {
  readonly path: string
  readonly query?: string
  readonly body?: string
  readonly headers?: Record<string, string>
  /** Bearer token; the operator's by default, null for none. */
  readonly token?: string | null
}

interface Case {
  readonly label: string
  readonly status: number
  readonly request: (ctx: Context) => Promise<Request>
}

interface Context {
  readonly upstream: TestApp
  readonly agentToken: string
  /** A fresh task, driven through the API into `state`. */
  task(state: 'open' | 'claimed' | 'in_progress' | 'done' | 'cancelled'): Promise<string>
  /** A fresh A2A task: its id and its linked task's id. */
  a2aTask(): Promise<{ id: string; taskId: string }>
  etag(path: string): Promise<string>
}

const json = (value: unknown): string => JSON.stringify(value)
const TOO_LONG_ID = 'a'.repeat(65)
const V0_SENDER = { name: 'globex-orch', description: 'Globex orchestrator', capabilities: ['code_review'], endpoint: 'http://globex.test/a2a' }

/** Requests per operation (keyed by method and path without the /api/v1 prefix). */
const CASES: Readonly<Record<string, readonly Case[]>> = {
  'get /': [{ label: 'banner', status: 200, request: async () => ({ path: '/', token: null }) }],
  'get /health': [{ label: 'summary', status: 200, request: async () => ({ path: '/health' }) }],
  'get /health/ready': [{ label: 'ready', status: 200, request: async () => ({ path: '/health/ready', token: null }) }],
  'get /health/live': [{ label: 'live', status: 200, request: async () => ({ path: '/health/live', token: null }) }],
  'get /ready': [{ label: 'ready', status: 200, request: async () => ({ path: '/ready', token: null }) }],
  'get /alive': [{ label: 'alive', status: 200, request: async () => ({ path: '/alive', token: null }) }],
  'get /openapi.json': [{ label: 'document', status: 200, request: async () => ({ path: '/openapi.json', token: null }) }],
  'get /openapi.yaml': [{ label: 'document', status: 200, request: async () => ({ path: '/openapi.yaml', token: null }) }],
  'get /docs': [{ label: 'page', status: 200, request: async () => ({ path: '/docs', token: null }) }],
  'get /metrics': [
    { label: 'operator', status: 200, request: async () => ({ path: '/metrics' }) },
    { label: 'wrong token', status: 401, request: async () => ({ path: '/metrics', token: 'not-a-real-token-0123' }) },
    { label: 'agent token', status: 403, request: async (c) => ({ path: '/metrics', token: c.agentToken }) },
  ],
  'post /tasks': [
    {
      label: 'created',
      status: 201,
      request: async () => ({ path: '/tasks', body: json({ title: 'Add a health check', role: 'backend', priority: 1, metadata: { ticket: 'OPS-1' } }) }),
    },
    { label: 'missing title', status: 422, request: async () => ({ path: '/tasks', body: json({ description: 'no title' }) }) },
    { label: 'extra field', status: 422, request: async () => ({ path: '/tasks', body: json({ title: 't', colour: 'red' }) }) },
    { label: 'not JSON', status: 415, request: async () => ({ path: '/tasks', body: 'title=x', headers: { 'content-type': 'text/plain' } }) },
    { label: 'over 1 MiB', status: 413, request: async () => ({ path: '/tasks', body: json({ title: 't', description: 'x'.repeat(1_100_000) }) }) },
    { label: 'wrong token', status: 401, request: async () => ({ path: '/tasks', body: json({ title: 't' }), token: 'not-a-real-token-0123' }) },
  ],
  'get /tasks': [
    { label: 'page', status: 200, request: async () => ({ path: '/tasks', query: 'limit=5' }) },
    { label: 'by status', status: 200, request: async () => ({ path: '/tasks', query: 'status=open&role=backend' }) },
    { label: 'limit 0', status: 422, request: async () => ({ path: '/tasks', query: 'limit=0' }) },
    { label: 'unknown status', status: 422, request: async () => ({ path: '/tasks', query: 'status=nearly' }) },
  ],
  'get /tasks/next/{role}': [
    {
      label: 'claims one',
      status: 200,
      request: async (c) => {
        const role = `role-${Math.random().toString(36).slice(2, 10)}`
        await c.upstream.client.POST('/tasks', { body: { title: 'next', role } })
        return { path: `/tasks/next/${role}`, query: 'agent_id=worker-1' }
      },
    },
    { label: 'none open', status: 204, request: async () => ({ path: '/tasks/next/nobody-has-this-role' }) },
  ],
  'get /tasks/{task_id}': [
    { label: 'found', status: 200, request: async (c) => ({ path: `/tasks/${await c.task('open')}` }) },
    { label: 'unknown', status: 404, request: async () => ({ path: '/tasks/ffffffffffff' }) },
    { label: 'id too long', status: 422, request: async () => ({ path: `/tasks/${TOO_LONG_ID}` }) },
  ],
  'post /tasks/{task_id}/claim': [
    { label: 'claimed', status: 200, request: async (c) => ({ path: `/tasks/${await c.task('open')}/claim`, body: json({ agent_id: 'worker-1' }) }) },
    { label: 'no body', status: 200, request: async (c) => ({ path: `/tasks/${await c.task('open')}/claim` }) },
    { label: 'already done', status: 409, request: async (c) => ({ path: `/tasks/${await c.task('done')}/claim`, body: json({}) }) },
    {
      label: 'stale version',
      status: 409,
      request: async (c) => ({ path: `/tasks/${await c.task('open')}/claim`, query: 'expected_version=7', body: json({}) }),
    },
    { label: 'unknown', status: 404, request: async () => ({ path: '/tasks/ffffffffffff/claim', body: json({}) }) },
  ],
  'post /tasks/{task_id}/progress': [
    {
      label: 'reported',
      status: 200,
      request: async (c) => ({ path: `/tasks/${await c.task('claimed')}/progress`, body: json({ message: 'reproduced', percent: 30 }) }),
    },
    { label: 'missing message', status: 422, request: async (c) => ({ path: `/tasks/${await c.task('claimed')}/progress`, body: json({ percent: 30 }) }) },
    {
      label: 'percent 101',
      status: 422,
      request: async (c) => ({ path: `/tasks/${await c.task('claimed')}/progress`, body: json({ message: 'm', percent: 101 }) }),
    },
    { label: 'terminal task', status: 409, request: async (c) => ({ path: `/tasks/${await c.task('cancelled')}/progress`, body: json({ message: 'late' }) }) },
  ],
  'post /tasks/{task_id}/complete': [
    { label: 'done', status: 200, request: async (c) => ({ path: `/tasks/${await c.task('in_progress')}/complete`, body: json({ result_summary: 'fixed' }) }) },
    { label: 'empty summary', status: 422, request: async (c) => ({ path: `/tasks/${await c.task('claimed')}/complete`, body: json({ result_summary: '' }) }) },
    {
      label: 'cancelled task',
      status: 409,
      request: async (c) => ({ path: `/tasks/${await c.task('cancelled')}/complete`, body: json({ result_summary: 'x' }) }),
    },
    { label: 'unknown', status: 404, request: async () => ({ path: '/tasks/ffffffffffff/complete', body: json({ result_summary: 'x' }) }) },
  ],
  'post /tasks/{task_id}/fail': [
    { label: 'failed', status: 200, request: async (c) => ({ path: `/tasks/${await c.task('claimed')}/fail`, body: json({ reason: 'upstream down' }) }) },
    { label: 'missing reason', status: 422, request: async (c) => ({ path: `/tasks/${await c.task('claimed')}/fail`, body: json({}) }) },
    { label: 'cancelled task', status: 409, request: async (c) => ({ path: `/tasks/${await c.task('cancelled')}/fail`, body: json({ reason: 'x' }) }) },
  ],
  'post /tasks/{task_id}/cancel': [
    { label: 'cancelled', status: 200, request: async (c) => ({ path: `/tasks/${await c.task('open')}/cancel`, body: json({ reason: 'superseded' }) }) },
    { label: 'twice', status: 409, request: async (c) => ({ path: `/tasks/${await c.task('cancelled')}/cancel`, body: json({}) }) },
  ],
  'post /tasks/{task_id}/block': [
    { label: 'blocked', status: 200, request: async (c) => ({ path: `/tasks/${await c.task('claimed')}/block`, body: json({ reason: 'waiting on review' }) }) },
    { label: 'open task', status: 409, request: async (c) => ({ path: `/tasks/${await c.task('open')}/block`, body: json({ reason: 'x' }) }) },
  ],
  'post /tasks/{task_id}/close': [
    { label: 'closed', status: 200, request: async (c) => ({ path: `/tasks/${await c.task('done')}/close`, body: json({}) }) },
    { label: 'open task', status: 409, request: async (c) => ({ path: `/tasks/${await c.task('open')}/close`, body: json({}) }) },
  ],
  'get /a2a/agent-card': [{ label: 'card', status: 200, request: async () => ({ path: '/a2a/agent-card' }) }],
  'get /a2a/agents': [{ label: 'card', status: 200, request: async () => ({ path: '/a2a/agents' }) }],
  'post /a2a/tasks/send': [
    {
      label: 'accepted',
      status: 201,
      request: async () => ({ path: '/a2a/tasks/send', body: json({ sender: 'peer@globex', message: 'Fix the flaky test', role: 'backend' }) }),
    },
    { label: 'missing message', status: 422, request: async () => ({ path: '/a2a/tasks/send', body: json({ sender: 'peer@globex' }) }) },
    { label: 'agent token', status: 403, request: async (c) => ({ path: '/a2a/tasks/send', body: json({ sender: 'a', message: 'b' }), token: c.agentToken }) },
  ],
  'get /a2a/tasks/{a2a_task_id}': [
    { label: 'found', status: 200, request: async (c) => ({ path: `/a2a/tasks/${(await c.a2aTask()).id}` }) },
    {
      label: 'completed, with its receipt',
      status: 200,
      request: async (c) => {
        const { id, taskId } = await c.a2aTask()
        await c.upstream.client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: taskId } }, body: { result_summary: 'done' } })
        return { path: `/a2a/tasks/${id}` }
      },
    },
    { label: 'unknown', status: 404, request: async () => ({ path: '/a2a/tasks/ffffffffffff' }) },
  ],
  'post /a2a/tasks/{a2a_task_id}/artifacts': [
    {
      label: 'added',
      status: 201,
      request: async (c) => ({
        path: `/a2a/tasks/${(await c.a2aTask()).id}/artifacts`,
        body: json({ name: 'patch.diff', data: '--- a\n+++ b\n', content_type: 'text/x-diff' }),
      }),
    },
    { label: 'missing name', status: 422, request: async (c) => ({ path: `/a2a/tasks/${(await c.a2aTask()).id}/artifacts`, body: json({ data: 'x' }) }) },
    { label: 'unknown', status: 404, request: async () => ({ path: '/a2a/tasks/ffffffffffff/artifacts', body: json({ name: 'x' }) }) },
  ],
  'post /a2a/message': [
    {
      label: 'delivered',
      status: 201,
      request: async (c) => ({
        path: '/a2a/message',
        body: json({ sender: 'peer@globex', recipient: 'bernstein', content: 'it flakes under load', task_id: await c.task('open') }),
      }),
    },
    {
      label: 'unknown task',
      status: 404,
      request: async () => ({ path: '/a2a/message', body: json({ sender: 'p', recipient: 'b', content: 'c', task_id: 'ffffffffffff' }) }),
    },
    { label: 'missing content', status: 422, request: async () => ({ path: '/a2a/message', body: json({ sender: 'p', recipient: 'b', task_id: 'x' }) }) },
  ],
  'post /a2a/v0/tasks': [
    {
      label: 'accepted',
      status: 202,
      request: async () => ({
        path: '/a2a/v0/tasks',
        body: json({ sender: V0_SENDER, task: { id: `remote-${Math.random().toString(36).slice(2)}`, message: 'Review the patch', role: 'backend' } }),
      }),
    },
    { label: 'no sender card', status: 400, request: async () => ({ path: '/a2a/v0/tasks', body: json({ task: { id: 'r', message: 'm' } }) }) },
    {
      label: 'empty message',
      status: 409,
      request: async () => ({ path: '/a2a/v0/tasks', body: json({ sender: V0_SENDER, task: { id: 'r-1', message: ' ' } }) }),
    },
  ],
  'get /lineage/tracker-audit': [
    { label: 'page', status: 200, request: async () => ({ path: '/lineage/tracker-audit', query: 'limit=3' }) },
    { label: 'bad cursor', status: 422, request: async () => ({ path: '/lineage/tracker-audit', query: 'cursor=abc' }) },
    { label: 'agent token', status: 403, request: async (c) => ({ path: '/lineage/tracker-audit', token: c.agentToken }) },
  ],
  'get /lineage/tracker-audit/verify': [{ label: 'verdict', status: 200, request: async () => ({ path: '/lineage/tracker-audit/verify' }) }],
  'get /lineage/envelope': [
    { label: 'envelope', status: 200, request: async (c) => ({ path: '/lineage/envelope', query: `ticket_id=${await c.task('done')}` }) },
    { label: 'no ticket', status: 422, request: async () => ({ path: '/lineage/envelope' }) },
  ],
  'get /.well-known/agent.json': [
    { label: 'card', status: 200, request: async () => ({ path: '/.well-known/agent.json', token: null }) },
    {
      label: 'not modified',
      status: 304,
      request: async (c) => ({ path: '/.well-known/agent.json', token: null, headers: { 'if-none-match': await c.etag('/.well-known/agent.json') } }),
    },
  ],
  'get /.well-known/agent-card.json': [
    { label: 'card', status: 200, request: async () => ({ path: '/.well-known/agent-card.json', token: null }) },
    {
      label: 'not modified',
      status: 304,
      request: async (c) => ({ path: '/.well-known/agent-card.json', token: null, headers: { 'if-none-match': await c.etag('/.well-known/agent-card.json') } }),
    },
  ],
  'get /.well-known/agent.json/keys': [{ label: 'jwks', status: 200, request: async () => ({ path: '/.well-known/agent.json/keys', token: null }) }],
  'get /a2a/v0/proof': [
    { label: 'challenge', status: 200, request: async () => ({ path: '/a2a/v0/proof', query: 'nonce=0123456789abcdef-_', token: null }) },
    { label: 'short nonce', status: 422, request: async () => ({ path: '/a2a/v0/proof', query: 'nonce=short', token: null }) },
  ],
  'get /.well-known/a2a-capability-card.json': [
    { label: 'card', status: 200, request: async () => ({ path: '/.well-known/a2a-capability-card.json', token: null }) },
    {
      label: 'not modified',
      status: 304,
      request: async (c) => ({
        path: '/.well-known/a2a-capability-card.json',
        token: null,
        headers: { 'if-none-match': await c.etag('/.well-known/a2a-capability-card.json') },
      }),
    },
  ],
}

/** For an operation the table does not know yet (a new route): a plain request, whose answer must still fit the contract. */
function genericCases(op: Operation): Case[] {
  const path = unprefixed(op.template).replace(/\{[^}]+\}/g, 'ffffffffffff')
  return [{ label: 'generic', status: -1, request: async () => ({ path, ...(op.method !== 'get' && { body: '{}' }) }) }]
}

interface Outcome {
  readonly status: number
  readonly text: string
}

function isViolation(outcome: Outcome): boolean {
  return outcome.status === 500 && outcome.text.includes('#VIOLATIONS')
}

describe('the real server behind prism proxy --errors', () => {
  let upstream: TestApp
  let proxy: RunningPrism
  let ctx: Context
  beforeAll(async () => {
    upstream = await startTestApp()
    proxy = await startPrism('proxy', { upstream: upstream.url, flags: ['--errors', '--validate-request=false'] })
    const agent = await upstream.tokens.create({ role: 'agent', tenant: 'default', expiresInSeconds: null })
    const c = upstream.client
    ctx = {
      upstream,
      agentToken: agent.token,
      async task(state) {
        const created = await c.POST('/tasks', { body: { title: `contract ${state}`, role: 'backend' } })
        const id = created.data?.id as string
        const path = { params: { path: { task_id: id } } }
        if (state === 'cancelled') await c.POST('/tasks/{task_id}/cancel', { ...path, body: {} })
        if (state === 'claimed' || state === 'in_progress' || state === 'done') await c.POST('/tasks/{task_id}/claim', { ...path, body: {} })
        if (state === 'in_progress') await c.POST('/tasks/{task_id}/progress', { ...path, body: { message: 'started' } })
        if (state === 'done') await c.POST('/tasks/{task_id}/complete', { ...path, body: { result_summary: 'done' } })
        const now = await c.GET('/tasks/{task_id}', path)
        if (now.data?.status !== state) throw new Error(`could not drive task to ${state}: ${now.data?.status}`)
        return id
      },
      async a2aTask() {
        const sent = await c.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'contract' } })
        return { id: sent.data?.id as string, taskId: sent.data?.bernstein_task_id as string }
      },
      async etag(path) {
        return (await rawRequest(upstream.url, { method: 'GET', path, token: null })).headers.get('etag') as string
      },
    }
  }, 90_000)
  afterAll(async () => {
    await proxy?.stop()
    await upstream?.close()
  })

  async function send(op: Operation, request: Request): Promise<Outcome> {
    const prefix = op.template.startsWith(PREFIX + '/') ? PREFIX : ''
    const res = await rawRequest(proxy.url, {
      method: op.method.toUpperCase(),
      path: prefix + request.path + (request.query ? `?${request.query}` : ''),
      ...(request.body !== undefined && { body: request.body }),
      ...(request.headers && { headers: request.headers }),
      token: request.token === undefined ? OPERATOR_TOKEN : request.token,
    })
    return { status: res.status, text: res.text }
  }

  it('covers every operation of the document, and the case table names only operations that exist', () => {
    expect(operations.length).toBeGreaterThanOrEqual(60)
    const keys = new Set(operations.map((op) => `${op.method} ${unprefixed(op.template)}`))
    expect(Object.keys(CASES).filter((k) => !keys.has(k))).toEqual([])
  })

  for (const op of operations) {
    const cases = CASES[`${op.method} ${unprefixed(op.template)}`] ?? genericCases(op)
    it(`${op.method.toUpperCase()} ${op.template} (${op.operationId}): ${cases.map((c) => `${c.label} ${c.status > 0 ? c.status : ''}`.trim()).join(', ')}`, async () => {
      for (const c of cases) {
        const outcome = await send(op, await c.request(ctx))
        expect(isViolation(outcome), `${c.label}: the response breaks openapi.yaml: ${outcome.text.slice(0, 2000)}`).toBe(false)
        if (c.status > 0) expect(outcome.status, `${c.label}: ${outcome.text.slice(0, 500)}`).toBe(c.status)
        expect(op.statuses, `${c.label}: status ${outcome.status} is not documented`).toContain(String(outcome.status))
      }
    }, 60_000)
  }
})

describe('the proxy check itself', () => {
  let liar: Server
  let proxy: RunningPrism
  beforeAll(async () => {
    // An upstream that breaks the contract: a health summary without its required fields.
    liar = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"status":"fine"}')
    })
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', () => resolve()))
    const address = liar.address()
    proxy = await startPrism('proxy', {
      upstream: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
      flags: ['--errors', '--validate-request=false'],
    })
  }, 90_000)
  afterAll(async () => {
    await proxy?.stop()
    await new Promise((resolve) => liar?.close(resolve))
  })

  it('turns a contract-breaking response into a 500 VIOLATIONS', async () => {
    const res = await rawRequest(proxy.url, { method: 'GET', path: '/health' })
    expect(isViolation({ status: res.status, text: res.text })).toBe(true)
    expect(res.text).toContain("Response body must have required property 'uptime_s'")
  })
})
