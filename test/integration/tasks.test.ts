import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { components } from '../../generated/openapi.js'
import type { ApiClient } from '../../src/client/index.js'
import { TASK_STATUSES, type Task as DomainTask, type TaskStatus, allowedTransitions } from '../../src/tasks/task.js'
import { type TestClock, testClock } from '../helpers/clock.js'
import { testEngines } from '../helpers/engines.js'
import { API_STEPS, type TaskRoute } from '../helpers/task-steps.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

type Task = components['schemas']['Task']
type Prefix = '' | '/api/v1'

const PREFIXES: readonly Prefix[] = ['', '/api/v1']
const ROUTES: readonly TaskRoute[] = ['claim', 'progress', 'complete', 'fail', 'cancel', 'block', 'close']

/**
 * Bernstein's transition table (bernstein-behaviour.md §4), written out independently of src/tasks/task.ts so that
 * a change to either shows up as a failure.
 */
const EXPECTED_TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  planned: ['open', 'cancelled', 'failed'],
  open: ['claimed', 'waiting_for_subtasks', 'cancelled', 'failed'],
  claimed: ['in_progress', 'open', 'done', 'failed', 'cancelled', 'waiting_for_subtasks', 'blocked'],
  in_progress: ['done', 'failed', 'blocked', 'waiting_for_subtasks', 'open', 'cancelled', 'orphaned'],
  orphaned: ['done', 'failed', 'open'],
  blocked: ['open', 'cancelled', 'failed'],
  waiting_for_subtasks: ['done', 'blocked', 'cancelled', 'failed'],
  failed: ['open'],
  done: ['closed', 'failed'],
  closed: [],
  cancelled: [],
  pending_approval: [],
}

/** The status each route moves a task to. */
const TARGET_OF: Readonly<Record<TaskRoute, TaskStatus>> = {
  claim: 'claimed',
  progress: 'in_progress',
  complete: 'done',
  fail: 'failed',
  cancel: 'cancelled',
  block: 'blocked',
  close: 'closed',
}

/** Statuses no API call produces; the table still covers them, with tasks written straight into the store. */
const STORE_ONLY: readonly TaskStatus[] = TASK_STATUSES.filter((s) => API_STEPS[s] === undefined)

/** Whether `route` from `from` is legal, per the table (progress on in_progress and complete on open are special). */
function isLegal(from: TaskStatus, route: TaskRoute): boolean {
  if (route === 'progress' && from === 'in_progress') return true
  if (route === 'complete' && from === 'open') return true
  return EXPECTED_TRANSITIONS[from].includes(TARGET_OF[route])
}

/** The transition a refused call names: complete on a non-open task is `<from> -> done`, and so on. */
function refusedTarget(route: TaskRoute): TaskStatus {
  return TARGET_OF[route]
}

interface CallResult {
  readonly status: number
  readonly data: Task | undefined
  readonly error: unknown
}

async function call(client: ApiClient, route: TaskRoute, id: string, expectedVersion?: number): Promise<CallResult> {
  const query = expectedVersion === undefined ? {} : { expected_version: expectedVersion }
  const path = { task_id: id }
  let r: { data?: Task; error?: unknown; response: Response }
  switch (route) {
    case 'claim':
      r = await client.POST('/tasks/{task_id}/claim', { params: { path, query }, body: { agent_id: 'agent-7' } })
      break
    case 'progress':
      r = await client.POST('/tasks/{task_id}/progress', { params: { path, query }, body: { message: 'halfway there', percent: 50 } })
      break
    case 'complete':
      r = await client.POST('/tasks/{task_id}/complete', { params: { path, query }, body: { result_summary: 'all green' } })
      break
    case 'fail':
      r = await client.POST('/tasks/{task_id}/fail', { params: { path, query }, body: { reason: 'upstream down' } })
      break
    case 'cancel':
      r = await client.POST('/tasks/{task_id}/cancel', { params: { path, query }, body: { reason: 'no longer needed' } })
      break
    case 'block':
      r = await client.POST('/tasks/{task_id}/block', { params: { path, query }, body: { reason: 'waiting for keys' } })
      break
    case 'close':
      r = await client.POST('/tasks/{task_id}/close', { params: { path, query }, body: { reason: 'shipped' } })
      break
  }
  return { status: r.response.status, data: r.data, error: r.error }
}

