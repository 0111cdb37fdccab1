/**
 * Paths match exactly as the contract writes them. Authentication and authorisation decide by the request path,
 * and the validator routes it: if the two disagreed about `/A2A/tasks/send` or `/lineage/tracker-audit/`, an
 * agent token refused at the contract's path would reach the operation through a variant. Every operation, in
 * every case and slash variant, with an agent token and with the operator's: a variant is never served, and
 * nothing is written.
 */
import { describe, expect, it } from 'vitest'
import { testEngines } from '../helpers/engines.js'
import { OPERATOR_TOKEN, rawRequest } from '../helpers/test-app.js'
import { concretePath, loadOperations, validBody, worldFixture } from './support.js'

const OPERATIONS = loadOperations()
const NOT_FOUND = { detail: 'Not Found' }
const AGENT_FORBIDDEN = { detail: 'Agent tokens cannot access operator-only endpoints', required_permission: 'admin:manage' }

/** Variants of a concrete path (query kept) that name the same operation to a case- or slash-tolerant router. */
function variants(concrete: string): string[] {
  const [path = '', query] = concrete.split('?') as [string, string | undefined]
  const withQuery = (p: string): string => (query === undefined ? p : `${p}?${query}`)
  const segments = path.split('/')
  // Upper-case the first segment that has letters (`/A2A/…`, `/API/v1/…`, `/LINEAGE/…`).
  const first = segments.findIndex((s) => /[a-z]/.test(s))
  const firstUpper = segments.map((s, i) => (i === first ? s.toUpperCase() : s)).join('/')
  const out = new Set([withQuery(firstUpper), withQuery(`${path}/`)])
  // The whole path in upper case, except ids (path parameters are values, not names).
  const namesUpper = segments.map((s) => (/^[a-z0-9]{12}$/.test(s) || s.includes('%') || s.startsWith('role-') ? s : s.toUpperCase())).join('/')
  if (namesUpper !== path) out.add(withQuery(namesUpper))
  out.delete(concrete)
  return [...out].filter((v) => v !== withQuery('//'))
}

for (const engine of testEngines()) {
  describe(`exact paths (${engine})`, () => {
    const f = worldFixture(engine, 'claimed')

    it('every operation in a case or trailing-slash variant is not found, for an agent and for the operator, and writes nothing', async () => {
      const before = await f.store.dump()
      let tried = 0
      // A variant that is itself an operation's path (`POST /a2a/v1/`, the JSON-RPC binding joined with `/`) is not one.
      const served = new Set(OPERATIONS.map((o) => `${o.method} ${concretePath(o, f.world)}`))
      for (const op of OPERATIONS) {
        if (op.rootPath === '/') continue // `/` has no name to vary; its slash variant is `//`.
        const body = op.hasBody ? JSON.stringify(validBody(op, f.world)) : undefined
        for (const path of variants(concretePath(op, f.world)).filter((v) => !served.has(`${op.method} ${v}`))) {
          for (const token of [f.world.creds.agentA, OPERATOR_TOKEN]) {
            const res = await rawRequest(f.app.url, {
              method: op.method,
              path,
              token,
              headers: { 'x-tenant-id': f.world.tenantA },
              ...(body !== undefined && { body }),
            })
            const label = `${op.method} ${path} as ${token === OPERATOR_TOKEN ? 'operator' : 'agent'}`
            // An agent may be refused before routing (the path is operator-only under any spelling) or not find it.
            if (res.status === 403) expect(res.json, label).toEqual(AGENT_FORBIDDEN)
            else {
              expect(res.status, label).toBe(404)
              expect(res.json, label).toEqual(NOT_FOUND)
            }
            if (token === OPERATOR_TOKEN) expect(res.status, label).toBe(404)
            tried++
          }
        }
      }
      expect(tried).toBeGreaterThan(OPERATIONS.length * 2)
      expect(await f.store.dump()).toEqual(before)
    })

    it('the exact paths still serve (the control for the variants above)', async () => {
      const res = await rawRequest(f.app.url, {
        method: 'POST',
        path: '/a2a/tasks/send',
        token: OPERATOR_TOKEN,
        headers: { 'x-tenant-id': f.world.tenantA },
        body: JSON.stringify({ sender: 'p', message: 'm' }),
      })
      expect(res.status).toBe(201)
      const refused = await rawRequest(f.app.url, {
        method: 'POST',
        path: '/a2a/tasks/send',
        token: f.world.creds.agentA,
        body: JSON.stringify({ sender: 'p', message: 'm' }),
      })
      expect(refused.status).toBe(403)
      expect(refused.json).toEqual(AGENT_FORBIDDEN)
      expect((await rawRequest(f.app.url, { method: 'GET', path: '/health/live', token: null })).status).toBe(200)
    })

    // What the contract does not route is fail-closed, as Bernstein's own permission map is (§1.4): a method a
    // protected path does not document needs an operator before it learns the path's methods, and the public
    // documents are public at the paths the contract names, not under the `/api/v1` mount (§1.2).
    it('an undocumented method of a protected path is operator-only: an agent gets 403, the operator the 405', async () => {
      const before = await f.store.dump()
      for (const [method, path, allow] of [
        ['PUT', '/tasks', 'GET, POST'],
        ['DELETE', '/api/v1/tasks', 'GET, POST'],
        ['GET', '/a2a/tasks/send', 'POST'],
      ] as const) {
        const agent = await rawRequest(f.app.url, { method, path, token: f.world.creds.agentA, headers: { 'x-tenant-id': f.world.tenantA } })
        expect(agent.status, `${method} ${path} as agent`).toBe(403)
        expect(agent.json).toEqual(AGENT_FORBIDDEN)
        expect(agent.headers.get('allow'), 'an agent is not told the methods').toBeNull()
        const operator = await rawRequest(f.app.url, { method, path, token: OPERATOR_TOKEN })
        expect(operator.status, `${method} ${path} as operator`).toBe(405)
        expect(operator.json).toEqual({ detail: 'Method Not Allowed' })
        expect(operator.headers.get('allow')).toBe(allow)
      }
      expect(await f.store.dump()).toEqual(before)
    })

    it('the public documents are public only where the contract puts them: under /api/v1 they need a token', async () => {
      for (const path of ['/docs', '/openapi.json', '/openapi.yaml', '/.well-known/agent.json']) {
        expect((await rawRequest(f.app.url, { method: 'GET', path, token: null })).status, path).toBe(200)
        const mounted = await rawRequest(f.app.url, { method: 'GET', path: `/api/v1${path}`, token: null })
        expect(mounted.status, `/api/v1${path}`).toBe(401)
        expect(mounted.json).toEqual({ detail: 'Missing or invalid Authorization header' })
        const asOperator = await rawRequest(f.app.url, { method: 'GET', path: `/api/v1${path}`, token: OPERATOR_TOKEN })
        expect(asOperator.status, `/api/v1${path} as operator`).toBe(404)
      }
    })
  })
}
