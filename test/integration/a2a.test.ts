import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { components } from '../../generated/openapi.js'
import { A2A_STATUS_OF } from '../../src/a2a/a2a-status.js'
import { verifyA2AReceipt } from '../../src/receipts/verify-a2a-receipt.js'
import type { ApiClient } from '../../src/client/index.js'
import { TASK_STATUSES, type TaskStatus } from '../../src/tasks/task.js'
import { type TestClock, testClock } from '../helpers/clock.js'
import { testEngines } from '../helpers/engines.js'
import { API_STEPS } from '../helpers/task-steps.js'
import { OPERATOR_TOKEN, type TestApp, publishedJwks, rawRequest, startTestApp } from '../helpers/test-app.js'

type Task = components['schemas']['Task']
type A2ATask = components['schemas']['A2ATaskResponse']
type Prefix = '' | '/api/v1'

const PREFIXES: readonly Prefix[] = ['', '/api/v1']
/** U+1F600: one character, two UTF-16 code units. */
const EMOJI = '\u{1F600}'
const HEX12 = /^[0-9a-f]{12}$/
const LEGACY_CARD = {
  name: 'bernstein-orchestrator',
  description: 'The open-source governance layer for AI agents, one git worktree per task',
  capabilities: ['task_orchestration', 'agent_spawning', 'code_review', 'a2a_message'],
  protocol_version: '0.1',
  provider: 'bernstein',
}

/** The A2A status every Bernstein status shows as (src/a2a/a2a-status.ts: one complete table, closed -> completed). */
const EXPECTED_A2A: Readonly<Record<TaskStatus, string>> = {
  planned: 'submitted',
  open: 'submitted',
  claimed: 'working',
  in_progress: 'working',
  waiting_for_subtasks: 'working',
  orphaned: 'working',
  blocked: 'input-required',
  pending_approval: 'input-required',
  done: 'completed',
  closed: 'completed',
  failed: 'failed',
  cancelled: 'canceled',
}

const STEP_BODIES: Readonly<Record<string, object>> = {
  claim: { agent_id: 'worker-1' },
  progress: { message: 'on it', percent: 10 },
  complete: { result_summary: 'done and dusted' },
  fail: { reason: 'broke' },
  cancel: { reason: 'not needed' },
  block: { reason: 'need input' },
  close: {},
}