async function create(client: ApiClient, body: components['schemas']['TaskCreate']): Promise<Task> {
  const { data, response } = await client.POST('/tasks', { body })
  expect(response.status).toBe(201)
  if (!data) throw new Error('no task in the 201 response')
  return data
}

async function getTask(client: ApiClient, id: string): Promise<Task> {
  const { data, response } = await client.GET('/tasks/{task_id}', { params: { path: { task_id: id } } })
  expect(response.status).toBe(200)
  if (!data) throw new Error(`task ${id} not readable`)
  return data
}

async function listAll(client: ApiClient, query: { status?: TaskStatus; role?: string } = {}): Promise<Task[]> {
  const { data, response } = await client.GET('/tasks', { params: { query: { ...query, limit: 500 } } })
  expect(response.status).toBe(200)
  expect(data?.next_cursor).toBeNull()
  return data?.tasks ?? []
}

/** A task in `status`: reached through the API where it can be, else written into the store. */
async function taskIn(t: TestApp, client: ApiClient, status: TaskStatus, role: string): Promise<Task> {
  const task = await create(client, { title: `a task that will be ${status}`, role })
  const steps = API_STEPS[status]
  if (steps !== undefined) {
    for (const step of steps) expect((await call(client, step, task.id)).status).toBe(200)
    const reached = await getTask(client, task.id)
    expect(reached.status).toBe(status)
    return reached
  }
  const stored = await t.store.repos.tasks.get(task.tenant_id, task.id)
  if (!stored) throw new Error('created task not in the store')
  const seeded: DomainTask = { ...stored, status, version: stored.version + 1 }
  expect(await t.store.repos.tasks.replace(seeded, stored.version)).toBe(true)
  const reread = await getTask(client, task.id)
  expect(reread.status).toBe(status)
  return reread
}

let roleCounter = 0
const uniqueRole = (label: string): string => `${label}-${process.pid}-${++roleCounter}`
let tenantCounter = 0
const uniqueTenant = (label: string): string => `${label}-${++tenantCounter}`

it('the transition table in src/tasks/task.ts is Bernstein’s table', () => {
  for (const from of TASK_STATUSES) expect([...allowedTransitions(from)].sort()).toEqual([...EXPECTED_TRANSITIONS[from]].sort())
})

