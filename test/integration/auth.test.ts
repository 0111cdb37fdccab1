import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { loadContract } from '../../src/http/openapi-document.js'
import { testEngines } from '../helpers/engines.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp, stateSnapshot } from '../helpers/test-app.js'
import { refusalIn } from '../security/support.js'

const MISSING = { detail: 'Missing or invalid Authorization header' }
const INVALID = { detail: 'Invalid or expired authentication token' }

/** The paths the brief and Bernstein (§1.4) name as public: no token needed. */
const NAMED_PUBLIC = ['/health/ready', '/health/live', '/ready', '/alive', '/', '/openapi.json', '/openapi.yaml']

interface Operation {
  readonly method: string
  readonly template: string
  readonly operationId: string
  readonly public: boolean
  /** How it writes errors (`x-error-format`): the A2A v1.0 operations in their protocol's shapes. */
  readonly errorFormat: 'detail' | 'a2a-rest' | 'a2a-jsonrpc'
}

/** Every operation of the contract; public ones declare `security: []`. */
function contractOperations(): Operation[] {
  const { document } = loadContract()
  const ops: Operation[] = []
  for (const [template, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op !== 'object' || op === null || typeof op.operationId !== 'string') continue
      const security = op.security
      ops.push({
        method: method.toUpperCase(),
        template,
        operationId: op.operationId,
        public: Array.isArray(security) && security.length === 0,
        errorFormat: (op as { 'x-error-format'?: Operation['errorFormat'] })['x-error-format'] ?? 'detail',
      })
    }
  }
  return ops
}

/** Authorization headers that are not a Bearer credential at all. */
const NOT_BEARER: readonly (readonly [string, Record<string, string>])[] = [
  ['no header', {}],
  ['Basic credentials', { authorization: 'Basic dXNlcjpwYXNz' }],
  ['lower-case bearer (the prefix is case-sensitive)', { authorization: `bearer ${OPERATOR_TOKEN}` }],
  ['a bare "Bearer"', { authorization: 'Bearer' }],
  ['another scheme with the right token', { authorization: `Token ${OPERATOR_TOKEN}` }],
  ['the token without a scheme', { authorization: OPERATOR_TOKEN }],
]

/** Bearer credentials that are not a valid token. */
const WRONG_TOKEN: readonly (readonly [string, Record<string, string>])[] = [
  ['an unknown token', { authorization: 'Bearer not-the-token-0123456789' }],
  ['the token with a character appended', { authorization: `Bearer ${OPERATOR_TOKEN}x` }],
  ['the token with its last character dropped', { authorization: `Bearer ${OPERATOR_TOKEN.slice(0, -1)}` }],
]

interface Seed {
  open: string
  a2a: string
}

/** A body the operation would accept, so that only the credential can be the reason for a refusal. */
function bodyFor(op: Operation, seed: Seed): string | undefined {
  if (op.method !== 'POST') return undefined
  const p = op.template.replace(/^\/api\/v1/, '')
  if (p === '/tasks') return JSON.stringify({ title: 'written without a token' })
  if (p.endsWith('/claim')) return JSON.stringify({ agent_id: 'intruder' })
  if (p.endsWith('/progress')) return JSON.stringify({ message: 'intruder' })
  if (p.endsWith('/complete')) return JSON.stringify({ result_summary: 'intruder' })
  if (p.endsWith('/fail') || p.endsWith('/block')) return JSON.stringify({ reason: 'intruder' })
  if (p === '/a2a/message') return JSON.stringify({ sender: 'intruder', recipient: 'b', content: 'c', task_id: seed.open })
  if (p === '/a2a/tasks/send') return JSON.stringify({ sender: 'intruder', message: 'm' })
  if (p.endsWith('/artifacts')) return JSON.stringify({ name: 'intruder.txt' })
  if (p === '/a2a/v0/tasks') return JSON.stringify({ sender: { name: 'intruder', description: 'd' }, task: { id: 'x-1', message: 'm' } })
  return '{}'
}

function concretePath(op: Operation, seed: Seed): string {
  return op.template
    .replace(/\{a2a_task_id\}/g, seed.a2a)
    .replace(/\{task_id\}/g, seed.open)
    .replace(/\{role\}/g, 'backend')
    .replace(/\{[^}]+\}/g, seed.open)
}

