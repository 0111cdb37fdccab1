/**
 * Shared ground for the security suites: the operations of openapi.yaml, a valid request for each, a controllable
 * clock, and "worlds" (two tenants with fixtures and a full set of credentials) created through the real API.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { parse } from 'yaml'
import { afterAll, beforeAll } from 'vitest'
import type { Engine } from '../../src/store/engine.js'
import { type TestClock, testClock } from '../helpers/clock.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const OPENAPI_PATH = resolve(REPO_ROOT, 'openapi.yaml')

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const

export interface Operation {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS' | 'TRACE'
  /** The contract's path template, e.g. `/api/v1/tasks/{task_id}/claim`. */
  readonly path: string
  /** The same template without the `/api/v1` prefix. */
  readonly rootPath: string
  readonly prefix: '' | '/api/v1'
  readonly operationId: string
  /** `security: []` in the document: reachable without a token. */
  readonly isPublic: boolean
  readonly pathParams: readonly string[]
  readonly queryParams: readonly string[]
  readonly requiredQuery: readonly string[]
  /** Lowest 2xx status the document declares. */
  readonly successStatus: number
  readonly hasBody: boolean
  /** Every status the document declares for the operation. */
  readonly statuses: readonly number[]
  /** How its errors are written (`x-error-format`): `{detail}`, a JSON-RPC error response, or a `google.rpc.Status`. */
  readonly errorFormat: ErrorFormat
  /** Headers every request to it needs to reach its semantics (A2A v1.0's `A2A-Version: 1.0`). */
  readonly headers: Readonly<Record<string, string>>
}

export type ErrorFormat = 'detail' | 'a2a-jsonrpc' | 'a2a-rest'

interface RawOperation {
  operationId?: string
  security?: unknown[]
  parameters?: ({ name?: string; in?: string; required?: boolean; $ref?: string } | undefined)[]
  requestBody?: unknown
  responses?: Record<string, unknown>
  'x-error-format'?: ErrorFormat
}

/** Every operation of openapi.yaml, read with `yaml` from the file itself (not through the app's loader). */
export function loadOperations(): Operation[] {
  const document = parse(readFileSync(OPENAPI_PATH, 'utf8')) as {
    paths: Record<string, Record<string, RawOperation>>
    components?: { parameters?: Record<string, { name: string; in: string; required?: boolean }> }
  }
  const refParams = document.components?.parameters ?? {}
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const params = (op.parameters ?? []).map((p) => {
        if (p?.$ref) {
          const resolved = refParams[p.$ref.split('/').pop() ?? '']
          if (!resolved) throw new Error(`unresolved parameter ${p.$ref} in ${method} ${path}`)
          return resolved
        }
        return { name: p?.name ?? '', in: p?.in ?? '', required: p?.required }
      })
      const success = Object.keys(op.responses ?? {})
        .filter((s) => /^2\d\d$/.test(s))
        .map(Number)
        .sort((a, b) => a - b)[0]
      if (success === undefined) throw new Error(`${method} ${path} declares no 2xx response`)
      const prefix = path.startsWith('/api/v1/') ? '/api/v1' : ''
      operations.push({
        method: method.toUpperCase() as Operation['method'],
        path,
        rootPath: path.slice(prefix.length),
        prefix,
        operationId: op.operationId ?? `${method} ${path}`,
        isPublic: Array.isArray(op.security) && op.security.length === 0,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        requiredQuery: params.filter((p) => p.in === 'query' && p.required === true).map((p) => p.name),
        successStatus: success,
        hasBody: op.requestBody !== undefined,
        statuses: Object.keys(op.responses ?? {}).map(Number),
        errorFormat: op['x-error-format'] ?? 'detail',
        // The A2A v1.0 operations refuse a request that does not say it speaks 1.0 (absent means 0.3).
        headers: params.some((p) => p.in === 'header' && p.name === 'A2A-Version') ? { 'a2a-version': '1.0' } : {},
      })
    }
  }
  return operations
}

