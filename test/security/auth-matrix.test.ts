/**
 * Authentication, authorisation and tenant isolation over EVERY operation of openapi.yaml × every kind of
 * credential (issue "Security and limits", bernstein-behaviour.md §1.4). Each cell checks the exact status and
 * body, and that the store is unchanged afterwards (GET /tasks per tenant and the A2A task, versions included)
 * unless the cell is a permitted write, in which case only the caller's tenant may have changed.
 */
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import type { TestClock } from '../helpers/clock.js'
import { testEngines } from '../helpers/engines.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'
import {
  OPENAPI_PATH,
  type Operation,
  type Snapshot,
  type World,
  concretePath,
  loadOperations,
  makeWorld,
  refusalIn,
  stateFor,
  validBody,
  worldClock,
  worldSnapshot,
} from './support.js'

const OPERATIONS = loadOperations()

const MISSING = { detail: 'Missing or invalid Authorization header' }
const INVALID = { detail: 'Invalid or expired authentication token' }
const AGENT_FORBIDDEN = { detail: 'Agent tokens cannot access operator-only endpoints', required_permission: 'admin:manage' }
const BOUND_OPERATOR_FORBIDDEN = { detail: 'Operator tokens bound to a tenant cannot access node-wide endpoints', required_permission: 'admin:manage' }

type Who = 'operator-A' | 'agent-A' | 'tenant-B-agent' | 'tenant-B-operator' | 'bound-operator-A'

interface Credential {
  readonly name: string
  readonly headers: (w: World) => Record<string, string>
  /** What the server must make of it on a non-public path. */
  readonly outcome: { readonly reject: typeof MISSING | typeof INVALID } | { readonly as: Who }
}

const bearer = (token: string): string => `Bearer ${token}`

const CREDENTIALS: readonly Credential[] = [
  { name: 'no token', headers: (w) => ({ 'x-tenant-id': w.tenantA }), outcome: { reject: MISSING } },
  { name: 'Basic scheme', headers: (w) => ({ authorization: 'Basic x', 'x-tenant-id': w.tenantA }), outcome: { reject: MISSING } },
  { name: '"Bearer" alone', headers: (w) => ({ authorization: 'Bearer', 'x-tenant-id': w.tenantA }), outcome: { reject: MISSING } },
  // The prefix is compared case-sensitively (§1.4): the real operator token behind "bearer " is not accepted.
  {
    name: 'lower-case "bearer" + operator token',
    headers: (w) => ({ authorization: `bearer ${OPERATOR_TOKEN}`, 'x-tenant-id': w.tenantA }),
    outcome: { reject: MISSING },
  },
  { name: 'wrong token', headers: (w) => ({ authorization: bearer(`not-a-token-${w.tag}`), 'x-tenant-id': w.tenantA }), outcome: { reject: INVALID } },
  {
    name: 'forged secret for a real token id',
    headers: (w) => ({ authorization: bearer(`bat_${w.creds.agentAId}.${randomBytes(32).toString('base64url')}`), 'x-tenant-id': w.tenantA }),
    outcome: { reject: INVALID },
  },
  { name: 'revoked agent token', headers: (w) => ({ authorization: bearer(w.creds.revokedA), 'x-tenant-id': w.tenantA }), outcome: { reject: INVALID } },
  { name: 'expired agent token', headers: (w) => ({ authorization: bearer(w.creds.expiredA), 'x-tenant-id': w.tenantA }), outcome: { reject: INVALID } },
  { name: 'agent token (tenant A)', headers: (w) => ({ authorization: bearer(w.creds.agentA) }), outcome: { as: 'agent-A' } },
  { name: "other tenant's agent token", headers: (w) => ({ authorization: bearer(w.creds.agentB) }), outcome: { as: 'tenant-B-agent' } },
  {
    // An agent token is bound to its tenant: asking for another one with the header changes nothing.
    name: "other tenant's agent token claiming tenant A via x-tenant-id",
    headers: (w) => ({ authorization: bearer(w.creds.agentB), 'x-tenant-id': w.tenantA }),
    outcome: { as: 'tenant-B-agent' },
  },
  {
    name: 'operator with another tenant',
    headers: (w) => ({ authorization: bearer(OPERATOR_TOKEN), 'x-tenant-id': w.tenantB }),
    outcome: { as: 'tenant-B-operator' },
  },
  { name: 'operator with tenant A', headers: (w) => ({ authorization: bearer(OPERATOR_TOKEN), 'x-tenant-id': w.tenantA }), outcome: { as: 'operator-A' } },
  { name: 'operator token issued for tenant A', headers: (w) => ({ authorization: bearer(w.creds.boundOperatorA) }), outcome: { as: 'bound-operator-A' } },
  {
    // Bound like an agent token: the header cannot move it to another tenant.
    name: 'operator token issued for tenant A claiming tenant B via x-tenant-id',
    headers: (w) => ({ authorization: bearer(w.creds.boundOperatorA), 'x-tenant-id': w.tenantB }),
    outcome: { as: 'bound-operator-A' },
  },
]

