import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_MOCK_HOST, DEFAULT_MOCK_PORT, mockOptions } from '../../scripts/mock.js'
import { loadContract } from '../../src/http/openapi-document.js'
import { checkAgentCardConformance } from '../../src/agent-card/index.js'
import { verifyCapabilityCard } from '../../src/cards/verify-capability-card.js'
import { verifyA2AReceipt } from '../../src/receipts/verify-a2a-receipt.js'
import { namedFreePort } from '../helpers/cli.js'
import { type RunningPrism, startMockScript } from '../helpers/prism.js'
import { type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

/**
 * `npm run mock` for consumers: a port option that works (`-- --port N`, `MOCK_PORT=N`), and a mock that answers
 * like a fresh node, because openapi.yaml's examples come from one: what a consumer builds against the mock holds
 * against a real node. Two Prism starts in all (about 5 s each).
 */

const SEND = JSON.stringify({ sender: 'peer-agent@globex', message: 'Fix the flaky login test in auth/login.spec.ts', role: 'backend' })

/** The member names of a JSON value, nested ones as dotted paths: its shape, not its values. */
function shape(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return []
  return Object.entries(value)
    .flatMap(([key, inner]) => [prefix + key, ...shape(inner, `${prefix}${key}.`)])
    .sort()
}

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url + '/health', { signal: AbortSignal.timeout(2_000) })
    return true
  } catch {
    return false
  }
}

describe('npm run mock: its port and host', () => {
  it('defaults to 127.0.0.1:4010', () => {
    expect(mockOptions([], {})).toEqual({ host: DEFAULT_MOCK_HOST, port: DEFAULT_MOCK_PORT, rest: [] })
    expect([DEFAULT_MOCK_HOST, DEFAULT_MOCK_PORT]).toEqual(['127.0.0.1', 4010])
  })

  it('takes --port N, -p N, --port=N and MOCK_PORT, a flag winning over the variable', () => {
    for (const argv of [['--port', '4011'], ['-p', '4011'], ['--port=4011']]) expect(mockOptions(argv, {}), argv.join(' ')).toMatchObject({ port: 4011 })
    expect(mockOptions([], { MOCK_PORT: '4012' })).toMatchObject({ port: 4012 })
    expect(mockOptions(['-p', '4011'], { MOCK_PORT: '4012' })).toMatchObject({ port: 4011 })
  })

  it('takes --host, -h and MOCK_HOST, and passes every other argument to Prism', () => {
    expect(mockOptions(['--host', '0.0.0.0', '--dynamic'], {})).toEqual({ host: '0.0.0.0', port: 4010, rest: ['--dynamic'] })
    expect(mockOptions(['-h', '::1', '--errors'], { MOCK_HOST: 'localhost' })).toMatchObject({ host: '::1', rest: ['--errors'] })
    expect(mockOptions([], { MOCK_HOST: 'localhost' })).toMatchObject({ host: 'localhost' })
  })

  it('refuses a port that is not one, or a flag without its value, with a sentence', () => {
    expect(mockOptions(['--port', 'nope'], {})).toEqual({ error: "--port must be a port number (1-65535), got 'nope'" })
    expect(mockOptions([], { MOCK_PORT: '70000' })).toEqual({ error: "MOCK_PORT must be a port number (1-65535), got '70000'" })
    expect(mockOptions(['-p', '0'], {})).toHaveProperty('error')
    expect(mockOptions(['--port'], {})).toEqual({ error: '--port needs a value' })
  })
})

