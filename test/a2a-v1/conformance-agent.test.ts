/**
 * The in-process executor and the conformance agent, input-required resumption, the `/{tenant}/…` REST variants and
 * the JSON-RPC binding at `/a2a/v1/`: through the official `@a2a-js/sdk` client on both bindings, through the
 * generated client, and raw where a client would not send what is tested. Both engines.
 */
import type { Client } from '@a2a-js/sdk/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AgentExecutor } from '../../src/a2a-v1/executor/agent-executor.js'
import { ConformanceAgent } from '../../src/a2a-v1/executor/conformance-agent.js'
import { BINDINGS, type Binding, clientFor, userMessage } from '../helpers/a2a-sdk.js'
import { testEngines } from '../helpers/engines.js'
import { type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

const V1 = { 'A2A-Version': '1.0' }

/** The official client of the node's card over one binding, as the operator. */
const sdkClient = (app: TestApp, binding: Binding): Promise<Client> => clientFor(app, binding)

let seq = 0
/** A user message whose id starts with `prefix` (the conformance agent's behaviour is chosen by it). */
const message = (prefix: string, extra: Record<string, unknown> = {}) => userMessage('hi', { messageId: `${prefix}-${++seq}`, ...extra })
type SdkTask = {
  id: string
  contextId: string
  status?: { state: number }
  artifacts: { artifactId: string; parts: { content: unknown; filename?: string; mediaType?: string }[] }[]
  history: { role: number; parts: { content: unknown }[] }[]
}
const send = (client: Client, prefix: string, extra: Record<string, unknown> = {}) =>
  client.sendMessage({ message: message(prefix, extra) as never } as never) as Promise<SdkTask | { messageId: string; parts: { content: unknown }[] }>
const jsonRpc = (app: TestApp, path: string, method: string, params: unknown) =>
  rawRequest(app.url, { method: 'POST', path, headers: V1, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }) })