/** The clock worlds are built on: every reading a millisecond later than the last, so writes stay distinguishable. */
export function worldClock(): TestClock {
  return testClock({ start: 1_800_000_000, stepPerReading: 0.001 })
}

export const uid = (): string => randomBytes(4).toString('hex')

/** The state a task must be in for the operation's transition to be legal. */
export type TaskState = 'open' | 'claimed' | 'done'

const STATE_FOR_ACTION: Readonly<Record<string, TaskState>> = {
  claim: 'open',
  progress: 'claimed',
  complete: 'open',
  fail: 'open',
  cancel: 'open',
  block: 'claimed',
  close: 'done',
}

/** The state the operation's target task must start in. */
export function stateFor(op: Operation): TaskState {
  const action = /^\/tasks\/\{task_id\}\/(\w+)$/.exec(op.rootPath)?.[1]
  return action === undefined ? 'open' : (STATE_FOR_ACTION[action] ?? 'open')
}

export interface Credentials {
  readonly agentA: string
  readonly agentAId: string
  readonly agentB: string
  readonly revokedA: string
  readonly expiredA: string
  /** An operator token issued for tenant A only. */
  readonly boundOperatorA: string
}

/** Two tenants: A holds the target task and an A2A task, B holds one unrelated task. */
export interface World {
  readonly tenantA: string
  readonly tenantB: string
  /** The target task in A, in the state the operation needs; its role is unique to this world. */
  readonly taskA: { readonly id: string; readonly role: string }
  readonly a2aA: { readonly id: string; readonly bernsteinTaskId: string }
  readonly taskB: { readonly id: string }
  readonly creds: Credentials
  readonly tag: string
}