describe('npm run mock -- --port N: the contract answering like a fresh node', () => {
  let mock: RunningPrism
  let node: TestApp
  beforeAll(async () => {
    const port = await namedFreePort()
    ;[mock, node] = await Promise.all([startMockScript(`http://127.0.0.1:${port}`, ['--port', String(port)]), startTestApp()])
  }, 90_000)
  afterAll(async () => {
    await Promise.all([mock?.stop(), node?.close()])
  })

  it('answers a sent task as the node does: submitted, no artifacts, an acceptance receipt that verifies against its JWKS', async () => {
    const [fromMock, fromNode] = await Promise.all([
      rawRequest(mock.url, { method: 'POST', path: '/a2a/tasks/send', body: SEND }),
      rawRequest(node.url, { method: 'POST', path: '/a2a/tasks/send', body: SEND }),
    ])
    expect([fromMock.status, fromNode.status]).toEqual([201, 201])
    const [m, n] = [fromMock.json, fromNode.json] as { id: string; status: string; artifacts: unknown[]; receipt: unknown }[]
    expect(m).toMatchObject({ status: 'submitted', artifacts: [] })
    expect({ status: m!.status, artifacts: m!.artifacts }).toEqual({ status: n!.status, artifacts: n!.artifacts })
    expect(shape(m)).toEqual(shape(n))
    const jwks = (await rawRequest(mock.url, { method: 'GET', path: '/.well-known/agent.json/keys', token: null })).json
    expect(await verifyA2AReceipt(m!.receipt, fromMock.text, { jwks })).toMatchObject({ ok: true })
    // The same fresh task read back.
    const read = await rawRequest(mock.url, { method: 'GET', path: `/a2a/tasks/${m!.id}` })
    expect(read.json).toMatchObject({ status: 'submitted', artifacts: [] })
  })

  it('answers each task operation with the state it leads to, as the node would', async () => {
    const created = await rawRequest(mock.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: 'Add a health check' }) })
    const real = await rawRequest(node.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: 'Add a health check' }) })
    expect(created.json).toMatchObject({ status: 'open', version: 1, progress_log: [] })
    expect(shape(created.json)).toEqual(shape(real.json))
    const id = 'ffffffffffff'
    const steps: [string, string, string, object][] = [
      ['GET', `/tasks/${id}`, 'open', {}],
      ['GET', '/tasks/next/backend', 'claimed', {}],
      ['POST', `/tasks/${id}/claim`, 'claimed', { agent_id: 'worker-1' }],
      ['POST', `/tasks/${id}/progress`, 'in_progress', { message: 'tests pass' }],
      ['POST', `/tasks/${id}/complete`, 'done', { result_summary: 'Added GET /health' }],
      ['POST', `/tasks/${id}/fail`, 'failed', { reason: 'upstream API is down' }],
      ['POST', `/tasks/${id}/cancel`, 'cancelled', {}],
      ['POST', `/tasks/${id}/block`, 'blocked', { reason: 'upstream API is down' }],
      ['POST', `/tasks/${id}/close`, 'closed', {}],
    ]
    for (const prefix of ['', '/api/v1']) {
      for (const [method, path, status, body] of steps) {
        const res = await rawRequest(mock.url, { method, path: prefix + path, ...(method === 'POST' && { body: JSON.stringify(body) }) })
        expect(res.status, `${method} ${prefix}${path}`).toBe(200)
        expect((res.json as { status: string }).status, `${method} ${prefix}${path}`).toBe(status)
      }
    }
  })

  it('serves cards that verify: the agent card against its JWKS, the capability card by its own key', async () => {
    const card = await rawRequest(mock.url, { method: 'GET', path: '/.well-known/agent.json', token: null })
    const jwks = (await rawRequest(mock.url, { method: 'GET', path: '/.well-known/agent.json/keys', token: null })).json
    const capability = (await rawRequest(mock.url, { method: 'GET', path: '/.well-known/a2a-capability-card.json', token: null })).json as {
      card: { created_at: number }
    }
    // At the time of the run the examples come from (the capability card expires after a day).
    const now = capability.card.created_at + 60
    expect(await checkAgentCardConformance(card.text, jwks, { now })).toMatchObject({ ok: true, reason: null })
    expect(await verifyCapabilityCard(capability as never, { now })).toMatchObject({ ok: true })
    expect(card.json).toMatchObject({ capabilityCard: capability })
  })

  it('fills every read with a documented example, never a generated placeholder', async () => {
    // The document and its page are not JSON examples: left out.
    const reads = Object.entries(loadContract().document.paths)
      .filter(([path, item]) => item['get'] !== undefined && !['/openapi.json', '/openapi.yaml', '/docs'].includes(path))
      .map(([path]) => path)
    expect(reads.length).toBeGreaterThan(30)
    for (const template of reads) {
      // Reads with a required query parameter get one.
      const query = template.endsWith('/lineage/envelope')
        ? '?ticket_id=ffffffffffff'
        : template.endsWith('/a2a/v0/proof')
          ? '?nonce=AAAAAAAAAAAAAAAAAAAAAAAA'
          : ''
      const path = template.replace(/\{[^}]+\}/g, 'ffffffffffff') + query
      const res = await rawRequest(mock.url, { method: 'GET', path })
      expect(res.status, path).toBeLessThan(300)
      expect(res.text, path).not.toMatch(/"string"|\[\{\}\]/)
    }
  })

  it('stops, Prism included, when npm is stopped', async () => {
    await mock.stop()
    expect(await answers(mock.url)).toBe(false)
  })
})

describe('MOCK_PORT=N npm run mock', () => {
  it('serves on N', async () => {
    const port = await namedFreePort()
    const mock = await startMockScript(`http://127.0.0.1:${port}`, [], { MOCK_PORT: String(port) })
    try {
      const res = await rawRequest(mock.url, { method: 'GET', path: '/health/live', token: null })
      expect(res.status).toBe(200)
      expect(mock.output()).not.toContain('Received [')
    } finally {
      await mock.stop()
    }
    expect(await answers(mock.url)).toBe(false)
  }, 90_000)
})
