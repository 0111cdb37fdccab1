/**
 * A2A v1.0 streaming bad input: SendStreamingMessage and SubscribeToTask with wrong params, an unknown or finished
 * task, a malformed Last-Event-ID, no version, the wrong token: each gets its documented error in the binding's
 * dialect before any stream starts (JSON-RPC errors as HTTP 200 JSON, REST errors as google.rpc.Status), never a
 * 5xx, and nothing in the database changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testEngines } from '../helpers/engines.js'
import { openSse } from '../helpers/sse.js'
import { type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'
import { type StoreDump, openStoreDump } from '../security/support.js'

const V1 = { 'a2a-version': '1.0', 'content-type': 'application/json' }
const message = { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }

for (const engine of testEngines()) {
  describe(`A2A v1.0 streaming bad input (${engine})`, () => {
    let app: TestApp
    let dump: StoreDump
    let finished: string
    let open: string
    beforeAll(async () => {
      app = await startTestApp({ engine })
      const send = async () => {
        const res = await rawRequest(app.url, {
          method: 'POST',
          path: '/a2a/v1/message:send',
          headers: V1,
          body: JSON.stringify({ message: { ...message, messageId: `m-${Math.random()}` }, configuration: { returnImmediately: true } }),
        })
        return (res.json as { task: { id: string; metadata: Record<string, string> } }).task
      }
      const done = await send()
      expect(
        (
          await rawRequest(app.url, {
            method: 'POST',
            path: `/tasks/${done.metadata['bernstein.task_id']}/complete`,
            body: JSON.stringify({ result_summary: 'x' }),
          })
        ).status,
      ).toBe(200)
      finished = done.id
      open = (await send()).id
      dump = await openStoreDump(app)
    })
    afterAll(async () => {
      await dump.close()
      await app.close()
    })

    const rpc = (body: unknown, headers: Record<string, string> = V1) =>
      rawRequest(app.url, { method: 'POST', path: '/a2a/v1', body: JSON.stringify(body), headers })

    it.each([
      ['SendStreamingMessage without params', { method: 'SendStreamingMessage' }, -32602],
      [
        'SendStreamingMessage with a message without parts',
        { method: 'SendStreamingMessage', params: { message: { messageId: 'a', role: 'ROLE_USER' } } },
        -32602,
      ],
      ['SendStreamingMessage into an unknown task', { method: 'SendStreamingMessage', params: { message: { ...message, taskId: 'nope' } } }, -32001],
      ['SubscribeToTask without params', { method: 'SubscribeToTask' }, -32602],
      ['SubscribeToTask without an id', { method: 'SubscribeToTask', params: {} }, -32602],
      ['SubscribeToTask with a number for id', { method: 'SubscribeToTask', params: { id: 5 } }, -32602],
      ['SubscribeToTask of an unknown task', { method: 'SubscribeToTask', params: { id: 'nope' } }, -32001],
    ] as const)('JSON-RPC: %s gets its error code and changes nothing', async (_name, request, code) => {
      const before = await dump.dump()
      const res = await rpc({ jsonrpc: '2.0', id: 11, ...request })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      expect(res.json).toMatchObject({ jsonrpc: '2.0', id: 11, error: { code } })
      expect(await dump.dump()).toEqual(before)
    })

    it('JSON-RPC: SubscribeToTask of a finished task is UnsupportedOperationError, and a malformed Last-Event-ID is -32602', async () => {
      const before = await dump.dump()
      const terminal = await rpc({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: finished } })
      expect(terminal.json).toMatchObject({ error: { code: -32004, data: [{ reason: 'UNSUPPORTED_OPERATION' }] } })
      const badId = await rpc({ jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: open } }, { ...V1, 'last-event-id': 'abc' })
      expect(badId.json).toMatchObject({ error: { code: -32602 } })
      const noVersion = await rpc({ jsonrpc: '2.0', id: 3, method: 'SendStreamingMessage', params: { message } }, { 'content-type': 'application/json' })
      expect(noVersion.json).toMatchObject({ error: { code: -32009 } })
      expect(await dump.dump()).toEqual(before)
    })

    it.each(['POST', 'GET'])(
      'HTTP+JSON: %s :subscribe of an unknown or finished task, or with a malformed Last-Event-ID, is a google.rpc.Status',
      async (method) => {
        const before = await dump.dump()
        const at = (id: string, headers: Record<string, string> = {}) =>
          rawRequest(app.url, { method, path: `/a2a/v1/tasks/${id}:subscribe`, headers: { 'a2a-version': '1.0', ...headers } })
        const unknown = await at('nope')
        expect(unknown.status).toBe(404)
        expect(unknown.json).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', details: [{ reason: 'TASK_NOT_FOUND' }] } })
        const terminal = await at(finished)
        expect(terminal.status).toBe(400)
        expect(terminal.json).toMatchObject({ error: { code: 400, status: 'FAILED_PRECONDITION', details: [{ reason: 'UNSUPPORTED_OPERATION' }] } })
        const badId = await at(open, { 'last-event-id': '-1' })
        expect(badId.status).toBe(400)
        expect(badId.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } })
        const noVersion = await rawRequest(app.url, { method, path: `/a2a/v1/tasks/${open}:subscribe` })
        expect(noVersion.status).toBe(400)
        expect(noVersion.json).toMatchObject({ error: { details: [{ reason: 'VERSION_NOT_SUPPORTED' }] } })
        expect(await dump.dump()).toEqual(before)
      },
    )

    it('HTTP+JSON: message:stream with invalid params is a 400 and creates nothing', async () => {
      const before = await dump.dump()
      const invalid = await rawRequest(app.url, {
        method: 'POST',
        path: '/a2a/v1/message:stream',
        headers: V1,
        body: JSON.stringify({ message: { role: 'ROLE_USER' } }),
      })
      expect(invalid.status).toBe(400)
      expect(invalid.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', details: [{ reason: 'INVALID_PARAMS' }] } })
      const intoFinished = await rawRequest(app.url, {
        method: 'POST',
        path: '/a2a/v1/message:stream',
        headers: V1,
        body: JSON.stringify({ message: { ...message, taskId: finished } }),
      })
      expect(intoFinished.status).toBe(400)
      expect(intoFinished.json).toMatchObject({ error: { details: [{ reason: 'UNSUPPORTED_OPERATION' }] } })
      expect(await dump.dump()).toEqual(before)
    })

    it('needs an operator token to stream a new message; any token of the tenant may subscribe with GET', async () => {
      const agent = await app.tokens.create({ role: 'agent', tenant: 'default', expiresInSeconds: null })
      const before = await dump.dump()
      const refused = await rawRequest(app.url, {
        method: 'POST',
        path: '/a2a/v1/message:stream',
        headers: V1,
        token: agent.token,
        body: JSON.stringify({ message }),
      })
      expect(refused.status).toBe(403)
      expect(refused.json).toMatchObject({ error: { code: 403, status: 'PERMISSION_DENIED' } })
      const rpcRefused = await rawRequest(app.url, {
        method: 'POST',
        path: '/a2a/v1',
        headers: V1,
        token: agent.token,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: open } }),
      })
      expect(rpcRefused.status).toBe(403)
      expect(await dump.dump()).toEqual(before)
      const stream = await openSse(`${app.url}/a2a/v1/tasks/${open}:subscribe`, { token: agent.token })
      expect(stream.status).toBe(200)
      const first = await stream.next()
      expect(JSON.parse(first?.data ?? '{}')).toMatchObject({ task: { id: open } })
      stream.close()
      // Another tenant's token does not see the task.
      const outsider = await app.tokens.create({ role: 'agent', tenant: 'elsewhere', expiresInSeconds: null })
      const hidden = await openSse(`${app.url}/a2a/v1/tasks/${open}:subscribe`, { token: outsider.token })
      expect(hidden.status).toBe(404)
    })
  })
}
