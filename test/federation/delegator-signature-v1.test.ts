/**
 * Issue 24 on the A2A v1.0 surface: the v1 bindings take no per-request signature, so a task delegated by a signed
 * delivery is out of a tenant-bound caller's reach there. Every operation on it (GetTask, CancelTask, SendMessage and
 * SendStreamingMessage continuing it, SubscribeToTask, push configs) is TaskNotFoundError in each binding's dialect,
 * at the root and under `/{tenant}/`, ListTasks leaves it out (its pages and totalSize agree), and nothing changes.
 * The node's own operator token (bound to no tenant) still reaches it; the tenant's other tasks are as before.
 */
import { describe, expect, it } from 'vitest'
import { testEngines } from '../helpers/engines.js'
import type { HttpResult } from '../helpers/raw-http.js'
import { openSse } from '../helpers/sse.js'
import { type TestApp, rawRequest } from '../helpers/test-app.js'
import { openStoreDump } from '../security/support.js'
import { federationNodes } from './nodes.js'
import { delegated, signedDelegationNode } from './signed-delegation.js'

type Json = Record<string, unknown>

const V1 = { 'a2a-version': '1.0', 'content-type': 'application/json' }
/** The node's own operator token acts in a tenant named by this header. */
const AS_PEERORG = { ...V1, 'x-tenant-id': 'peerorg' }
const PUSH_URL = 'http://127.0.0.1:9/hook'

/** A JSON-RPC call to `path` (`/a2a/v1` or `/a2a/v1/`) with `token` (undefined: the node's operator token, acting in `peerorg`). */
async function rpc(app: TestApp, token: string | undefined, method: string, params: Json, path = '/a2a/v1'): Promise<Json> {
  const res = await rawRequest(app.url, {
    method: 'POST',
    path,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
    headers: token === undefined ? AS_PEERORG : V1,
    ...(token !== undefined && { token }),
  })
  expect(res.status, res.text).toBe(200)
  return res.json as Json
}

function rest(app: TestApp, token: string | undefined, method: string, path: string, body?: unknown): Promise<HttpResult> {
  return rawRequest(app.url, {
    method,
    path,
    headers: token === undefined ? AS_PEERORG : V1,
    ...(token !== undefined && { token }),
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
}

/** The JSON-RPC answer is TaskNotFoundError for `id`. */
function expectRpcNotFound(answer: Json, id: string, what: string): void {
  expect(answer['result'], what).toBeUndefined()
  expect(answer['error'], what).toMatchObject({ code: -32001, data: [{ reason: 'TASK_NOT_FOUND', metadata: { taskId: id } }] })
}

/** The HTTP+JSON answer is TaskNotFoundError for `id` (404, google.rpc.Status). */
function expectRestNotFound(status: number, text: string | undefined, id: string, what: string): void {
  expect(status, what).toBe(404)
  expect(JSON.parse(text ?? '{}'), what).toMatchObject({
    error: { code: 404, status: 'NOT_FOUND', details: [{ reason: 'TASK_NOT_FOUND', metadata: { taskId: id } }] },
  })
}

const message = (taskId?: string) => ({
  message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'the tests are in tests/parser' }], ...(taskId && { taskId }) },
  configuration: { returnImmediately: true },
})

/** Every task id ListTasks gives `token` (pages of one, so that paging is checked too), and the totalSize it reported. */
async function listedIds(app: TestApp, token: string | undefined, path = '/a2a/v1/tasks'): Promise<{ ids: string[]; totalSize: number[] }> {
  const ids: string[] = []
  const totalSize: number[] = []
  let pageToken = ''
  do {
    const res = await rest(app, token, 'GET', `${path}?pageSize=1${pageToken === '' ? '' : `&pageToken=${pageToken}`}`)
    expect(res.status, res.text).toBe(200)
    const page = res.json as { tasks: { id: string }[]; nextPageToken: string; totalSize: number }
    ids.push(...page.tasks.map((t) => t.id))
    totalSize.push(page.totalSize)
    pageToken = page.nextPageToken
  } while (pageToken !== '')
  return { ids, totalSize }
}