interface Expectation {
  /** The exact status, or a check for operations this file has no precise expectation for. */
  readonly status: number | ((status: number) => void)
  /** Exact body, when it is fully determined. */
  readonly body?: unknown
  /** Further checks on a body that holds generated values. */
  readonly check?: (json: unknown, text: string) => void
  /**
   * The one tenant required to change (`A`, `B`), or allowed to (`A?`, `B?`); null: nothing may change. Every
   * other tenant must be unchanged.
   */
  readonly writes: 'A' | 'B' | 'A?' | 'B?' | null
  readonly headers?: Readonly<Record<string, string>>
  /** Compare with the operator's response to the same request (public operations without a precise expectation). */
  readonly sameAsOperator?: boolean
}

const openApiYaml = readFileSync(OPENAPI_PATH, 'utf8')

/** Neither an auth failure nor a server error: the request reached the operation. */
const served = (status: number): void => {
  expect(status).not.toBe(401)
  expect(status).not.toBe(403)
  expect(status).toBeLessThan(500)
}

function publicExpectation(op: Operation): Expectation {
  const p = op.rootPath
  if (p === '/') return { status: 200, body: { name: 'Bernstein Task Server', status: 'running', docs: '/docs' }, writes: null }
  if (p === '/health/ready' || p === '/ready')
    return { status: 200, check: (j) => expect(j).toMatchObject({ status: 'ready', reason: expect.any(String) }), writes: null }
  if (p === '/health/live' || p === '/alive') return { status: 200, body: { status: 'alive' }, writes: null }
  if (p === '/openapi.json') return { status: 200, body: parse(openApiYaml), writes: null }
  if (p === '/openapi.yaml') return { status: 200, check: (_j, text) => expect(text).toBe(openApiYaml), writes: null }
  // Discovery documents and anything public added later: whatever the credential, the same answer as the operator's.
  return { status: served, sameAsOperator: true, writes: null }
}

/**
 * The requirement's operator-only surface (issue "Security and limits"), written out here rather than imported
 * from src/http/authorize.ts so that the matrix checks the code against the requirement, not against itself.
 */
function operatorOnly(op: Operation): boolean {
  const p = op.rootPath
  // Push notification configs carry the receiver's credentials: even reading them is the operator's.
  return (op.method !== 'GET' && p.startsWith('/a2a/')) || p.includes('/pushNotificationConfigs') || nodeWide(op)
}

/** About the whole node, not one tenant: the audit chain (every tenant's tasks), federation, metrics, the health summary. */
function nodeWide(op: Operation): boolean {
  const p = op.rootPath
  return p.startsWith('/lineage') || p.startsWith('/federation') || p === '/metrics' || p === '/health'
}

const taskOf = (j: unknown): { id: string; tenant_id: string; status: string } => j as { id: string; tenant_id: string; status: string }

const AFTER_ACTION: Readonly<Record<string, string>> = {
  claim: 'claimed',
  progress: 'in_progress',
  complete: 'done',
  fail: 'failed',
  cancel: 'cancelled',
  block: 'blocked',
  close: 'closed',
}