async function ok(app: TestApp, tenant: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await rawRequest(app.url, {
    method,
    path,
    token: OPERATOR_TOKEN,
    headers: { 'x-tenant-id': tenant },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  if (res.status >= 300) throw new Error(`fixture ${method} ${path} failed: ${res.status} ${res.text}`)
  return res.json as Record<string, unknown>
}

/** Builds a world through the API (operator token), and its tokens through the TokenService. */
export async function makeWorld(app: TestApp, clock: TestClock, state: TaskState = 'open'): Promise<World> {
  const tag = uid()
  const tenantA = `ta-${tag}`
  const tenantB = `tb-${tag}`
  const role = `role-${tag}`
  const task = await ok(app, tenantA, 'POST', '/tasks', { title: `target ${tag}`, role })
  const id = String(task['id'])
  if (state === 'claimed' || state === 'done') await ok(app, tenantA, 'POST', `/tasks/${id}/claim`, { agent_id: 'fixture' })
  if (state === 'done') await ok(app, tenantA, 'POST', `/tasks/${id}/complete`, { result_summary: 'fixture done' })
  const a2a = await ok(app, tenantA, 'POST', '/a2a/tasks/send', { sender: `peer-${tag}`, message: `hello ${tag}`, role: `a2a-${tag}` })
  const other = await ok(app, tenantB, 'POST', '/tasks', { title: `other ${tag}`, role: `other-${tag}` })

  const agentA = await app.tokens.create({ role: 'agent', tenant: tenantA, expiresInSeconds: null })
  const agentB = await app.tokens.create({ role: 'agent', tenant: tenantB, expiresInSeconds: null })
  const revoked = await app.tokens.create({ role: 'agent', tenant: tenantA, expiresInSeconds: null })
  await app.tokens.revoke(revoked.id)
  const boundOperator = await app.tokens.create({ role: 'operator', tenant: tenantA, expiresInSeconds: null })
  const expired = await app.tokens.create({ role: 'agent', tenant: tenantA, expiresInSeconds: 60 })
  clock.advance(61)
  return {
    tenantA,
    tenantB,
    taskA: { id, role },
    a2aA: { id: String(a2a['id']), bernsteinTaskId: String(a2a['bernstein_task_id']) },
    taskB: { id: String(other['id']) },
    creds: {
      agentA: agentA.token,
      agentAId: agentA.id,
      agentB: agentB.token,
      revokedA: revoked.token,
      expiredA: expired.token,
      boundOperatorA: boundOperator.token,
    },
    tag,
  }
}

export interface WorldFixture {
  readonly app: TestApp
  readonly world: World
  /** Every table, read through an independent connection: equal dumps before and after mean nothing was written. */
  readonly store: StoreDump
}

/**
 * For one `describe`: a test app on `engine` with a controllable clock, a world whose target task is in `state`,
 * and a dump of its store; all closed after the `describe`. Read the fields inside tests (they exist once
 * `beforeAll` has run).
 */
export function worldFixture(engine: Engine, state: TaskState = 'open'): WorldFixture {
  let ready: WorldFixture | undefined
  beforeAll(async () => {
    const clock = worldClock()
    const app = await startTestApp({ engine, clock })
    ready = { app, world: await makeWorld(app, clock, state), store: await openStoreDump(app) }
  })
  afterAll(async () => {
    await ready?.store.close()
    await ready?.app.close()
  })
  const get = (): WorldFixture => {
    if (ready === undefined) throw new Error('worldFixture is read before its beforeAll ran')
    return ready
  }
  return {
    get app() {
      return get().app
    },
    get world() {
      return get().world
    },
    get store() {
      return get().store
    },
  }
}

/** False for an operation with a body this module has no template for (one added to the document later). */
export function hasBodyTemplate(op: Operation): boolean {
  return !op.hasBody || KNOWN_BODIES.has(`${op.method} ${op.rootPath}`)
}

const KNOWN_BODIES = new Set([
  'POST /a2a/message',
  'POST /a2a/tasks/send',
  'POST /a2a/tasks/{a2a_task_id}/artifacts',
  'POST /a2a/v0/tasks',
  'POST /tasks',
  'POST /a2a/v1',
  'POST /a2a/v1/message:send',
  'POST /a2a/v1/tasks/{a2a_task_id}:cancel',
  'POST /a2a/v1/',
  'POST /a2a/v1/{a2a_tenant}/message:send',
  'POST /a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}:cancel',
  'POST /a2a/v1/message:stream',
  'POST /a2a/v1/tasks/{a2a_task_id}:subscribe',
  'POST /a2a/v1/tasks/{a2a_task_id}/pushNotificationConfigs',
  'POST /a2a/v1/{a2a_tenant}/message:stream',
  'POST /a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}:subscribe',
  'POST /a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}/pushNotificationConfigs',
  ...['claim', 'progress', 'complete', 'fail', 'block', 'cancel', 'close'].map((a) => `POST /tasks/{task_id}/${a}`),
])

const v1SendParams = (t: string) => ({
  message: { messageId: `m-${t}-${uid()}`, role: 'ROLE_USER', parts: [{ text: `v1 ${t}` }] },
  configuration: { returnImmediately: true },
})

/** A valid request body for the operation in this world (undefined: the operation takes none). */
export function validBody(op: Operation, world: World): unknown {
  const t = world.tag
  switch (`${op.method} ${op.rootPath}`) {
    case 'POST /a2a/message':
      return { sender: `peer-${t}`, recipient: 'bernstein', content: `note ${t}`, task_id: world.taskA.id }
    case 'POST /a2a/tasks/send':
      return { sender: `peer-${t}`, message: `sent ${t}`, role: `sent-${t}` }
    case 'POST /a2a/tasks/{a2a_task_id}/artifacts':
      return { name: `log-${t}`, data: 'artifact data', content_type: 'text/plain' }
    case 'POST /a2a/v0/tasks':
      return {
        sender: { name: `peer-${t}-${uid()}`, description: 'a peer', capabilities: ['code'], endpoint: 'http://peer.test' },
        task: { id: `remote-${uid()}`, message: `delegated ${t}`, role: `v0-${t}` },
      }
    case 'POST /tasks':
      return { title: `created ${t}`, role: `created-${t}`, metadata: { k: 'v' } }
    case 'POST /tasks/{task_id}/claim':
      return { agent_id: 'worker-1' }
    case 'POST /tasks/{task_id}/progress':
      return { message: 'halfway', percent: 50 }
    case 'POST /tasks/{task_id}/complete':
      return { result_summary: 'finished' }
    case 'POST /tasks/{task_id}/fail':
    case 'POST /tasks/{task_id}/block':
      return { reason: 'upstream down' }
    case 'POST /tasks/{task_id}/cancel':
    case 'POST /tasks/{task_id}/close':
      return { reason: 'no longer needed' }
    // A2A v1.0: a SendMessage that answers at once (a blocking one would wait for a worker, up to the node's bound).
    case 'POST /a2a/v1':
    case 'POST /a2a/v1/':
      return { jsonrpc: '2.0', id: `rpc-${t}`, method: 'SendMessage', params: v1SendParams(t) }
    case 'POST /a2a/v1/message:send':
    case 'POST /a2a/v1/{a2a_tenant}/message:send':
      return v1SendParams(t)
    case 'POST /a2a/v1/tasks/{a2a_task_id}:cancel':
    case 'POST /a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}:cancel':
      return { metadata: { reason: 'no longer needed' } }
    // A2A v1.0 streams (they end at the test app's stream time limit).
    case 'POST /a2a/v1/message:stream':
    case 'POST /a2a/v1/{a2a_tenant}/message:stream':
      return v1SendParams(t)
    case 'POST /a2a/v1/tasks/{a2a_task_id}:subscribe':
    case 'POST /a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}:subscribe':
      return {}
    // A public address written as one (no DNS); test apps run no delivery worker, so nothing is sent there.
    case 'POST /a2a/v1/tasks/{a2a_task_id}/pushNotificationConfigs':
    case 'POST /a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}/pushNotificationConfigs':
      return { url: 'https://93.184.215.14/hook', id: `cfg-${t}` }
  }
  // An operation added to the document after these templates: an empty object still exercises auth and tenancy.
  return op.hasBody ? {} : undefined
}

/** The concrete path for the operation, its parameters (and required query) filled with the world's tenant-A ids. */
export function concretePath(op: Operation, world: World): string {
  const query = op.requiredQuery.map((name) => `${name}=${encodeURIComponent(name === 'ticket_id' ? world.taskA.id : `x-${world.tag}`)}`).join('&')
  return (
    op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      switch (name) {
        case 'task_id':
          return world.taskA.id
        case 'a2a_task_id':
          return world.a2aA.id
        // A2A v1.0's /{tenant}/ variants name tenant A, as the operator's x-tenant-id does.
        case 'a2a_tenant':
          return world.tenantA
        case 'role':
          return encodeURIComponent(world.taskA.role)
        case 'config_id':
          return `cfg-${world.tag}`
        default:
          throw new Error(`no value for path parameter {${name}} in ${op.path}: add one to test/security/support.ts`)
      }
    }) + (query ? `?${query}` : '')
  )
}