for (const engine of testEngines()) {
  describe(`task API (${engine})`, () => {
    let t: TestApp
    // The server's clock: it stands still until a test moves it, so creation order is set explicitly and never
    // depends on two requests landing in different milliseconds.
    let clock: TestClock

    beforeAll(async () => {
      clock = testClock()
      t = await startTestApp({ engine, clock })
    })
    afterAll(async () => {
      await t?.close()
    })

    for (const prefix of PREFIXES) {
      describe(`prefix '${prefix || '/'}'`, () => {
        let client: ApiClient
        beforeAll(() => {
          client = t.clientWith({ token: OPERATOR_TOKEN, prefix })
        })

        describe('POST /tasks', () => {
          it('creates an open task with Bernstein’s defaults', async () => {
            clock.advance(1)
            const now = clock.now()
            const task = await create(client, { title: 'Add a health check' })
            expect(task).toEqual({
              id: expect.stringMatching(/^[0-9a-f]{12}$/),
              title: 'Add a health check',
              description: '',
              role: 'auto',
              priority: 2,
              scope: 'medium',
              complexity: 'medium',
              estimated_minutes: 30,
              status: 'open',
              task_type: 'standard',
              depends_on: [],
              parent_task_id: null,
              owned_files: [],
              assigned_agent: null,
              result_summary: null,
              terminal_reason: null,
              tenant_id: 'default',
              metadata: {},
              created_at: now,
              updated_at: now,
              claimed_at: null,
              completed_at: null,
              closed_at: null,
              progress_log: [],
              version: 1,
            })
            expect(await getTask(client, task.id)).toEqual(task)
          })

          it('stores every field it is given', async () => {
            const body: components['schemas']['TaskCreate'] = {
              title: 'Fix the flaky test',
              description: 'It fails one run in ten.\nSee CI.',
              role: 'qa',
              priority: 0,
              scope: 'small',
              complexity: 'high',
              estimated_minutes: 90,
              task_type: 'fix',
              depends_on: ['0123456789ab', 'ba9876543210'],
              parent_task_id: 'aaaaaaaaaaaa',
              owned_files: ['src/a.ts', 'test/a.test.ts'],
              metadata: { ticket: 'ENG-42', nested: { ok: true, n: 1.5 } },
            }
            const task = await create(client, body)
            expect(task).toMatchObject({ ...body, status: 'open', version: 1 })
            expect(await getTask(client, task.id)).toEqual(task)
          })

          it('keeps metadata nested 100 levels deep exactly', async () => {
            // 100 nested objects; the mixed array sits at the second level.
            let metadata: Record<string, unknown> = { leaf: 'x' }
            for (let i = 0; i < 99; i++) metadata = { [`level${99 - i}`]: metadata }
            metadata = { ...metadata, mixed: [1, 2.5, 'x', null, true, { k: 'v' }] }
            const task = await create(client, { title: 'deep metadata', metadata })
            expect(task.metadata).toEqual(metadata)
            expect((await getTask(client, task.id)).metadata).toEqual(metadata)
          })

          it('scopes the task to the tenant of the x-tenant-id header', async () => {
            const tenant = uniqueTenant('acme')
            const inTenant = t.clientWith({ token: OPERATOR_TOKEN, tenant, prefix })
            const task = await create(inTenant, { title: 'tenant task' })
            expect(task.tenant_id).toBe(tenant)
            const { response, error } = await client.GET('/tasks/{task_id}', { params: { path: { task_id: task.id } } })
            expect(response.status).toBe(404)
            expect(error).toEqual({ detail: `Task '${task.id}' not found` })
            expect((await listAll(client)).some((x) => x.id === task.id)).toBe(false)
            expect(await getTask(inTenant, task.id)).toEqual(task)
          })
        })

        describe('GET /tasks/{task_id}', () => {
          it('returns the task, and 404 with Bernstein’s text for an unknown id', async () => {
            const task = await create(client, { title: 'read me' })
            expect(await getTask(client, task.id)).toEqual(task)
            const { response, error } = await client.GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } })
            expect(response.status).toBe(404)
            expect(error).toEqual({ detail: "Task 'ffffffffffff' not found" })
          })
        })

        describe('GET /tasks', () => {
          it('lists newest first and filters by status and by role (exact match)', async () => {
            const role = uniqueRole('filter')
            const open1 = await create(client, { title: 'open one', role })
            clock.advance(1)
            const claimed = await taskIn(t, client, 'claimed', role)
            clock.advance(1)
            const open2 = await create(client, { title: 'open two', role })
            clock.advance(1)
            const done = await taskIn(t, client, 'done', role)
            await create(client, { title: 'other role', role: role + '-x' })
            await create(client, { title: 'other role', role: role.toUpperCase() })

            const all = await listAll(client, { role })
            expect(all.map((x) => x.id)).toEqual([done.id, open2.id, claimed.id, open1.id])
            expect(all.find((x) => x.id === done.id)).toEqual(await getTask(client, done.id))
            expect((await listAll(client, { role, status: 'open' })).map((x) => x.id)).toEqual([open2.id, open1.id])
            expect((await listAll(client, { role, status: 'claimed' })).map((x) => x.id)).toEqual([claimed.id])
            expect((await listAll(client, { role, status: 'done' })).map((x) => x.id)).toEqual([done.id])
            expect(await listAll(client, { role, status: 'failed' })).toEqual([])
            const openEverywhere = await listAll(client, { status: 'open' })
            expect(openEverywhere.every((x) => x.status === 'open')).toBe(true)
            expect(openEverywhere.map((x) => x.id)).toEqual(expect.arrayContaining([open1.id, open2.id]))
          })

          it('pages with cursors: every task exactly once, newest first, no duplicates or gaps', async () => {
            const tenant = uniqueTenant('pages')
            const c = t.clientWith({ token: OPERATOR_TOKEN, tenant, prefix })
            const created: Task[] = []
            // Each batch of six shares one created_at (the clock stands still within it), so the id tiebreak decides
            // the order inside a batch and page boundaries fall between tasks of equal timestamp.
            for (let batch = 0; batch < 4; batch++) {
              clock.advance(1)
              created.push(...(await Promise.all(Array.from({ length: 6 }, (_, i) => create(c, { title: `page task ${batch}.${i}` })))))
            }
            clock.advance(1)
            created.push(await create(c, { title: 'last one' }))
            expect(created).toHaveLength(25)
            expect(new Set(created.map((x) => x.created_at)).size).toBe(5)

            const seen: Task[] = []
            const pageSizes: number[] = []
            let cursor: string | undefined
            for (let pages = 0; pages < 20; pages++) {
              const { data, response } = await c.GET('/tasks', { params: { query: { limit: 4, ...(cursor !== undefined && { cursor }) } } })
              expect(response.status).toBe(200)
              if (!data) throw new Error('no page')
              seen.push(...data.tasks)
              pageSizes.push(data.tasks.length)
              if (data.next_cursor === null) break
              expect(data.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/)
              cursor = data.next_cursor
            }
            expect(pageSizes).toEqual([4, 4, 4, 4, 4, 4, 1])
            const ids = seen.map((x) => x.id)
            expect(new Set(ids).size).toBe(ids.length)
            expect([...ids].sort()).toEqual(created.map((x) => x.id).sort())
            // Same order as one big page, which is newest first with the id as tiebreak.
            expect(ids).toEqual((await listAll(c)).map((x) => x.id))
            const expectedOrder = [...created].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((x) => x.id)
            expect(ids).toEqual(expectedOrder)
          })

          it('pages a filtered listing without leaking other statuses or roles', async () => {
            const tenant = uniqueTenant('filtered-pages')
            const c = t.clientWith({ token: OPERATOR_TOKEN, tenant, prefix })
            const open: string[] = []
            for (let i = 0; i < 9; i++) {
              // Each open task is strictly newer than the one before, so newest first is the reverse creation order.
              clock.advance(1)
              open.push((await create(c, { title: `open ${i}`, role: 'backend' })).id)
              const other = await create(c, { title: `cancelled ${i}`, role: 'backend' })
              expect((await call(c, 'cancel', other.id)).status).toBe(200)
              await create(c, { title: `frontend ${i}`, role: 'frontend' })
            }
            const seen: string[] = []
            let cursor: string | undefined
            for (let pages = 0; pages < 10; pages++) {
              const { data } = await c.GET('/tasks', {
                params: { query: { status: 'open', role: 'backend', limit: 2, ...(cursor !== undefined && { cursor }) } },
              })
              if (!data) throw new Error('no page')
              expect(data.tasks.every((x) => x.status === 'open' && x.role === 'backend')).toBe(true)
              seen.push(...data.tasks.map((x) => x.id))
              if (data.next_cursor === null) break
              cursor = data.next_cursor
            }
            expect(seen).toEqual([...open].reverse())
          })

          it('defaults to 50 per page', async () => {
            const tenant = uniqueTenant('default-limit')
            const c = t.clientWith({ token: OPERATOR_TOKEN, tenant, prefix })
            await Promise.all(Array.from({ length: 51 }, (_, i) => create(c, { title: `t${i}` })))
            const { data } = await c.GET('/tasks')
            expect(data?.tasks).toHaveLength(50)
            expect(data?.next_cursor).toEqual(expect.any(String))
            const { data: rest } = await c.GET('/tasks', { params: { query: { cursor: data?.next_cursor ?? '' } } })
            expect(rest?.tasks).toHaveLength(1)
            expect(rest?.next_cursor).toBeNull()
          })
        })

        describe('GET /tasks/next/{role}', () => {
          it('answers 204 with no body when no task is open for the role', async () => {
            const role = uniqueRole('nothing')
            await taskIn(t, client, 'claimed', role)
            await taskIn(t, client, 'cancelled', role)
            const { response, data } = await client.GET('/tasks/next/{role}', { params: { path: { role } } })
            expect(response.status).toBe(204)
            expect(data).toBeUndefined()
            expect(await response.text()).toBe('')
          })

          it('claims by priority (lowest number first), then oldest first, and says who claimed it', async () => {
            const role = uniqueRole('order')
            const made: Task[] = []
            for (const priority of [2, 0, 2, 1, 0, 3]) {
              clock.advance(1)
              made.push(await create(client, { title: `p${priority}`, role, priority }))
            }
            // Open tasks of other roles, other tenants and other statuses are never handed out.
            await create(client, { title: 'other role', role: role + '-other', priority: 0 })
            await create(t.clientWith({ token: OPERATOR_TOKEN, tenant: uniqueTenant('other'), prefix }), { title: 'other tenant', role, priority: 0 })
            const order = [made[1], made[4], made[3], made[0], made[2], made[5]].map((x) => x?.id)
            const claimedIds: string[] = []
            for (let i = 0; i < order.length; i++) {
              const { data, response } = await client.GET('/tasks/next/{role}', { params: { path: { role }, query: { agent_id: `agent-${i}` } } })
              expect(response.status).toBe(200)
              if (!data) throw new Error('no task')
              expect(data.status).toBe('claimed')
              expect(data.assigned_agent).toBe(`agent-${i}`)
              expect(data.version).toBe(2)
              expect(data.claimed_at).toEqual(expect.any(Number))
              expect(await getTask(client, data.id)).toEqual(data)
              claimedIds.push(data.id)
            }
            expect(claimedIds).toEqual(order)
            const { response } = await client.GET('/tasks/next/{role}', { params: { path: { role } } })
            expect(response.status).toBe(204)
          })

          it('without agent_id claims with no assigned agent', async () => {
            const role = uniqueRole('anon')
            const task = await create(client, { title: 'anyone', role })
            const { data } = await client.GET('/tasks/next/{role}', { params: { path: { role } } })
            expect(data?.id).toBe(task.id)
            expect(data?.assigned_agent).toBeNull()
            expect(data?.status).toBe('claimed')
          })
        })

        describe('each transition route', () => {
          it('claim: open -> claimed, records the agent and the claim time', async () => {
            const task = await create(client, { title: 'claim me' })
            const r = await call(client, 'claim', task.id)
            expect(r.status).toBe(200)
            expect(r.data).toMatchObject({ status: 'claimed', assigned_agent: 'agent-7', version: 2, completed_at: null })
            expect(r.data?.claimed_at).toBeGreaterThanOrEqual(task.created_at)
            expect(r.data?.updated_at).toBe(r.data?.claimed_at)
          })

          it('claim without a body claims with no agent', async () => {
            const task = await create(client, { title: 'claim me bare' })
            const { data, response } = await client.POST('/tasks/{task_id}/claim', { params: { path: { task_id: task.id } } })
            expect(response.status).toBe(200)
            expect(data).toMatchObject({ status: 'claimed', assigned_agent: null, version: 2 })
          })

          it('progress: claimed -> in_progress on the first report, then appends while in_progress', async () => {
            const task = await taskIn(t, client, 'claimed', 'backend')
            const first = await client.POST('/tasks/{task_id}/progress', { params: { path: { task_id: task.id } }, body: { message: 'started' } })
            expect(first.response.status).toBe(200)
            expect(first.data?.status).toBe('in_progress')
            expect(first.data?.version).toBe(task.version + 1)
            expect(first.data?.progress_log).toEqual([{ timestamp: expect.any(Number), message: 'started', percent: 0 }])
            const second = await client.POST('/tasks/{task_id}/progress', {
              params: { path: { task_id: task.id } },
              body: { message: 'tests pass', percent: 100 },
            })
            expect(second.data?.status).toBe('in_progress')
            expect(second.data?.version).toBe(task.version + 2)
            expect(second.data?.progress_log.map((p) => [p.message, p.percent])).toEqual([
              ['started', 0],
              ['tests pass', 100],
            ])
            expect(second.data?.progress_log[1]?.timestamp).toBeGreaterThanOrEqual(second.data?.progress_log[0]?.timestamp ?? Infinity)
          })

          it('complete on an open task claims it automatically and finishes it', async () => {
            const task = await create(client, { title: 'complete me' })
            const r = await call(client, 'complete', task.id)
            expect(r.status).toBe(200)
            expect(r.data).toMatchObject({ status: 'done', result_summary: 'all green', version: 2 })
            expect(r.data?.claimed_at).toEqual(expect.any(Number))
            expect(r.data?.completed_at).toEqual(expect.any(Number))
            expect(await getTask(client, task.id)).toEqual(r.data)
          })

          it('fail, cancel and block record their reason; close records the close time', async () => {
            const failed = await call(client, 'fail', (await create(client, { title: 'f' })).id)
            expect(failed.data).toMatchObject({ status: 'failed', terminal_reason: 'upstream down' })
            expect(failed.data?.completed_at).toEqual(expect.any(Number))
            const cancelled = await call(client, 'cancel', (await create(client, { title: 'c' })).id)
            expect(cancelled.data).toMatchObject({ status: 'cancelled', terminal_reason: 'no longer needed' })
            const bare = await create(client, { title: 'c2' })
            const { data: cancelledBare } = await client.POST('/tasks/{task_id}/cancel', { params: { path: { task_id: bare.id } } })
            expect(cancelledBare).toMatchObject({ status: 'cancelled', terminal_reason: 'cancelled' })
            const blocked = await call(client, 'block', (await taskIn(t, client, 'claimed', 'backend')).id)
            expect(blocked.data).toMatchObject({ status: 'blocked', terminal_reason: 'waiting for keys' })
            const done = await taskIn(t, client, 'done', 'backend')
            const closed = await call(client, 'close', done.id)
            expect(closed.data).toMatchObject({ status: 'closed', result_summary: 'all green', version: done.version + 1 })
            expect(closed.data?.closed_at).toEqual(expect.any(Number))
            const { data: closedBare } = await client.POST('/tasks/{task_id}/close', {
              params: { path: { task_id: (await taskIn(t, client, 'done', 'x')).id } },
            })
            expect(closedBare?.status).toBe('closed')
          })

          it('every route answers 404 with Bernstein’s text for an unknown id', async () => {
            for (const route of ROUTES) {
              const r = await call(client, route, '0123456789ab')
              expect(r.status, route).toBe(404)
              expect(r.error, route).toEqual({ detail: "Task '0123456789ab' not found" })
            }
          })
        })

        describe('the whole transition table', () => {
          const cases = TASK_STATUSES.flatMap((from) => ROUTES.map((route) => ({ from, route, legal: isLegal(from, route) })))

          it.each(cases)('$from --$route--> legal=$legal', async ({ from, route, legal }) => {
            const task = await taskIn(t, client, from, 'table')
            const r = await call(client, route, task.id)
            const after = await getTask(client, task.id)
            if (legal) {
              expect(r.status).toBe(200)
              expect(r.data?.status).toBe(TARGET_OF[route])
              expect(r.data?.version).toBe(task.version + 1)
              expect(r.data?.updated_at).toBeGreaterThanOrEqual(task.updated_at)
              expect(after).toEqual(r.data)
            } else {
              expect(r.status).toBe(409)
              expect(r.error).toEqual({ detail: `Illegal task transition: '${from}' -> '${refusedTarget(route)}' (entity ${task.id})` })
              expect(after).toEqual(task)
            }
          })

          it('covers every status, including the ones only the store can produce', () => {
            expect(new Set(cases.map((c) => c.from))).toEqual(new Set(TASK_STATUSES))
            expect([...STORE_ONLY].sort()).toEqual(['orphaned', 'pending_approval', 'planned', 'waiting_for_subtasks'])
            expect(cases.filter((c) => c.legal)).toHaveLength(26)
          })
        })

        describe('expected_version (compare-and-set)', () => {
          const legalFrom: Readonly<Record<TaskRoute, TaskStatus>> = {
            claim: 'open',
            progress: 'claimed',
            complete: 'in_progress',
            fail: 'open',
            cancel: 'open',
            block: 'claimed',
            close: 'done',
          }

          it.each(ROUTES)('%s: a matching version succeeds and bumps it; a stale one is 409 and changes nothing', async (route) => {
            const task = await taskIn(t, client, legalFrom[route], 'cas')
            for (const stale of [task.version - 1, task.version + 1, 99].filter((v) => v >= 1)) {
              const r = await call(client, route, task.id, stale)
              expect(r.status).toBe(409)
              expect(r.error).toEqual({ detail: `Version conflict on task '${task.id}': expected ${stale}, current ${task.version}` })
              expect(await getTask(client, task.id)).toEqual(task)
            }
            const ok = await call(client, route, task.id, task.version)
            expect(ok.status).toBe(200)
            expect(ok.data?.version).toBe(task.version + 1)
            expect(ok.data?.status).toBe(TARGET_OF[route])
            // The old version is stale now.
            const again = await call(client, route, task.id, task.version)
            expect(again.status).toBe(409)
            expect(await getTask(client, task.id)).toEqual(ok.data)
          })
        })
      })
    }

    it('claim-next under contention: 20 parallel callers, 10 tasks, each task to exactly one caller', async () => {
      const role = uniqueRole('race')
      const created = await Promise.all(Array.from({ length: 10 }, (_, i) => create(t.client, { title: `race ${i}`, role })))
      const results = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          // Alternate prefixes: both reach the same handler and the same rows.
          const c = t.clientWith({ token: OPERATOR_TOKEN, prefix: i % 2 === 0 ? '' : '/api/v1' })
          const { data, response } = await c.GET('/tasks/next/{role}', { params: { path: { role }, query: { agent_id: `racer-${i}` } } })
          return { agent: `racer-${i}`, status: response.status, task: data }
        }),
      )
      const winners = results.filter((r) => r.status === 200)
      const losers = results.filter((r) => r.status !== 200)
      expect(winners).toHaveLength(10)
      expect(losers.map((r) => r.status)).toEqual(Array(10).fill(204))
      const won = winners.map((r) => r.task?.id)
      expect(new Set(won).size).toBe(10)
      expect([...won].sort()).toEqual(created.map((x) => x.id).sort())
      for (const w of winners) {
        const stored = await getTask(t.client, w.task?.id ?? '')
        expect(stored).toMatchObject({ status: 'claimed', assigned_agent: w.agent, version: 2 })
      }
      const { response } = await t.client.GET('/tasks/next/{role}', { params: { path: { role } } })
      expect(response.status).toBe(204)
    })

    it('the /api/v1 prefix serves the same tasks as the root', async () => {
      const task = await create(t.client, { title: 'seen from both' })
      const viaV1 = await rawRequest(t.url, { method: 'GET', path: `/api/v1/tasks/${task.id}` })
      expect(viaV1.status).toBe(200)
      expect(viaV1.json).toEqual(task)
      const claimed = await rawRequest(t.url, { method: 'POST', path: `/api/v1/tasks/${task.id}/claim`, body: '{"agent_id":"v1"}' })
      expect(claimed.status).toBe(200)
      expect(await getTask(t.client, task.id)).toMatchObject({ status: 'claimed', assigned_agent: 'v1', version: 2 })
    })
  })
}

describe('conditional requests on operations without a documented ETag', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t?.close()
  })

  it('get no automatic ETag, so If-None-Match never turns into an undocumented 304', async () => {
    const created = await rawRequest(t.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: 'conditional read' }) })
    expect(created.status).toBe(201)
    const id = (created.json as { id: string }).id
    const first = await rawRequest(t.url, { method: 'GET', path: `/tasks/${id}` })
    expect(first.status).toBe(200)
    expect(first.headers.get('etag')).toBeNull()
    // A client replaying any validator it might hold (here, the weak ETag Express would have computed) gets the body.
    for (const tag of ['*', `W/"${first.text.length.toString(16)}-x"`]) {
      const again = await rawRequest(t.url, { method: 'GET', path: `/tasks/${id}`, headers: { 'if-none-match': tag } })
      expect(again.status, tag).toBe(200)
      expect(again.text).toBe(first.text)
    }
  })
})