/** What a caller that passed authentication gets, by who it is. */
function authorisedExpectation(op: Operation, who: Who, w: World): Expectation {
  const key = `${op.method} ${op.rootPath}`
  const ownTenant = who === 'operator-A' || who === 'agent-A' || who === 'bound-operator-A'
  const agent = who === 'agent-A' || who === 'tenant-B-agent'
  const tenant = ownTenant ? w.tenantA : w.tenantB
  const taskMissing = { status: 404, body: { detail: `Task '${w.taskA.id}' not found` }, writes: null } as const
  const a2aMissing = { status: 404, body: { detail: `A2A task '${w.a2aA.id}' not found` }, writes: null } as const

  if (agent && operatorOnly(op)) return { status: 403, body: forbidden(op, AGENT_FORBIDDEN), writes: null }
  if (who === 'bound-operator-A' && nodeWide(op)) return { status: 403, body: forbidden(op, BOUND_OPERATOR_FORBIDDEN), writes: null }
  // A2A v1.0 (HTTP+JSON and JSON-RPC): the same tasks, seen through v1's Task; another tenant's is not found.
  const v1Missing = {
    status: 404,
    body: {
      error: {
        code: 404,
        status: 'NOT_FOUND',
        message: `Task '${w.a2aA.id}' not found`,
        details: [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { taskId: w.a2aA.id } },
        ],
      },
    },
    writes: null,
  } as const
  const v1Sent = (j: unknown): void =>
    expect(j).toMatchObject({ task: { status: { state: 'TASK_STATE_SUBMITTED' }, history: [{ role: 'ROLE_USER', parts: [{ text: `v1 ${w.tag}` }] }] } })

  // A2A v1.0's /{tenant}/ variants, which the matrix points at tenant A: a token bound to another tenant is refused
  // (403), an operator whose x-tenant-id names another is a 400; the rest is the root operation in tenant A.
  if (key.includes('/{a2a_tenant}/')) {
    if (who === 'tenant-B-agent') return { status: 403, check: (j) => expect(j).toMatchObject({ error: { status: 'PERMISSION_DENIED' } }), writes: null }
    if (who === 'tenant-B-operator') {
      return { status: 400, check: (j) => expect(j).toMatchObject({ error: { details: [{ reason: 'INVALID_PARAMS' }] } }), writes: null }
    }
    return authorisedExpectation({ ...op, rootPath: op.rootPath.replace('/{a2a_tenant}', '') }, who, w)
  }
  switch (key) {
    case 'GET /a2a/agent-card':
    case 'GET /a2a/agents':
      return {
        status: 200,
        check: (j) =>
          expect(j).toMatchObject({ name: 'bernstein-orchestrator', protocol_version: '0.1', endpoint: 'http://bernstein.test/a2a', provider: 'bernstein' }),
        writes: null,
      }
    case 'GET /a2a/tasks/{a2a_task_id}':
      return ownTenant
        ? { status: 200, check: (j) => expect(j).toMatchObject({ id: w.a2aA.id, bernstein_task_id: w.a2aA.bernsteinTaskId }), writes: null }
        : a2aMissing
    case 'POST /a2a/message':
      return ownTenant
        ? { status: 201, check: (j) => expect(j).toMatchObject({ task_id: w.taskA.id, direction: 'inbound', delivered: true }), writes: 'A' }
        : taskMissing
    case 'POST /a2a/tasks/send':
      return { status: 201, check: (j) => expect(j).toMatchObject({ status: 'submitted', message: `sent ${w.tag}` }), writes: ownTenant ? 'A' : 'B' }
    case 'POST /a2a/tasks/{a2a_task_id}/artifacts':
      return ownTenant ? { status: 201, check: (j) => expect(j).toMatchObject({ name: `log-${w.tag}`, data: 'artifact data' }), writes: 'A' } : a2aMissing
    case 'POST /a2a/v1':
    case 'POST /a2a/v1/':
      return {
        status: 200,
        check: (j) => {
          expect(j).toMatchObject({ jsonrpc: '2.0', id: `rpc-${w.tag}` })
          v1Sent((j as { result: unknown }).result)
        },
        writes: ownTenant ? 'A' : 'B',
      }
    case 'POST /a2a/v1/message:send':
      return { status: 200, check: v1Sent, writes: ownTenant ? 'A' : 'B' }
    case 'GET /a2a/v1/tasks':
      return {
        status: 200,
        check: (j) => {
          const ids = (j as { tasks: { id: string }[] }).tasks.map((t) => t.id)
          if (ownTenant) expect(ids).toContain(w.a2aA.id)
          else expect(ids).not.toContain(w.a2aA.id)
        },
        writes: null,
      }
    case 'GET /a2a/v1/tasks/{a2a_task_id}':
      return ownTenant
        ? { status: 200, check: (j) => expect(j).toMatchObject({ id: w.a2aA.id, status: { state: 'TASK_STATE_SUBMITTED' } }), writes: null }
        : v1Missing
    case 'POST /a2a/v1/tasks/{a2a_task_id}:cancel':
      return ownTenant
        ? { status: 200, check: (j) => expect(j).toMatchObject({ id: w.a2aA.id, status: { state: 'TASK_STATE_CANCELED' } }), writes: 'A' }
        : v1Missing
    // A2A v1.0 streams: the first event of the stream (which ends at the test app's stream time limit).
    case 'POST /a2a/v1/message:stream':
      return { status: 200, check: (_j, text) => v1Sent(firstEvent(text)), writes: ownTenant ? 'A' : 'B' }
    case 'POST /a2a/v1/tasks/{a2a_task_id}:subscribe':
    case 'GET /a2a/v1/tasks/{a2a_task_id}:subscribe':
      return ownTenant
        ? {
            status: 200,
            check: (_j, text) => expect(firstEvent(text)).toMatchObject({ task: { id: w.a2aA.id, status: { state: 'TASK_STATE_SUBMITTED' } } }),
            writes: null,
          }
        : v1Missing
    case 'GET /a2a/v1/extendedAgentCard':
      return { status: 200, check: (j) => expect(j).toMatchObject({ supportedInterfaces: expect.any(Array) }), writes: null }
    case 'POST /a2a/v0/tasks':
      return { status: 202, check: (j) => expect(j).toMatchObject({ status: 'accepted' }), writes: ownTenant ? 'A' : 'B' }
    case 'POST /tasks':
      return {
        status: 201,
        check: (j) => expect(taskOf(j)).toMatchObject({ tenant_id: tenant, title: `created ${w.tag}`, status: 'open' }),
        writes: ownTenant ? 'A' : 'B',
      }
    case 'GET /tasks':
      return {
        status: 200,
        check: (j) => {
          const tasks = (j as { tasks: { id: string; tenant_id: string }[] }).tasks
          expect(new Set(tasks.map((t) => t.tenant_id))).toEqual(new Set([tenant]))
          expect(tasks.map((t) => t.id)).toContain(ownTenant ? w.taskA.id : w.taskB.id)
          expect(tasks.map((t) => t.id)).not.toContain(ownTenant ? w.taskB.id : w.taskA.id)
        },
        writes: null,
      }
    case 'GET /tasks/next/{role}':
      return ownTenant
        ? { status: 200, check: (j) => expect(taskOf(j)).toMatchObject({ id: w.taskA.id, tenant_id: w.tenantA, status: 'claimed' }), writes: 'A' }
        : { status: 204, check: (_j, text) => expect(text).toBe(''), writes: null }
    case 'GET /tasks/{task_id}':
      return ownTenant
        ? { status: 200, check: (j) => expect(taskOf(j)).toMatchObject({ id: w.taskA.id, tenant_id: w.tenantA, status: 'open' }), writes: null }
        : taskMissing
  }
  const action = /^POST \/tasks\/\{task_id\}\/(\w+)$/.exec(key)?.[1]
  const after = action === undefined ? undefined : AFTER_ACTION[action]
  if (after !== undefined) {
    return ownTenant
      ? { status: 200, check: (j) => expect(taskOf(j)).toMatchObject({ id: w.taskA.id, tenant_id: w.tenantA, status: after }), writes: 'A' }
      : taskMissing
  }
  // Operator-only reads (lineage, ...) and operations added to the document later: served, and a read writes nothing.
  return { status: served, writes: op.method === 'GET' ? null : ownTenant ? 'A?' : 'B?' }
}