for (const engine of testEngines()) {
  describe(`A2A v1.0 executor and conformance agent (${engine})`, () => {
    let app: TestApp
    let failing: TestApp
    const executorErrors: string[] = []
    beforeAll(async () => {
      app = await startTestApp({
        engine,
        a2aV1Executor: new ConformanceAgent({ resubscribeDelayMs: 0 }),
        a2aV1: { blockingTimeoutMs: 20_000, pollIntervalMs: 100 },
      })
      const broken: AgentExecutor = {
        execute: async (_context, updater) => {
          await updater.working('starting')
          throw new Error('boom')
        },
      }
      failing = await startTestApp({ engine, a2aV1Executor: broken, onExecutorError: (_e, id) => executorErrors.push(id) })
    })
    afterAll(async () => {
      await app.close()
      await failing.close()
    })

    for (const binding of BINDINGS) {
      describe(binding, () => {
        it('completes, adds text, file, URL and data artifacts, and answers a message without a task', async () => {
          const client = await sdkClient(app, binding)
          const done = (await send(client, 'tck-complete-task')) as SdkTask
          expect(done.status?.state).toBe(3 /* COMPLETED */)
          expect(done.history.at(-1)).toMatchObject({ role: 2 /* AGENT */, parts: [{ content: { $case: 'text', value: 'Hello from TCK' } }] })
          const file = (await send(client, 'tck-artifact-file')) as SdkTask
          expect(file.artifacts[0]?.parts[0]).toMatchObject({ content: { $case: 'raw' }, filename: 'output.txt', mediaType: 'text/plain' })
          const url = (await send(client, 'tck-artifact-file-url')) as SdkTask
          expect(url.artifacts[0]?.parts[0]).toMatchObject({ content: { $case: 'url', value: 'https://example.com/output.txt' }, filename: 'output.txt' })
          const data = (await send(client, 'tck-artifact-data')) as SdkTask
          expect(data.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'data', value: { key: 'value', count: 42 } })
          const chunked = (await send(client, 'tck-stream-artifact-chunked')) as SdkTask
          expect(chunked.artifacts[0]?.parts.map((p) => p.content)).toEqual([
            { $case: 'text', value: 'chunk-1 ' },
            { $case: 'text', value: 'chunk-2' },
          ])
          const direct = (await send(client, 'tck-message-response')) as { parts: { content: unknown }[] }
          expect(direct.parts[0]?.content).toEqual({ $case: 'text', value: 'Direct message response' })
          const rejected = (await send(client, 'tck-reject-task')) as SdkTask
          expect(rejected.status?.state).toBe(4 /* FAILED */)
          // The same task on the seed surface: the completion was attested, the file artifact is stored as v1 JSON.
          const seed = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${file.id}` })
          expect((seed.json as { status: string }).status).toBe('completed')
          expect((seed.json as { artifacts: { content_type: string }[] }).artifacts[0]?.content_type).toBe('application/vnd.bernstein.a2a-v1-artifact+json')
        })

        it('resumes an input-required task with a message naming it, and refuses what spec §3 refuses', async () => {
          const client = await sdkClient(app, binding)
          const waiting = (await send(client, 'tck-input-required')) as SdkTask
          expect(waiting.status?.state).toBe(6 /* INPUT_REQUIRED */)
          // Another context than the task's is refused, and changes nothing.
          await expect(send(client, 'tck-complete-task', { taskId: waiting.id, contextId: 'another-context' })).rejects.toThrow()
          expect((await client.getTask({ id: waiting.id } as never)).status?.state).toBe(6)
          const resumed = (await send(client, 'tck-complete-task', { taskId: waiting.id, contextId: waiting.contextId })) as SdkTask
          expect(resumed.id).toBe(waiting.id)
          expect(resumed.status?.state).toBe(3)
          expect(resumed.history.filter((m) => m.role === 1)).toHaveLength(2)
          // A terminal task accepts no more messages; an unknown one is not found.
          await expect(send(client, 'tck-complete-task', { taskId: waiting.id })).rejects.toMatchObject({ name: 'UnsupportedOperationError' })
          await expect(send(client, 'tck-complete-task', { taskId: 'no-such-task' })).rejects.toMatchObject({ name: 'TaskNotFoundError' })
          // The context is stored and filterable.
          const page = await client.listTasks({ tenant: '', contextId: waiting.contextId, status: 0, pageToken: '' } as never)
          expect(page.tasks.map((t) => t.id)).toEqual([waiting.id])
        })
      })
    }

    it('fails the task of an executor that throws, and reports the error', async () => {
      const sent = await rawRequest(failing.url, {
        method: 'POST',
        path: '/a2a/v1/message:send',
        headers: V1,
        body: JSON.stringify({ message: { messageId: 'm-fail', role: 'ROLE_USER', parts: [{ text: 'x' }] } }),
      })
      expect(sent.status).toBe(200)
      const task = (sent.json as { task: { id: string; status: { state: string } } }).task
      expect(task.status.state).toBe('TASK_STATE_FAILED')
      expect(executorErrors).toContain(task.id)
    })

    it('serves JSON-RPC at /a2a/v1/ too, reads proto field names, and refuses other trailing slashes', async () => {
      const sent = await jsonRpc(app, '/a2a/v1/', 'SendMessage', {
        message: { messageId: 'tck-input-required-slash', role: 'ROLE_USER', parts: [{ text: 'a' }] },
      })
      const id = (sent.json as { result: { task: { id: string } } }).result.task.id
      const more = await jsonRpc(app, '/a2a/v1/', 'SendMessage', {
        message: { messageId: 'tck-input-required-2', role: 'ROLE_USER', parts: [{ text: 'b' }], task_id: id },
      })
      expect((more.json as { result: { task: { status: { state: string } } } }).result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
      const one = await jsonRpc(app, '/a2a/v1/', 'GetTask', { id, history_length: 1 })
      expect((one.json as { result: { history: unknown[] } }).result.history).toHaveLength(1)
      const bad = await jsonRpc(app, '/a2a/v1/', 'GetTask', { id, history_length: 'all' })
      expect((bad.json as { error: { code: number } }).error.code).toBe(-32602)
      expect((await rawRequest(app.url, { method: 'GET', path: '/a2a/v1/tasks/', headers: V1 })).status).toBe(404)
    })

    it('scopes the /{tenant}/ REST variants to that tenant, with the token s binding and the header', async () => {
      const created = await app.client.POST('/a2a/v1/{a2a_tenant}/message:send', {
        params: { path: { a2a_tenant: 'acme' }, header: V1 },
        body: { message: { messageId: 'tck-complete-task-acme', role: 'ROLE_USER', parts: [{ text: 'for acme' }] } },
      })
      expect(created.response.status).toBe(200)
      const id = created.data && 'task' in created.data ? created.data.task.id : ''
      const listed = await app.client.GET('/a2a/v1/{a2a_tenant}/tasks', { params: { path: { a2a_tenant: 'acme' }, header: V1 } })
      expect(listed.data?.tasks.map((t) => t.id)).toEqual([id])
      const got = await app.client.GET('/a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}', { params: { path: { a2a_tenant: 'acme', a2a_task_id: id }, header: V1 } })
      expect(got.data?.status.state).toBe('TASK_STATE_COMPLETED')
      // Not in another tenant, whether named by the path or by the header of the root variant.
      const elsewhere = await app.client.GET('/a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}', {
        params: { path: { a2a_tenant: 'other', a2a_task_id: id }, header: V1 },
      })
      expect(elsewhere.response.status).toBe(404)
      const viaHeader = await rawRequest(app.url, { method: 'GET', path: `/a2a/v1/tasks/${id}`, headers: { ...V1, 'x-tenant-id': 'acme' } })
      expect(viaHeader.status).toBe(200)
      // The path and the header disagree: 400; a malformed tenant: 400; a token bound to another tenant: 403.
      const clash = await rawRequest(app.url, { method: 'GET', path: '/a2a/v1/acme/tasks', headers: { ...V1, 'x-tenant-id': 'other' } })
      expect(clash.status).toBe(400)
      expect((clash.json as { error: { details: { reason: string }[] } }).error.details[0]?.reason).toBe('INVALID_PARAMS')
      expect((await rawRequest(app.url, { method: 'GET', path: '/a2a/v1/-bad-/tasks', headers: V1 })).status).toBe(400)
      const bound = await app.tokens.create({ role: 'agent', tenant: 'other', expiresInSeconds: null })
      const refused = await rawRequest(app.url, { method: 'GET', path: '/a2a/v1/acme/tasks', headers: V1, token: bound.token })
      expect(refused.status).toBe(403)
      const own = await rawRequest(app.url, { method: 'GET', path: '/a2a/v1/other/tasks', headers: V1, token: bound.token })
      expect((own.json as { tasks: unknown[] }).tasks).toEqual([])
      // JSON-RPC's `tenant` field follows the same rule.
      const rpc = await jsonRpc(app, '/a2a/v1', 'ListTasks', { tenant: 'acme' })
      expect((rpc.json as { result: { tasks: { id: string }[] } }).result.tasks.map((t) => t.id)).toEqual([id])
    })
  })
}