for (const engine of testEngines()) {
  describe(`A2A v1.0 on a task delegated by a signed delivery (${engine})`, () => {
    const node = federationNodes(engine)

    it('is TaskNotFound to a tenant-bound token on every operation and binding, left out of ListTasks, and nothing changes', async () => {
      const { b, token } = await signedDelegationNode(node, { a2aV1Push: { allowedTargets: ['127.0.0.1'] } })
      const { a2aTaskId: id } = await delegated(b, token)
      // An ordinary task of the same tenant, sent by the same token through v1.
      const own = ((await rpc(b, token, 'SendMessage', message())) as { result: { task: { id: string } } }).result.task.id
      const agent = (await b.tokens.create({ role: 'agent', tenant: 'peerorg', expiresInSeconds: null })).token

      const dump = await openStoreDump(b)
      try {
        const before = await dump.dump()
        for (const path of ['/a2a/v1', '/a2a/v1/']) {
          expectRpcNotFound(await rpc(b, token, 'GetTask', { id }, path), id, `GetTask ${path}`)
          expectRpcNotFound(await rpc(b, token, 'GetTask', { id, tenant: 'peerorg' }, path), id, `GetTask in tenant ${path}`)
          expectRpcNotFound(await rpc(b, token, 'CancelTask', { id }, path), id, `CancelTask ${path}`)
          expectRpcNotFound(await rpc(b, token, 'SendMessage', message(id), path), id, `SendMessage ${path}`)
          expectRpcNotFound(await rpc(b, token, 'CreateTaskPushNotificationConfig', { taskId: id, url: PUSH_URL }, path), id, `push create ${path}`)
          expectRpcNotFound(await rpc(b, token, 'ListTaskPushNotificationConfigs', { taskId: id }, path), id, `push list ${path}`)
          expectRpcNotFound(await rpc(b, token, 'GetTaskPushNotificationConfig', { taskId: id, id: 'c1' }, path), id, `push get ${path}`)
          expectRpcNotFound(await rpc(b, token, 'DeleteTaskPushNotificationConfig', { taskId: id, id: 'c1' }, path), id, `push delete ${path}`)
          for (const [method, params] of [
            ['SubscribeToTask', { id }],
            ['SendStreamingMessage', message(id)],
          ] as const) {
            const stream = await openSse(b.url + path, { method: 'POST', token, body: { jsonrpc: '2.0', id: 7, method, params } })
            expect(stream.status, `${method} ${path}`).toBe(200)
            expectRpcNotFound(JSON.parse(stream.text ?? '{}') as Json, id, `${method} ${path}`)
          }
          const listed = (await rpc(b, token, 'ListTasks', {}, path)) as { result: { tasks: { id: string }[]; totalSize: number } }
          expect(listed.result.tasks.map((t) => t.id)).toEqual([own])
          expect(listed.result.totalSize).toBe(1)
        }
        for (const prefix of ['/a2a/v1', '/a2a/v1/peerorg']) {
          const got = await rest(b, token, 'GET', `${prefix}/tasks/${id}`)
          expectRestNotFound(got.status, got.text, id, `GET ${prefix}`)
          const cancel = await rest(b, token, 'POST', `${prefix}/tasks/${id}:cancel`, {})
          expectRestNotFound(cancel.status, cancel.text, id, `cancel ${prefix}`)
          const sent = await rest(b, token, 'POST', `${prefix}/message:send`, message(id))
          expectRestNotFound(sent.status, sent.text, id, `message:send ${prefix}`)
          expect(await listedIds(b, token, `${prefix}/tasks`)).toEqual({ ids: [own], totalSize: [1] })
        }
        // An agent token of the tenant (it may only read: POST /a2a/v1 is an operator's).
        const agentGot = await rest(b, agent, 'GET', `/a2a/v1/tasks/${id}`)
        expectRestNotFound(agentGot.status, agentGot.text, id, 'GET (agent)')
        expect(await listedIds(b, agent)).toEqual({ ids: [own], totalSize: [1] })
        for (const [method, path, body] of [
          ['POST', `/a2a/v1/tasks/${id}:subscribe`, {}],
          ['GET', `/a2a/v1/tasks/${id}:subscribe`, undefined],
          ['POST', '/a2a/v1/message:stream', message(id)],
        ] as const) {
          const stream = await openSse(b.url + path, { method, token, ...(body !== undefined && { body }) })
          expectRestNotFound(stream.status, stream.text, id, `${method} ${path}`)
        }
        const pushBase = `/a2a/v1/tasks/${id}/pushNotificationConfigs`
        for (const [method, path, body] of [
          ['POST', pushBase, { url: PUSH_URL }],
          ['GET', pushBase, undefined],
          ['GET', `${pushBase}/c1`, undefined],
          ['DELETE', `${pushBase}/c1`, undefined],
        ] as const) {
          const res = await rest(b, token, method, path, body)
          expectRestNotFound(res.status, res.text, id, `${method} ${path}`)
        }
        expect(await dump.dump()).toEqual(before)
      } finally {
        await dump.close()
      }

      // The ordinary task of the tenant: read, listed, subscribed to, given a push config, messaged and canceled as before.
      expect((await rest(b, token, 'GET', `/a2a/v1/tasks/${own}`)).status).toBe(200)
      const subscribed = await openSse(`${b.url}/a2a/v1/tasks/${own}:subscribe`, { method: 'POST', token, body: {} })
      expect(JSON.parse((await subscribed.next())?.data ?? '{}')).toMatchObject({ task: { id: own } })
      subscribed.close()
      const config = await rpc(b, token, 'CreateTaskPushNotificationConfig', { taskId: own, url: PUSH_URL })
      expect(config['result'], JSON.stringify(config)).toMatchObject({ taskId: own, url: PUSH_URL })
      expect((await rest(b, token, 'POST', '/a2a/v1/message:send', message(own))).status).toBe(200)
      const canceled = await rpc(b, token, 'CancelTask', { id: own })
      expect(canceled['result']).toMatchObject({ id: own, status: { state: 'TASK_STATE_CANCELED' } })
    })

    it("leaves the task to the node's own operator token: read, listed and canceled through v1", async () => {
      const { b, token } = await signedDelegationNode(node)
      const { a2aTaskId: id, taskId } = await delegated(b, token)
      const own = ((await rpc(b, token, 'SendMessage', message())) as { result: { task: { id: string } } }).result.task.id

      const got = await rpc(b, undefined, 'GetTask', { id })
      expect(got['result'], JSON.stringify(got)).toMatchObject({ id, metadata: { 'bernstein.task_id': taskId } })
      expect((await rest(b, undefined, 'GET', `/a2a/v1/peerorg/tasks/${id}`)).status).toBe(200)
      const listed = await listedIds(b, undefined)
      expect(listed.ids.sort()).toEqual([id, own].sort())
      expect(listed.totalSize).toEqual([2, 2])
      const canceled = await rest(b, undefined, 'POST', `/a2a/v1/tasks/${id}:cancel`, {})
      expect(canceled.status, canceled.text).toBe(200)
      expect(canceled.json).toMatchObject({ id, status: { state: 'TASK_STATE_CANCELED' } })
    })
  })
}