/** The StreamResponse of the first event of a Server-Sent Events body. */
function firstEvent(text: string): unknown {
  const line = text.split('\n').find((l) => l.startsWith('data: '))
  expect(line, `an event in ${text.slice(0, 200)}`).toBeDefined()
  return JSON.parse((line as string).slice('data: '.length))
}

/** A 403 in the operation's own error format (refused before its body is read: a JSON-RPC id of null). */
const forbidden = (op: Operation, body: typeof AGENT_FORBIDDEN): unknown => refusalIn(op.errorFormat, 403, body, 'PERMISSION_DENIED', 'PERMISSION_DENIED')

function expectationFor(op: Operation, credential: Credential, w: World): Expectation {
  if (op.isPublic) return publicExpectation(op)
  if ('reject' in credential.outcome) {
    return {
      status: 401,
      body: refusalIn(op.errorFormat, 401, credential.outcome.reject, 'UNAUTHENTICATED', 'UNAUTHENTICATED'),
      writes: null,
      headers: { 'www-authenticate': 'Bearer realm="bernstein-a2a"' },
    }
  }
  return authorisedExpectation(op, credential.outcome.as, w)
}

function part(s: Snapshot, w: World, tenant: 'A' | 'B' | 'default'): unknown {
  if (tenant === 'A') return { tasks: s.tenants[w.tenantA], a2a: s.a2a }
  if (tenant === 'B') return s.tenants[w.tenantB]
  return s.tenants['default']
}