/** Lone surrogates would mean a title was cut inside a code point. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

async function send(client: ApiClient, body: components['schemas']['A2ATaskSendRequest']): Promise<A2ATask> {
  const { data, response } = await client.POST('/a2a/tasks/send', { body })
  expect(response.status).toBe(201)
  if (!data) throw new Error('no A2A task in the 201 response')
  return data
}

async function getA2A(client: ApiClient, id: string): Promise<A2ATask> {
  const { data, response } = await client.GET('/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: id } } })
  expect(response.status).toBe(200)
  if (!data) throw new Error(`A2A task ${id} not readable`)
  return data
}

async function getTask(client: ApiClient, id: string): Promise<Task> {
  const { data, response } = await client.GET('/tasks/{task_id}', { params: { path: { task_id: id } } })
  expect(response.status).toBe(200)
  if (!data) throw new Error(`task ${id} not readable`)
  return data
}

let tenantCounter = 0
const uniqueTenant = (label: string): string => `${label}-${process.pid}-${++tenantCounter}`

it('src/a2a/a2a-status.ts maps every Bernstein status as specified (closed -> completed, no fall-through)', () => {
  for (const status of TASK_STATUSES) expect(A2A_STATUS_OF[status], status).toBe(EXPECTED_A2A[status])
})

for (const engine of testEngines()) {
  describe(`A2A seed operations (${engine})`, () => {
    let t: TestApp
    // The server's clock, moved only by the tests: "time passes" is an explicit step, not a sleep.
    let clock: TestClock
    /** The node's published receipt keys, to verify receipts against. */
    let jwks: unknown

    beforeAll(async () => {
      clock = testClock()
      t = await startTestApp({ engine, clock })
      jwks = await publishedJwks(t.url)
    })
    afterAll(async () => {
      await t?.close()
    })

    /** What a tenant holds: its tasks (full bodies), its A2A records, inbound deliveries and messages. */
    async function tenantState(tenant: string): Promise<unknown> {
      const c = t.clientWith({ token: OPERATOR_TOKEN, tenant })
      const { data } = await c.GET('/tasks', { params: { query: { limit: 500 } } })
      const tasks = data?.tasks ?? []
      const a2a = await Promise.all(tasks.map((x) => t.store.repos.a2a.findByBernsteinTask(tenant, x.id)))
      return {
        tasks,
        a2a,
        inbound: await t.store.repos.a2a.countInbound(tenant),
        messages: await t.store.repos.a2a.messages(tenant),
        peers: await t.store.repos.a2a.countPeers(),
      }
    }

    for (const prefix of PREFIXES) {
      describe(`prefix '${prefix || '/'}'`, () => {
        let client: ApiClient
        beforeAll(() => {
          client = t.clientWith({ token: OPERATOR_TOKEN, prefix })
        })

        describe('GET /a2a/agent-card and GET /a2a/agents', () => {
          it('both return the one legacy card, its endpoint under the public base URL', async () => {
            const card = await client.GET('/a2a/agent-card')
            const agents = await client.GET('/a2a/agents')
            expect(card.response.status).toBe(200)
            expect(agents.response.status).toBe(200)
            expect(card.data).toEqual({ ...LEGACY_CARD, endpoint: 'http://bernstein.test/a2a' })
            expect(agents.data).toEqual(card.data)
          })
        })

        describe('POST /a2a/tasks/send', () => {
          it('answers 201 with a submitted task linked to a new open Bernstein task', async () => {
            clock.advance(1)
            const now = clock.now()
            // The raw body too: a receipt is verified against the exact bytes it attests.
            const sent = await client.POST('/a2a/tasks/send', { body: { sender: 'peer-agent', message: 'Add a health check endpoint' }, parseAs: 'text' })
            expect(sent.response.status).toBe(201)
            const text = sent.data ?? ''
            const a2a = JSON.parse(text) as A2ATask
            expect(a2a).toEqual({
              id: expect.stringMatching(HEX12),
              bernstein_task_id: expect.stringMatching(HEX12),
              sender: 'peer-agent',
              message: 'Add a health check endpoint',
              status: 'submitted',
              artifacts: [],
              created_at: now,
              updated_at: now,
              receipt: expect.objectContaining({ task_id: a2a.id, kid: t.keys.receipt.kid }),
            })
            // startTestApp attests by default: the acceptance receipt is present and verifies against the published keys.
            expect(sent.response.headers.get('bernstein-attestation')).toBe('acceptance')
            expect(await verifyA2AReceipt(a2a.receipt, text, { jwks })).toMatchObject({ ok: true, value: { keyPinned: true } })
            expect(a2a.id).not.toBe(a2a.bernstein_task_id)
            const linked = await getTask(client, a2a.bernstein_task_id ?? '')
            expect(linked).toMatchObject({
              id: a2a.bernstein_task_id,
              title: '[A2A] Add a health check endpoint',
              description: 'Add a health check endpoint',
              role: 'backend',
              status: 'open',
              tenant_id: 'default',
              version: 1,
              assigned_agent: null,
            })
            // A linked task is always medium complexity, with Bernstein's medium estimate.
            expect(linked).toMatchObject({ complexity: 'medium', estimated_minutes: 45 })
            expect(await getA2A(client, a2a.id)).toEqual(a2a)
          })

          it('uses the given role and the tenant of the request', async () => {
            const tenant = uniqueTenant('a2a-tenant')
            const c = t.clientWith({ token: OPERATOR_TOKEN, tenant, prefix })
            const a2a = await send(c, { sender: 'p', message: 'write docs', role: 'docs' })
            const linked = await getTask(c, a2a.bernstein_task_id ?? '')
            expect(linked).toMatchObject({ role: 'docs', tenant_id: tenant })
            // Another tenant sees neither the A2A task nor its linked task.
            const other = await client.GET('/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: a2a.id } } })
            expect(other.response.status).toBe(404)
            expect(other.error).toEqual({ detail: `A2A task '${a2a.id}' not found` })
            const otherTask = await client.GET('/tasks/{task_id}', { params: { path: { task_id: a2a.bernstein_task_id ?? '' } } })
            expect(otherTask.response.status).toBe(404)
          })

          it.each([
            ['ASCII longer than 80', 'x'.repeat(79) + 'yz' + 'tail', 'x'.repeat(79) + 'y'],
            ['exactly 80', 'a'.repeat(80), 'a'.repeat(80)],
            ['shorter than 80', 'short', 'short'],
            ['astral characters count as one each', '😀'.repeat(100), '😀'.repeat(80)],
            ['mixed planes', '𝔸b'.repeat(50), '𝔸b'.repeat(40)],
            ['an astral character at position 80 stays whole', 'a'.repeat(79) + '🚀' + 'zzz', 'a'.repeat(79) + '🚀'],
            ['combining marks are separate code points', 'e\u0301'.repeat(45), 'e\u0301'.repeat(40)],
          ])('titles the linked task "[A2A] " + the first 80 code points (%s)', async (_label, message, expectedCut) => {
            const a2a = await send(client, { sender: 's', message })
            expect(a2a.message).toBe(message)
            const linked = await getTask(client, a2a.bernstein_task_id ?? '')
            expect(linked.title).toBe('[A2A] ' + expectedCut)
            expect(Array.from(linked.title)).toHaveLength(6 + Math.min(80, Array.from(message).length))
            expect(LONE_SURROGATE.test(linked.title)).toBe(false)
            expect(linked.description).toBe(message)
          })
        })

        describe('GET /a2a/tasks/{a2a_task_id}', () => {
          const reachable = Object.keys(API_STEPS) as TaskStatus[]

          it.each(reachable)('shows a linked task that is %s through the task API with its mapped A2A status', async (status) => {
            const a2a = await send(client, { sender: 'peer', message: `to be ${status}` })
            const taskId = a2a.bernstein_task_id ?? ''
            for (const step of API_STEPS[status] ?? []) {
              const r = await rawRequest(t.url, { method: 'POST', path: `${prefix}/tasks/${taskId}/${step}`, body: JSON.stringify(STEP_BODIES[step]) })
              expect(r.status, step).toBe(200)
            }
            const linked = await getTask(client, taskId)
            expect(linked.status).toBe(status)
            const seen = await getA2A(client, a2a.id)
            expect(seen.status).toBe(EXPECTED_A2A[status])
            expect(seen).toMatchObject({ id: a2a.id, bernstein_task_id: taskId, sender: 'peer', message: `to be ${status}`, created_at: a2a.created_at })
            expect(seen.updated_at).toBeGreaterThanOrEqual(linked.updated_at)
            if (status === 'done' || status === 'closed') {
              // The result summary is carried as a `result` artifact once the task finishes.
              expect(seen.artifacts).toEqual([{ name: 'result', content_type: 'text/plain', data: 'done and dusted', created_at: expect.any(Number) }])
            } else if (status === 'failed' || status === 'cancelled') {
              // The reason a task failed or was cancelled is carried as an `error` artifact.
              const reason = (STEP_BODIES[status === 'failed' ? 'fail' : 'cancel'] as { reason: string }).reason
              expect(seen.artifacts).toEqual([{ name: 'error', content_type: 'text/plain', data: reason, created_at: linked.updated_at }])
            } else {
              expect(seen.artifacts).toEqual([])
            }
          })

          it.each(TASK_STATUSES.filter((s) => API_STEPS[s] === undefined))(
            'shows a linked task that is %s (set in the store) with its mapped A2A status',
            async (status) => {
              const a2a = await send(client, { sender: 'peer', message: `stored ${status}` })
              const stored = await t.store.repos.tasks.get('default', a2a.bernstein_task_id ?? '')
              if (!stored) throw new Error('linked task not stored')
              expect(await t.store.repos.tasks.replace({ ...stored, status, version: stored.version + 1 }, stored.version)).toBe(true)
              expect((await getA2A(client, a2a.id)).status).toBe(EXPECTED_A2A[status])
            },
          )

          it('never writes: two GETs are byte-identical, even after time passes and after the linked task changed', async () => {
            const a2a = await send(client, { sender: 'peer', message: 'read me twice' })
            const path = `${prefix}/a2a/tasks/${a2a.id}`
            const first = await rawRequest(t.url, { method: 'GET', path })
            clock.advance(60)
            const second = await rawRequest(t.url, { method: 'GET', path })
            expect(first.status).toBe(200)
            expect(second.text).toBe(first.text)
            const record = await t.store.repos.a2a.get('default', a2a.id)
            expect(record?.updatedAt).toBe(a2a.updated_at)

            expect((await rawRequest(t.url, { method: 'POST', path: `/tasks/${a2a.bernstein_task_id}/claim`, body: '{}' })).status).toBe(200)
            const third = await rawRequest(t.url, { method: 'GET', path })
            clock.advance(60)
            const fourth = await rawRequest(t.url, { method: 'GET', path })
            expect((third.json as A2ATask).status).toBe('working')
            expect(fourth.text).toBe(third.text)
            expect(await t.store.repos.a2a.get('default', a2a.id)).toEqual(record)
            const linked = await getTask(client, a2a.bernstein_task_id ?? '')
            expect(linked.version).toBe(2)
          })

          it('404 with Bernstein’s text for an unknown id, including a Bernstein task id', async () => {
            const a2a = await send(client, { sender: 'peer', message: 'm' })
            for (const id of ['ffffffffffff', a2a.bernstein_task_id ?? '', 'not-an-id']) {
              const { response, error } = await client.GET('/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: id } } })
              expect(response.status).toBe(404)
              expect(error).toEqual({ detail: `A2A task '${id}' not found` })
            }
          })
        })

        describe('POST /a2a/tasks/{a2a_task_id}/artifacts', () => {
          it('answers 201 with the artifact (defaults applied) and appends in order without touching the task', async () => {
            const a2a = await send(client, { sender: 'peer', message: 'collect artifacts' })
            const linkedBefore = await getTask(client, a2a.bernstein_task_id ?? '')
            const path = { a2a_task_id: a2a.id }
            const first = await client.POST('/a2a/tasks/{a2a_task_id}/artifacts', { params: { path }, body: { name: 'empty.txt' } })
            expect(first.response.status).toBe(201)
            expect(first.data).toEqual({ name: 'empty.txt', content_type: 'text/plain', data: '', created_at: expect.any(Number) })
            const second = await client.POST('/a2a/tasks/{a2a_task_id}/artifacts', {
              params: { path },
              body: { name: 'report.json', data: '{"ok":true}', content_type: 'application/json' },
            })
            expect(second.response.status).toBe(201)
            expect(second.data).toEqual({ name: 'report.json', content_type: 'application/json', data: '{"ok":true}', created_at: expect.any(Number) })
            const big = 'λ'.repeat(400_000)
            const third = await client.POST('/a2a/tasks/{a2a_task_id}/artifacts', { params: { path }, body: { name: 'big.txt', data: big } })
            expect(third.response.status).toBe(201)
            const seen = await getA2A(client, a2a.id)
            expect(seen.artifacts).toEqual([first.data, second.data, third.data])
            expect(seen.artifacts[2]?.data).toBe(big)
            expect(seen.status).toBe('submitted')
            expect(await getTask(client, a2a.bernstein_task_id ?? '')).toEqual(linkedBefore)
          })

          it('404 with Bernstein’s text for an unknown id', async () => {
            const { response, error } = await client.POST('/a2a/tasks/{a2a_task_id}/artifacts', {
              params: { path: { a2a_task_id: 'ffffffffffff' } },
              body: { name: 'x' },
            })
            expect(response.status).toBe(404)
            expect(error).toEqual({ detail: "A2A task 'ffffffffffff' not found" })
          })
        })

        describe('POST /a2a/message', () => {
          it('records an inbound message and appends `[A2A:<sender>-><recipient>] <content>` at 0% to the task', async () => {
            const a2a = await send(client, { sender: 'peer', message: 'talk to me' })
            const taskId = a2a.bernstein_task_id ?? ''
            const before = await getTask(client, taskId)
            const { data, response } = await client.POST('/a2a/message', {
              body: { sender: 'peer-a', recipient: 'bernstein', content: 'use the staging DB 🚀', task_id: taskId },
            })
            expect(response.status).toBe(201)
            expect(data).toEqual({
              id: expect.stringMatching(HEX12),
              sender: 'peer-a',
              recipient: 'bernstein',
              content: 'use the staging DB 🚀',
              task_id: taskId,
              direction: 'inbound',
              delivered: true,
              external_endpoint: null,
              created_at: expect.any(Number),
            })
            const after = await getTask(client, taskId)
            expect(after.status).toBe('open')
            expect(after.version).toBe(before.version + 1)
            expect(after.progress_log).toEqual([{ timestamp: expect.any(Number), message: '[A2A:peer-a->bernstein] use the staging DB 🚀', percent: 0 }])
            const stored = await t.store.repos.a2a.messages('default', taskId)
            expect(stored.map((m) => m.id)).toEqual([data?.id])

            await client.POST('/a2a/message', { body: { sender: 'b', recipient: 'c', content: 'second', task_id: taskId } })
            expect((await getTask(client, taskId)).progress_log.map((p) => p.message)).toEqual([
              '[A2A:peer-a->bernstein] use the staging DB 🚀',
              '[A2A:b->c] second',
            ])
          })

          it('20 concurrent messages to one task all land, each as its own progress entry', async () => {
            const { data: task } = await client.POST('/tasks', { body: { title: 'busy' } })
            const taskId = task?.id ?? ''
            const results = await Promise.all(
              Array.from({ length: 20 }, (_, i) =>
                client.POST('/a2a/message', { body: { sender: `peer-${i}`, recipient: 'bernstein', content: `note ${i}`, task_id: taskId } }),
              ),
            )
            expect(results.map((r) => r.response.status)).toEqual(Array(20).fill(201))
            const after = await getTask(client, taskId)
            expect(after.version).toBe(21)
            expect(after.status).toBe('open')
            expect(after.progress_log.map((p) => p.message).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `[A2A:peer-${i}->bernstein] note ${i}`).sort())
            expect((await t.store.repos.a2a.messages('default', taskId)).map((m) => m.id).sort()).toEqual(results.map((r) => r.data?.id).sort())
          })

          it('works on a plain Bernstein task too (task_id is a Bernstein task id)', async () => {
            const { data: task } = await client.POST('/tasks', { body: { title: 'plain' } })
            const r = await client.POST('/a2a/message', { body: { sender: 's', recipient: 'r', content: 'c', task_id: task?.id ?? '' } })
            expect(r.response.status).toBe(201)
            expect((await getTask(client, task?.id ?? '')).progress_log.map((p) => p.message)).toEqual(['[A2A:s->r] c'])
          })

          it('404 `Task <id> not found` for an unknown id or an A2A task id, and records nothing', async () => {
            const a2a = await send(client, { sender: 'peer', message: 'm' })
            const before = await tenantState('default')
            for (const id of ['ffffffffffff', a2a.id]) {
              const { response, error } = await client.POST('/a2a/message', { body: { sender: 's', recipient: 'r', content: 'c', task_id: id } })
              expect(response.status).toBe(404)
              expect(error).toEqual({ detail: `Task '${id}' not found` })
            }
            expect(await tenantState('default')).toEqual(before)
          })
        })

        describe('POST /a2a/v0/tasks', () => {
          const v0 = (body: unknown, tenant?: string): ReturnType<typeof rawRequest> =>
            rawRequest(t.url, {
              method: 'POST',
              path: `${prefix}/a2a/v0/tasks`,
              body: typeof body === 'string' ? body : JSON.stringify(body),
              ...(tenant !== undefined && { headers: { 'x-tenant-id': tenant } }),
            })
          const card = (name: string): Record<string, unknown> => ({
            name,
            description: 'a peer orchestrator',
            capabilities: ['task_orchestration'],
            endpoint: 'http://peer.example:8052/',
            protocol_version: '0.1',
          })

          it('accepts with 202, creating a linked open task and an A2A task readable via GET', async () => {
            const tenant = uniqueTenant('v0')
            const c = t.clientWith({ token: OPERATOR_TOKEN, tenant, prefix })
            const r = await v0({ sender: card('peer-one'), task: { id: 'remote-1', message: 'Review PR 42', role: 'reviewer' } }, tenant)
            expect(r.status).toBe(202)
            const body = r.json as Record<string, string>
            expect(body).toEqual({
              id: expect.stringMatching(HEX12),
              remote_task_id: 'remote-1',
              status: 'accepted',
              peer_name: 'peer-one',
              task_id: expect.stringMatching(HEX12),
              a2a_task_id: expect.stringMatching(HEX12),
            })
            const linked = await getTask(c, body['task_id'] ?? '')
            expect(linked).toMatchObject({ title: '[A2A] Review PR 42', description: 'Review PR 42', role: 'reviewer', status: 'open', tenant_id: tenant })
            const a2a = await getA2A(c, body['a2a_task_id'] ?? '')
            expect(a2a).toMatchObject({
              id: body['a2a_task_id'],
              bernstein_task_id: body['task_id'],
              sender: 'peer-one',
              message: 'Review PR 42',
              status: 'submitted',
            })
            expect(await t.store.repos.a2a.countInbound(tenant)).toBe(1)
          })

          it('defaults the role to backend', async () => {
            const tenant = uniqueTenant('v0-role')
            const r = await v0({ sender: card('peer-role'), task: { id: 'r1', message: 'do it' } }, tenant)
            expect(r.status).toBe(202)
            const linked = await getTask(t.clientWith({ token: OPERATOR_TOKEN, tenant }), (r.json as Record<string, string>)['task_id'] ?? '')
            expect(linked.role).toBe('backend')
          })

          it('is idempotent on (peer, remote id): a duplicate returns the same ids and creates nothing', async () => {
            const tenant = uniqueTenant('v0-dup')
            const first = await v0({ sender: card('peer-dup'), task: { id: 'same', message: 'once' } }, tenant)
            expect(first.status).toBe(202)
            const state = await tenantState(tenant)
            const again = await v0({ sender: card('peer-dup'), task: { id: 'same', message: 'once' } }, tenant)
            // The sender's card may change between deliveries (it describes the peer, not the task).
            const recarded = await v0(
              { sender: { ...card('peer-dup'), description: 'changed' }, task: { id: 'same', message: 'once', role: 'backend' } },
              tenant,
            )
            for (const repeat of [again, recarded]) {
              expect(repeat.status).toBe(202)
              expect(repeat.headers.get('bernstein-delivery')).toBe('duplicate')
              expect(repeat.json).toEqual(first.json)
            }
            // The task may not: the id is the delegator's idempotency key, and another task under it is refused.
            const changed = await v0({ sender: card('peer-dup'), task: { id: 'same', message: 'a different message' } }, tenant)
            expect(changed.status).toBe(409)
            expect(changed.json).toEqual({
              detail:
                "'task.id' was already accepted with a different task: a redelivery must repeat the message and role unchanged, new work needs a new 'task.id'",
            })
            expect(await tenantState(tenant)).toEqual(state)

            // A different remote id, or the same id from another peer, is a new delegation.
            const otherId = await v0({ sender: card('peer-dup'), task: { id: 'other', message: 'once' } }, tenant)
            const otherPeer = await v0({ sender: card('peer-dup-2'), task: { id: 'same', message: 'once' } }, tenant)
            const ids = [first, otherId, otherPeer].map((r) => (r.json as Record<string, string>)['id'])
            expect(new Set(ids).size).toBe(3)
            expect(await t.store.repos.a2a.countInbound(tenant)).toBe(3)
          })

          it('10 concurrent duplicates create one task and all get the same answer', async () => {
            const tenant = uniqueTenant('v0-race')
            const body = { sender: card('peer-race'), task: { id: 'race-1', message: 'only once please' } }
            const results = await Promise.all(Array.from({ length: 10 }, () => v0(body, tenant)))
            expect(results.map((r) => r.status)).toEqual(Array(10).fill(202))
            const answers = results.map((r) => r.json)
            for (const a of answers) expect(a).toEqual(answers[0])
            expect(results.filter((r) => r.headers.get('bernstein-delivery') === 'new')).toHaveLength(1)
            const { data } = await t.clientWith({ token: OPERATOR_TOKEN, tenant }).GET('/tasks', { params: { query: { limit: 500 } } })
            expect(data?.tasks.map((x) => x.id)).toEqual([(answers[0] as Record<string, string>)['task_id']])
            expect(await t.store.repos.a2a.countInbound(tenant)).toBe(1)
            expect(await t.store.repos.a2a.findByBernsteinTask(tenant, data?.tasks[0]?.id ?? '')).toHaveLength(1)
          })

          it('concurrent deliveries of one id with different tasks: one is accepted, the others get 409, one task exists', async () => {
            const tenant = uniqueTenant('v0-race-diff')
            const results = await Promise.all(
              Array.from({ length: 6 }, (_, i) => v0({ sender: card('peer-race'), task: { id: 'race-2', message: `version ${i}` } }, tenant)),
            )
            const won = results.filter((r) => r.status === 202)
            expect(won).toHaveLength(1)
            expect(won[0]?.headers.get('bernstein-delivery')).toBe('new')
            expect(results.filter((r) => r.status === 409).map((r) => r.json)).toEqual(
              Array(5).fill({
                detail:
                  "'task.id' was already accepted with a different task: a redelivery must repeat the message and role unchanged, new work needs a new 'task.id'",
              }),
            )
            const { data } = await t.clientWith({ token: OPERATOR_TOKEN, tenant }).GET('/tasks', { params: { query: { limit: 500 } } })
            expect(data?.tasks.map((x) => x.id)).toEqual([(won[0]?.json as Record<string, string> | undefined)?.['task_id']])
            // The accepted version is the one stored, and its own redelivery is the duplicate.
            const stored = await t.store.repos.a2a.getInbound({ tenantId: tenant, peerName: 'peer-race', senderKey: '', remoteTaskId: 'race-2' })
            expect(stored?.taskId).toBe((won[0]?.json as Record<string, string> | undefined)?.['task_id'])
            const again = await v0({ sender: card('peer-race'), task: { id: 'race-2', message: stored?.message } }, tenant)
            expect({ status: again.status, delivery: again.headers.get('bernstein-delivery'), json: again.json }).toEqual({
              status: 202,
              delivery: 'duplicate',
              json: won[0]?.json,
            })
            expect(await t.store.repos.a2a.countInbound(tenant)).toBe(1)
          })

          it("counts characters as code points, as Python's len and the contract's maxLength do: astral characters at every limit are accepted", async () => {
            const tenant = uniqueTenant('v0-len')
            const c = t.clientWith({ token: OPERATOR_TOKEN, tenant, prefix })
            // The reported repros: 60000 emoji (120000 UTF-16 code units) as the message, 600 as the sender's name.
            const repro = await v0({ sender: card(EMOJI.repeat(600)), task: { id: 'len-1', message: EMOJI.repeat(60_000) } }, tenant)
            expect(repro.status).toBe(202)
            // The same message through the contract-validated send is accepted too: both count it as 60000.
            const sent = await c.POST('/a2a/tasks/send', { body: { sender: 'peer', message: EMOJI.repeat(60_000) } })
            expect(sent.response.status).toBe(201)

            const atLimit = { name: EMOJI.repeat(1000), id: EMOJI.repeat(1000), message: `${EMOJI.repeat(99_999)}a`, role: EMOJI.repeat(1000) }
            const r = await v0({ sender: card(atLimit.name), task: { id: atLimit.id, message: atLimit.message, role: atLimit.role } }, tenant)
            expect(r.status).toBe(202)
            const body = r.json as Record<string, string>
            expect(body).toMatchObject({ remote_task_id: atLimit.id, peer_name: atLimit.name })
            expect(await getTask(c, body['task_id'] ?? '')).toMatchObject({ description: atLimit.message, role: atLimit.role })
            expect(await getA2A(c, body['a2a_task_id'] ?? '')).toMatchObject({ sender: atLimit.name, message: atLimit.message })

            // One character more is refused by both routes alike (409 here, the contract's 422 on send), storing nothing.
            const before = await tenantState(tenant)
            const over = await v0({ sender: card('peer-len'), task: { id: 'len-2', message: EMOJI.repeat(100_001) } }, tenant)
            expect({ status: over.status, json: over.json }).toEqual({ status: 409, json: { detail: "'task.message' exceeds 100000 characters" } })
            const overSent = await c.POST('/a2a/tasks/send', { body: { sender: 'peer', message: EMOJI.repeat(100_001) } })
            expect(overSent.response.status).toBe(422)
            expect(await tenantState(tenant)).toEqual(before)
          })

          const valid = { sender: { name: 'peer-x', description: 'd' }, task: { id: 't1', message: 'm' } }
          const errors: readonly (readonly [string, unknown, number, string])[] = [
            ['invalid JSON (truncated)', '{"sender": ', 400, 'Invalid JSON body: Expecting value: line 1 column 12 (char 11)'],
            ['invalid JSON (bad token)', '{"sender": x}', 400, 'Invalid JSON body: Expecting value: line 1 column 12 (char 11)'],
            ['invalid JSON (empty body)', '', 400, 'Invalid JSON body: Expecting value: line 1 column 1 (char 0)'],
            [
              'invalid JSON (unquoted key)',
              '{sender: 1}',
              400,
              'Invalid JSON body: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
            ],
            ['body is an array', [valid], 400, 'Body must be a JSON object'],
            ['body is a string', '"hello"', 400, 'Body must be a JSON object'],
            ['body is a number', '42', 400, 'Body must be a JSON object'],
            ['body is null', 'null', 400, 'Body must be a JSON object'],
            ['sender missing', { task: valid.task }, 400, "Missing or invalid 'sender' Agent Card"],
            ['sender not an object', { sender: 'peer-x', task: valid.task }, 400, "Missing or invalid 'sender' Agent Card"],
            ['sender is a list', { sender: [valid.sender], task: valid.task }, 400, "Missing or invalid 'sender' Agent Card"],
            ['sender empty', { sender: {}, task: valid.task }, 400, "Missing or invalid 'sender' Agent Card"],
            ['sender missing and task missing: sender first', {}, 400, "Missing or invalid 'sender' Agent Card"],
            ['task missing', { sender: valid.sender }, 400, "Missing or invalid 'task' body"],
            ['task not an object', { sender: valid.sender, task: 't1' }, 400, "Missing or invalid 'task' body"],
            ['task empty', { sender: valid.sender, task: {} }, 400, "Missing or invalid 'task' body"],
            ['task empty and card invalid: task first', { sender: { name: '' }, task: {} }, 400, "Missing or invalid 'task' body"],
            ['card without name', { sender: { description: 'd' }, task: valid.task }, 400, "Invalid sender card: AgentCard requires a non-empty 'name' string"],
            [
              'card with empty name',
              { sender: { name: '', description: 'd' }, task: valid.task },
              400,
              "Invalid sender card: AgentCard requires a non-empty 'name' string",
            ],
            [
              'card with numeric name',
              { sender: { name: 7, description: 'd' }, task: valid.task },
              400,
              "Invalid sender card: AgentCard requires a non-empty 'name' string",
            ],
            [
              'card without description',
              { sender: { name: 'peer-x' }, task: valid.task },
              400,
              "Invalid sender card: AgentCard requires a 'description' string",
            ],
            [
              'card with numeric description',
              { sender: { name: 'peer-x', description: 1 }, task: valid.task },
              400,
              "Invalid sender card: AgentCard requires a 'description' string",
            ],
            [
              'capabilities not a list',
              { sender: { ...valid.sender, capabilities: 'all' }, task: valid.task },
              400,
              "Invalid sender card: AgentCard 'capabilities' must be a list",
            ],
            [
              'capability not a string',
              { sender: { ...valid.sender, capabilities: ['a', 'b', 3] }, task: valid.task },
              400,
              'Invalid sender card: AgentCard capability at index 2 must be a string',
            ],
            [
              'card invalid and task.id missing: card first',
              { sender: { name: '' }, task: { message: 'm' } },
              400,
              "Invalid sender card: AgentCard requires a non-empty 'name' string",
            ],
            ['task.id missing', { sender: valid.sender, task: { message: 'm' } }, 409, "Missing 'task.id'"],
            ['task.id empty', { sender: valid.sender, task: { id: '', message: 'm' } }, 409, "Missing 'task.id'"],
            ['task.id empty and message missing: id first', { sender: valid.sender, task: { id: '', role: 'qa' } }, 409, "Missing 'task.id'"],
            ['task.message missing', { sender: valid.sender, task: { id: 't1' } }, 409, "Missing or empty 'task.message'"],
            ['task.message empty', { sender: valid.sender, task: { id: 't1', message: '' } }, 409, "Missing or empty 'task.message'"],
            ['task.message blank', { sender: valid.sender, task: { id: 't1', message: ' \n\t ' } }, 409, "Missing or empty 'task.message'"],
            ['task.message not a string', { sender: valid.sender, task: { id: 't1', message: ['m'] } }, 409, "Missing or empty 'task.message'"],
            [
              'task.message with a NUL character',
              { sender: valid.sender, task: { id: 't1', message: 'a\u0000b' } },
              409,
              "'task.message' must not contain the NUL character",
            ],
            [
              'task.id with a NUL character',
              { sender: valid.sender, task: { id: 't\u0000', message: 'm' } },
              409,
              "'task.id' must not contain the NUL character",
            ],
            [
              'sender name with a NUL character',
              { sender: { name: 'p\u0000', description: 'd' }, task: valid.task },
              400,
              'Invalid sender card: AgentCard text must not contain the NUL character',
            ],
            // Limits count characters (code points), as Python's len does: one past the limit is refused, in any plane.
            [
              'sender name of 1001 characters',
              { sender: { name: 'n'.repeat(1001), description: 'd' }, task: valid.task },
              400,
              "Invalid sender card: AgentCard 'name' exceeds 1000 characters",
            ],
            [
              'sender name of 1001 astral characters',
              { sender: { name: EMOJI.repeat(1001), description: 'd' }, task: valid.task },
              400,
              "Invalid sender card: AgentCard 'name' exceeds 1000 characters",
            ],
            ['task.id of 1001 characters', { sender: valid.sender, task: { id: 'i'.repeat(1001), message: 'm' } }, 409, "'task.id' exceeds 1000 characters"],
            [
              'task.id of 1001 astral characters',
              { sender: valid.sender, task: { id: EMOJI.repeat(1001), message: 'm' } },
              409,
              "'task.id' exceeds 1000 characters",
            ],
            [
              'task.message of 100001 characters',
              { sender: valid.sender, task: { id: 't1', message: 'm'.repeat(100_001) } },
              409,
              "'task.message' exceeds 100000 characters",
            ],
            [
              'task.message of 100001 astral characters',
              { sender: valid.sender, task: { id: 't1', message: EMOJI.repeat(100_001) } },
              409,
              "'task.message' exceeds 100000 characters",
            ],
            ['task.role of 1001 characters', { sender: valid.sender, task: { id: 't1', message: 'm', role: 'r'.repeat(1001) } }, 409, "Invalid 'task.role'"],
            [
              'task.role of 1001 astral characters',
              { sender: valid.sender, task: { id: 't1', message: 'm', role: EMOJI.repeat(1001) } },
              409,
              "Invalid 'task.role'",
            ],
            // A lone surrogate is not Unicode: refused as such before any length is counted, short or long.
            [
              'task.message with a lone surrogate',
              { sender: valid.sender, task: { id: 't1', message: 'a\uD800' } },
              400,
              'Invalid JSON body: String contains a lone surrogate, which is not valid Unicode (at task.message)',
            ],
            [
              'task.message of 100001 lone surrogates',
              { sender: valid.sender, task: { id: 't1', message: '\uDC00'.repeat(100_001) } },
              400,
              'Invalid JSON body: String contains a lone surrogate, which is not valid Unicode (at task.message)',
            ],
          ]

          const errorCases = errors.map(([label, body, status, detail]) => ({ label, body, status, detail }))
          it.each(errorCases)('$label -> $status with the exact detail, and nothing is created', async ({ body, status, detail }) => {
            const tenant = uniqueTenant('v0-err')
            const before = await tenantState(tenant)
            const r = await v0(body, tenant)
            expect(r.status).toBe(status)
            expect(r.json).toEqual({ detail })
            expect(await tenantState(tenant)).toEqual(before)
          })
        })
      })
    }

    it('both prefixes reach the same A2A tasks', async () => {
      const a2a = await send(t.client, { sender: 'peer', message: 'shared' })
      const viaV1 = await rawRequest(t.url, { method: 'GET', path: `/api/v1/a2a/tasks/${a2a.id}` })
      expect(viaV1.json).toEqual(a2a)
      const art = await rawRequest(t.url, { method: 'POST', path: `/api/v1/a2a/tasks/${a2a.id}/artifacts`, body: '{"name":"v1.txt","data":"x"}' })
      expect(art.status).toBe(201)
      expect((await getA2A(t.client, a2a.id)).artifacts.map((x) => x.name)).toEqual(['v1.txt'])
    })
  })

  // A separate app, started after the shared one has closed.
  describe(`A2A legacy card with another public base URL (${engine})`, () => {
    it('the card endpoint follows the configured public base URL', async () => {
      const other = await startTestApp({ engine, publicBaseUrl: 'https://node-7.example.org:9443' })
      try {
        for (const path of ['/a2a/agent-card', '/a2a/agents', '/api/v1/a2a/agent-card', '/api/v1/a2a/agents']) {
          const r = await rawRequest(other.url, { method: 'GET', path })
          expect(r.status).toBe(200)
          expect(r.json).toEqual({ ...LEGACY_CARD, endpoint: 'https://node-7.example.org:9443/a2a' })
        }
      } finally {
        await other.close()
      }
    })
  })
}