/** Everything an operator can see of a tenant: all its tasks (with versions), newest first. */
export async function tenantTasks(app: TestApp, tenant: string): Promise<unknown[]> {
  const tasks: unknown[] = []
  let cursor: string | null = null
  do {
    const res = await rawRequest(app.url, {
      method: 'GET',
      path: `/tasks?limit=500${cursor ? `&cursor=${cursor}` : ''}`,
      token: OPERATOR_TOKEN,
      headers: { 'x-tenant-id': tenant },
    })
    if (res.status !== 200) throw new Error(`snapshot list failed: ${res.status} ${res.text}`)
    const page = res.json as { tasks: unknown[]; next_cursor: string | null }
    tasks.push(...page.tasks)
    cursor = page.next_cursor
  } while (cursor)
  return tasks
}

export interface Snapshot {
  readonly tenants: Readonly<Record<string, unknown[]>>
  readonly a2a: Readonly<Record<string, unknown>>
}

/** GET /tasks as the operator for each tenant, and GET of each A2A task (status, artifacts, updated_at). */
export async function snapshot(app: TestApp, tenants: readonly string[], a2a: readonly { tenant: string; id: string }[]): Promise<Snapshot> {
  const byTenant: Record<string, unknown[]> = {}
  for (const tenant of tenants) byTenant[tenant] = await tenantTasks(app, tenant)
  const a2aById: Record<string, unknown> = {}
  for (const { tenant, id } of a2a) {
    const res = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${id}`, token: OPERATOR_TOKEN, headers: { 'x-tenant-id': tenant } })
    a2aById[id] = { status: res.status, body: res.json }
  }
  return { tenants: byTenant, a2a: a2aById }
}

export function worldSnapshot(app: TestApp, world: World): Promise<Snapshot> {
  return snapshot(app, [world.tenantA, world.tenantB, 'default'], [{ tenant: world.tenantA, id: world.a2aA.id }])
}

/** Every row of every table, per table, each row serialised and the rows sorted: equal dumps mean nothing was written. */
export type Dump = Readonly<Record<string, readonly string[]>>

export interface StoreDump {
  dump(): Promise<Dump>
  close(): Promise<void>
}

const serialiseRow = (row: unknown): string => JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))

/**
 * A second, independent connection to the test server's database, reading every table directly (not through the
 * repositories), so that a write anywhere, by anything, shows. SQLite: the data dir's file, read-only. PostgreSQL:
 * the server's private schema, found by a marker task created through the API.
 */
/**
 * Tables a dump leaves out: the replay cache of peer signatures records every signed request's nonce whatever its
 * outcome (that is what refuses a replay), so it is not data a refusal may be said to have changed.
 */
const NOT_DUMPED = new Set(['peer_nonces'])

export async function openStoreDump(app: TestApp): Promise<StoreDump> {
  if (app.engine === 'sqlite') {
    const db = new SQLite(join(app.dataDir, 'bernstein-a2a.sqlite'), { readonly: true, fileMustExist: true })
    return {
      dump: async () => {
        const tables = db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name").all() as { name: string }[]
        return Object.fromEntries(
          tables.filter(({ name }) => !NOT_DUMPED.has(name)).map(({ name }) => [name, db.prepare(`select * from "${name}"`).all().map(serialiseRow).sort()]),
        )
      },
      close: async () => {
        db.close()
      },
    }
  }
  const marker = `dump-marker-${uid()}`
  await ok(app, 'dump-marker', 'POST', '/tasks', { title: marker })
  const client = new pg.Client({ connectionString: process.env['TEST_DATABASE_URL'] })
  await client.connect()
  let schema: string | undefined
  const candidates = await client.query<{ table_schema: string }>("select table_schema from information_schema.tables where table_name = 'tasks'")
  for (const { table_schema } of candidates.rows) {
    const found = await client.query(`select 1 from "${table_schema}".tasks where title = $1`, [marker])
    if (found.rowCount) schema = table_schema
  }
  if (schema === undefined) throw new Error('could not find the test server schema')
  const inSchema = schema
  return {
    dump: async () => {
      const tables = await client.query<{ table_name: string }>(
        'select table_name from information_schema.tables where table_schema = $1 order by table_name',
        [inSchema],
      )
      const result: Record<string, string[]> = {}
      for (const { table_name } of tables.rows.filter((t) => !NOT_DUMPED.has(t.table_name)))
        result[table_name] = (await client.query(`select * from "${inSchema}"."${table_name}"`)).rows.map(serialiseRow).sort()
      return result
    },
    close: () => client.end(),
  }
}

const A2A_ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo'

/** What is wrong with an ErrorInfo list (`google.rpc.Status.details`, JSON-RPC `error.data`), or null. */
function errorInfoProblem(details: unknown): string | null {
  if (!Array.isArray(details) || details.length === 0) return 'no ErrorInfo'
  for (const d of details as { '@type'?: unknown; reason?: unknown; domain?: unknown; metadata?: unknown }[]) {
    if (d['@type'] !== A2A_ERROR_INFO) return `detail of type ${JSON.stringify(d['@type'])}`
    if (typeof d.reason !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(d.reason)) return `ErrorInfo reason ${JSON.stringify(d.reason)}`
    if (d.domain !== 'a2a-protocol.org') return `ErrorInfo domain ${JSON.stringify(d.domain)}`
    if (d.metadata !== undefined && (typeof d.metadata !== 'object' || d.metadata === null || Object.values(d.metadata).some((v) => typeof v !== 'string')))
      return 'ErrorInfo metadata is not a map of strings'
  }
  return null
}

/** What is wrong with `body` as the `{detail}` error of the node (a string, or the 422 list of `{loc, msg, type}`), or null. */
export function detailProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || !('detail' in body)) return 'no detail'
  const detail = (body as { detail: unknown }).detail
  if (typeof detail === 'string') return null
  if (!Array.isArray(detail) || detail.length === 0) return 'detail is neither a string nor a non-empty list'
  for (const item of detail) {
    const i = item as { loc?: unknown; msg?: unknown; type?: unknown }
    if (!Array.isArray(i.loc) || !i.loc.every((l) => typeof l === 'string' || typeof l === 'number')) return 'loc is not a list of strings and numbers'
    if (typeof i.msg !== 'string' || typeof i.type !== 'string') return 'msg or type is not a string'
  }
  return null
}

/**
 * What is wrong with `body` as an error answered with HTTP `status` in `format` (the operation's `x-error-format`),
 * or null: `{detail}`; a `google.rpc.Status` whose code is the HTTP status, with an ErrorInfo; or a JSON-RPC 2.0
 * error response (`error.code` an integer, `error.data` the ErrorInfo).
 */
export function errorBodyProblem(format: ErrorFormat, status: number, body: unknown): string | null {
  if (format === 'detail') return detailProblem(body)
  if (typeof body !== 'object' || body === null) return 'not an object'
  if (format === 'a2a-rest') {
    const error = (body as { error?: { code?: unknown; status?: unknown; message?: unknown; details?: unknown } }).error
    if (typeof error !== 'object' || error === null) return 'no google.rpc.Status error'
    if (Object.keys(body).length !== 1) return 'members beside error'
    if (error.code !== status) return `error.code ${JSON.stringify(error.code)} is not the HTTP status ${status}`
    if (typeof error.status !== 'string' || !/^[A-Z_]+$/.test(error.status)) return `error.status ${JSON.stringify(error.status)}`
    if (typeof error.message !== 'string') return 'error.message is not a string'
    return errorInfoProblem(error.details)
  }
  const rpc = body as { jsonrpc?: unknown; id?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown }; result?: unknown }
  if (rpc.jsonrpc !== '2.0') return 'not a JSON-RPC 2.0 response'
  if (!('id' in rpc) || !(rpc.id === null || typeof rpc.id === 'string' || typeof rpc.id === 'number')) return 'no valid id'
  if ('result' in rpc) return 'a result in an error'
  if (typeof rpc.error !== 'object' || rpc.error === null) return 'no JSON-RPC error'
  if (!Number.isInteger(rpc.error.code)) return 'error.code is not an integer'
  if (typeof rpc.error.message !== 'string') return 'error.message is not a string'
  return errorInfoProblem(rpc.error.data)
}

/**
 * The error `detail` (with its extra members) as the operation writes it: as is for `{detail}` operations; for the
 * A2A v1.0 ones, the refusal of the transport in their dialect (`reason`, `rpcStatus`: its ErrorInfo reason and
 * `google.rpc.Code`; the extra members become ErrorInfo metadata). `id`: the JSON-RPC id the answer carries.
 */
export function refusalIn(
  format: ErrorFormat,
  status: number,
  body: { readonly detail: string } & Readonly<Record<string, string>>,
  reason: string,
  rpcStatus: string,
  id: string | number | null = null,
): unknown {
  if (format === 'detail') return body
  const { detail, ...metadata } = body
  const info = { '@type': A2A_ERROR_INFO, reason, domain: 'a2a-protocol.org', ...(Object.keys(metadata).length > 0 && { metadata }) }
  if (format === 'a2a-rest') return { error: { code: status, status: rpcStatus, message: detail, details: [info] } }
  return { jsonrpc: '2.0', id, error: { code: -32000, message: detail, data: [info] } }
}