function expectStoreAfter(expected: Expectation, w: World, before: Snapshot, after: Snapshot): void {
  for (const tenant of ['A', 'B', 'default'] as const) {
    const changed = part(after, w, tenant)
    if (expected.writes === tenant) expect(changed, `tenant ${tenant} must have changed`).not.toEqual(part(before, w, tenant))
    else if (expected.writes !== `${tenant}?`) expect(changed, `tenant ${tenant} must be unchanged`).toEqual(part(before, w, tenant))
  }
}

describe.each(testEngines())('auth matrix over every operation of openapi.yaml (%s)', (engine) => {
  let app: TestApp
  let clock: TestClock

  beforeAll(async () => {
    clock = worldClock()
    app = await startTestApp({ engine, clock })
  })
  afterAll(async () => {
    await app?.close()
  })

  it('covers the whole document: both prefixes, public and protected operations', () => {
    expect(OPERATIONS.length).toBeGreaterThanOrEqual(48)
    expect(OPERATIONS.filter((o) => o.prefix === '/api/v1').length).toBeGreaterThanOrEqual(20)
    expect(OPERATIONS.some((o) => o.isPublic)).toBe(true)
    // The four legacy A2A writes (both prefixes) and A2A v1.0's JSON-RPC (at /a2a/v1 and /a2a/v1/), SendMessage and
    // CancelTask, SendStreamingMessage, the POST SubscribeToTask and CreateTaskPushNotificationConfig (each also
    // under /{tenant}/).
    expect(OPERATIONS.filter((o) => !o.isPublic && o.method === 'POST' && o.rootPath.startsWith('/a2a/')).length).toBe(20)
    expect(OPERATIONS.filter((o) => o.errorFormat !== 'detail').length).toBe(26)
  })

  for (const op of OPERATIONS) {
    describe(`${op.method} ${op.path}`, () => {
      // Cells that must not write share one world and compare against its snapshot; a permitted write gets a fresh one.
      let shared: Promise<{ world: World; baseline: Snapshot }> | undefined
      const sharedWorld = (): Promise<{ world: World; baseline: Snapshot }> =>
        (shared ??= makeWorld(app, clock, stateFor(op)).then(async (world) => ({ world, baseline: await worldSnapshot(app, world) })))

      for (const credential of CREDENTIALS) {
        it(credential.name, async () => {
          const probe = await sharedWorld()
          const fresh = expectationFor(op, credential, probe.world).writes !== null
          const w = fresh ? await makeWorld(app, clock, stateFor(op)) : probe.world
          const before = fresh ? await worldSnapshot(app, w) : probe.baseline
          const expected = expectationFor(op, credential, w)
          const body = validBody(op, w)
          const send = (headers: Record<string, string>) =>
            rawRequest(app.url, {
              method: op.method,
              path: concretePath(op, w),
              token: null,
              headers,
              ...(body !== undefined && { body: JSON.stringify(body) }),
            })
          const res = await send({ ...op.headers, ...credential.headers(w) })

          if (typeof expected.status === 'number') expect({ status: res.status, text: res.text.slice(0, 300) }).toMatchObject({ status: expected.status })
          else expected.status(res.status)
          if (expected.body !== undefined) expect(res.json).toEqual(expected.body)
          expected.check?.(res.json, res.text)
          for (const [name, value] of Object.entries(expected.headers ?? {})) expect(res.headers.get(name)).toBe(value)
          if (expected.sameAsOperator) {
            const reference = await send({ ...op.headers, authorization: bearer(OPERATOR_TOKEN), 'x-tenant-id': w.tenantA })
            expect({ status: res.status, text: res.text }).toEqual({ status: reference.status, text: reference.text })
          }

          expectStoreAfter(expected, w, before, await worldSnapshot(app, w))
        })
      }
    })
  }

  describe('tokens and tenants beyond the matrix', () => {
    it('an agent token issued without a tenant is still bound to one: the header cannot pick another', async () => {
      const w = await makeWorld(app, clock)
      const unbound = await app.tokens.create({ role: 'agent', tenant: null, expiresInSeconds: null })
      expect(unbound.tenant).toBe('default')
      // A row stored without a tenant (older code, manual insert) is bound to `default` when it is resolved.
      const secret = randomBytes(32).toString('base64url')
      const legacyId = randomBytes(6).toString('hex')
      await app.store.repos.tokens.insert({
        id: legacyId,
        secretHash: createHash('sha256').update(secret).digest('hex'),
        role: 'agent',
        tenantId: null,
        label: null,
        createdAt: clock.now(),
        expiresAt: null,
        revokedAt: null,
      })
      for (const token of [unbound.token, `bat_${legacyId}.${secret}`]) {
        const asA = await rawRequest(app.url, { method: 'GET', path: `/tasks/${w.taskA.id}`, token, headers: { 'x-tenant-id': w.tenantA } })
        expect(asA.status).toBe(404)
        expect(asA.json).toEqual({ detail: `Task '${w.taskA.id}' not found` })
        const list = await rawRequest(app.url, { method: 'GET', path: '/tasks', token, headers: { 'x-tenant-id': w.tenantA } })
        expect(list.status).toBe(200)
        const tenants = (list.json as { tasks: { tenant_id: string }[] }).tasks.map((t) => t.tenant_id)
        expect(tenants.filter((t) => t !== 'default')).toEqual([])
      }
    })

    it('the operator without x-tenant-id works in tenant `default`; an agent ignores the header', async () => {
      const created = await rawRequest(app.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: 'in default' }) })
      expect(created.status).toBe(201)
      expect(taskOf(created.json).tenant_id).toBe('default')
      const agent = await app.tokens.create({ role: 'agent', tenant: 'acme', expiresInSeconds: null })
      const byAgent = await rawRequest(app.url, {
        method: 'POST',
        path: '/tasks',
        token: agent.token,
        headers: { 'x-tenant-id': 'default' },
        body: JSON.stringify({ title: 'by agent' }),
      })
      expect(byAgent.status).toBe(201)
      expect(taskOf(byAgent.json).tenant_id).toBe('acme')
      const invisible = await rawRequest(app.url, {
        method: 'GET',
        path: `/tasks/${taskOf(created.json).id}`,
        token: agent.token,
        headers: { 'x-tenant-id': 'default' },
      })
      expect(invisible.status).toBe(404)
    })

    it('revocation takes effect on the next request', async () => {
      const agent = await app.tokens.create({ role: 'agent', tenant: 'rev', expiresInSeconds: null })
      expect((await rawRequest(app.url, { method: 'GET', path: '/tasks', token: agent.token })).status).toBe(200)
      await app.tokens.revoke(agent.id)
      const after = await rawRequest(app.url, { method: 'GET', path: '/tasks', token: agent.token })
      expect(after.status).toBe(401)
      expect(after.json).toEqual(INVALID)
      await expect(app.tokens.revoke(agent.id)).rejects.toThrow(/not found or already revoked/)
    })

    it('a token works until its expiry and is refused from then on', async () => {
      const agent = await app.tokens.create({ role: 'agent', tenant: 'exp', expiresInSeconds: 60 })
      clock.advance(55)
      expect((await rawRequest(app.url, { method: 'GET', path: '/tasks', token: agent.token })).status).toBe(200)
      clock.advance(5)
      const after = await rawRequest(app.url, { method: 'GET', path: '/tasks', token: agent.token })
      expect(after.status).toBe(401)
      expect(after.json).toEqual(INVALID)
    })

    it('agent tokens get 403 on every operator-only prefix, with or without the /api/v1 prefix, before validation or lookup', async () => {
      const agent = await app.tokens.create({ role: 'agent', tenant: 'ops', expiresInSeconds: null })
      for (const path of [
        '/lineage',
        '/lineage/verify',
        '/federation/peers',
        '/metrics',
        '/api/v1/metrics',
        '/api/v1/lineage/x',
        '/a2a/tasks/send',
        '/api/v1/a2a/nope',
      ]) {
        for (const method of ['GET', 'POST']) {
          if (method === 'GET' && path.includes('/a2a/')) continue
          const res = await rawRequest(app.url, { method, path, token: agent.token, ...(method === 'POST' && { body: '{"not":"valid"' }) })
          expect({ path, method, status: res.status, json: res.json }).toEqual({ path, method, status: 403, json: AGENT_FORBIDDEN })
        }
      }
    })
  })
})
