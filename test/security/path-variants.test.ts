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
      for (const op of OPERATIONS) {
        if (op.rootPath === '/') continue // `/` has no name to vary; its slash variant is `//`.
        const body = op.hasBody ? JSON.stringify(validBody(op, f.world)) : undefined
        for (const path of variants(concretePath(op, f.world))) {
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
  })
}