it('the contract declares the named paths public and protects every task and A2A operation', () => {
  const ops = contractOperations()
  for (const path of NAMED_PUBLIC) expect(ops.find((o) => o.template === path && o.method === 'GET')?.public, path).toBe(true)
  // The one exception under /a2a: a peer's proof-of-possession challenge, which must be answerable before any token.
  const challenge = (o: Operation): boolean => /^(\/api\/v1)?\/a2a\/v0\/proof$/.test(o.template)
  for (const o of ops) {
    if (/^(\/api\/v1)?\/(tasks|a2a)(\/|$)/.test(o.template)) expect(o.public, `${o.method} ${o.template}`).toBe(challenge(o))
  }
  expect(ops.filter(challenge).length).toBeGreaterThanOrEqual(1)
  expect(ops.filter((o) => !o.public).length).toBeGreaterThanOrEqual(36)
})

for (const engine of testEngines()) {
  describe(`authentication (${engine})`, () => {
    let t: TestApp
    let seed: Seed

    beforeAll(async () => {
      t = await startTestApp({ engine })
      const { data: task } = await t.client.POST('/tasks', { body: { title: 'seeded' } })
      const { data: a2a } = await t.client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: 'seeded' } })
      seed = { open: task?.id ?? '', a2a: a2a?.id ?? '' }
      expect(seed.open).toMatch(/^[0-9a-f]{12}$/)
      expect(seed.a2a).toMatch(/^[0-9a-f]{12}$/)
    })
    afterAll(async () => {
      await t?.close()
    })

    const snapshot = (): Promise<unknown> => stateSnapshot(t, seed.a2a)

    describe('public paths', () => {
      it.each(NAMED_PUBLIC)('%s answers 200 without a token, with a non-Bearer header and with a wrong token', async (path) => {
        const variants: Record<string, string>[] = [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: 'Bearer wrong-token-0123456789' }]
        for (const headers of variants) {
          const r = await rawRequest(t.url, { method: 'GET', path, token: null, headers })
          expect(r.status, `${path} ${JSON.stringify(headers)}`).toBe(200)
          expect(r.headers.get('www-authenticate')).toBeNull()
        }
      })

      it('what they serve', async () => {
        expect((await rawRequest(t.url, { method: 'GET', path: '/', token: null })).json).toEqual({
          name: 'Bernstein Task Server',
          status: 'running',
          docs: '/docs',
        })
        expect((await rawRequest(t.url, { method: 'GET', path: '/health/live', token: null })).json).toEqual({ status: 'alive' })
        expect((await rawRequest(t.url, { method: 'GET', path: '/alive', token: null })).json).toEqual({ status: 'alive' })
        expect((await rawRequest(t.url, { method: 'GET', path: '/ready', token: null })).json).toMatchObject({ status: 'ready' })
        expect((await rawRequest(t.url, { method: 'GET', path: '/health' })).json).toMatchObject({ status: 'ok' })
        const json = await rawRequest(t.url, { method: 'GET', path: '/openapi.json', token: null })
        // Both documents are the contract itself, read here from the repository's openapi.yaml.
        const contractText = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')
        expect(json.json).toEqual(parseYaml(contractText))
        const yaml = await rawRequest(t.url, { method: 'GET', path: '/openapi.yaml', token: null })
        expect(yaml.text).toBe(contractText)
      })

      it('every other operation the contract declares public needs no token either', async () => {
        for (const op of contractOperations().filter((o) => o.public)) {
          const r = await rawRequest(t.url, { method: op.method, path: concretePath(op, seed), token: null })
          expect(r.status, `${op.method} ${op.template}`).not.toBe(401)
          expect(r.status, `${op.method} ${op.template}`).toBeLessThan(500)
        }
      })
    })

    describe('protected operations', () => {
      const protectedOps = contractOperations().filter((o) => !o.public)

      it.each(protectedOps.map((o) => ({ ...o, name: `${o.method} ${o.template}` })))(
        '$name: 401 without a Bearer credential and with a wrong token; nothing written',
        async (op) => {
          const path = concretePath(op, seed)
          const body = bodyFor(op, seed)
          const before = await snapshot()
          for (const [label, headers] of [...NOT_BEARER.map(([l, h]) => [l, h, MISSING] as const), ...WRONG_TOKEN.map(([l, h]) => [l, h, INVALID] as const)]) {
            const r = await rawRequest(t.url, { method: op.method, path, token: null, headers: { ...headers }, ...(body !== undefined && { body }) })
            const expected = refusalIn(op.errorFormat, 401, WRONG_TOKEN.some(([l]) => l === label) ? INVALID : MISSING, 'UNAUTHENTICATED', 'UNAUTHENTICATED')
            expect(r.status, label).toBe(401)
            expect(r.json, label).toEqual(expected)
            expect(r.headers.get('www-authenticate') ?? '', label).toMatch(/^Bearer\b/)
          }
          expect(await snapshot()).toEqual(before)
          // The same request with the operator token is not refused for its credential.
          const ok = await rawRequest(t.url, { method: op.method, path, ...(body !== undefined && { body }) })
          expect(ok.status, ok.text.slice(0, 200)).not.toBe(401)
          expect(ok.status).toBeLessThan(500)
        },
      )

      it('credentials are checked before the body: an oversized or malformed body without a token is a 401', async () => {
        const before = await snapshot()
        for (const body of ['x'.repeat(2_000_000), '{"title": ', '<xml/>']) {
          for (const path of ['/tasks', '/api/v1/a2a/tasks/send', '/a2a/v0/tasks']) {
            const r = await rawRequest(t.url, { method: 'POST', path, body, token: null })
            expect(r.status, path).toBe(401)
            expect(r.json).toEqual(MISSING)
          }
        }
        expect(await snapshot()).toEqual(before)
      })

      it('unknown paths under a protected prefix are refused before routing', async () => {
        for (const path of ['/nope', '/tasks/x/y/z', '/api/v1/health/deps', '/api/v1/unknown']) {
          const r = await rawRequest(t.url, { method: 'GET', path, token: null })
          expect(r.status, path).toBe(401)
          expect(r.json).toEqual(MISSING)
        }
      })
    })
  })

  describe(`authentication disabled (${engine})`, () => {
    let t: TestApp

    beforeAll(async () => {
      t = await startTestApp({ engine, resolveToken: null })
    })
    afterAll(async () => {
      await t?.close()
    })

    for (const prefix of ['', '/api/v1'] as const) {
      it(`every operation passes without a token (prefix '${prefix || '/'}'), and a bogus header changes nothing`, async () => {
        const variants: Record<string, string>[] = [{}, { authorization: 'Bearer whatever-token-0123456789' }, { authorization: 'Basic dXNlcjpwYXNz' }]
        for (const headers of variants) {
          const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
            const r = await rawRequest(t.url, {
              method,
              path: prefix + path,
              token: null,
              headers: { ...headers },
              ...(body !== undefined && { body: JSON.stringify(body) }),
            })
            return { status: r.status, json: r.json }
          }
          const field = (r: { json: unknown }, key: string): string => String((r.json as Record<string, unknown>)[key])
          const role = `noauth-${prefix.length}-${(headers['authorization'] ?? 'none').slice(0, 5)}`

          const created = await call('POST', '/tasks', { title: 'no auth', role })
          expect(created.status).toBe(201)
          const id = field(created, 'id')
          expect((await call('GET', '/tasks')).status).toBe(200)
          expect((await call('GET', `/tasks/${id}`)).status).toBe(200)
          expect((await call('POST', `/tasks/${id}/claim`, { agent_id: 'a' })).status).toBe(200)
          expect((await call('POST', `/tasks/${id}/progress`, { message: 'm' })).status).toBe(200)
          expect((await call('POST', `/tasks/${id}/block`, { reason: 'r' })).status).toBe(200)
          expect((await call('POST', `/tasks/${id}/cancel`, {})).status).toBe(200)
          const second = field(await call('POST', '/tasks', { title: 'second', role }), 'id')
          const next = await call('GET', `/tasks/next/${role}?agent_id=b`)
          expect(next.status).toBe(200)
          expect(field(next, 'id')).toBe(second)
          expect((await call('GET', `/tasks/next/${role}`)).status).toBe(204)
          expect((await call('POST', `/tasks/${second}/complete`, { result_summary: 's' })).status).toBe(200)
          expect((await call('POST', `/tasks/${second}/close`, {})).status).toBe(200)
          const third = field(await call('POST', '/tasks', { title: 'third', role }), 'id')
          expect((await call('POST', `/tasks/${third}/fail`, { reason: 'r' })).status).toBe(200)

          expect((await call('GET', '/a2a/agent-card')).status).toBe(200)
          expect((await call('GET', '/a2a/agents')).status).toBe(200)
          const sent = await call('POST', '/a2a/tasks/send', { sender: 'p', message: 'm' })
          expect(sent.status).toBe(201)
          expect((await call('GET', `/a2a/tasks/${field(sent, 'id')}`)).status).toBe(200)
          expect((await call('POST', `/a2a/tasks/${field(sent, 'id')}/artifacts`, { name: 'n' })).status).toBe(201)
          expect((await call('POST', '/a2a/message', { sender: 's', recipient: 'r', content: 'c', task_id: field(sent, 'bernstein_task_id') })).status).toBe(
            201,
          )
          expect((await call('POST', '/a2a/v0/tasks', { sender: { name: `peer-${role}`, description: 'd' }, task: { id: 'r1', message: 'm' } })).status).toBe(
            202,
          )
          expect((await call('GET', '/health')).status).toBe(200)
        }
      })
    }
  })
}
