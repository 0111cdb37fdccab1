/**
 * A2A v1.0 bad input: every malformed JSON-RPC request gets its standard code (HTTP 200), an unsupported version its
 * VersionNotSupportedError on both bindings, a REST error is a google.rpc.Status with an ErrorInfo; never a 5xx, and
 * nothing in the database changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testEngines } from '../helpers/engines.js'
import { exchange } from '../helpers/raw-http.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'
import { type StoreDump, openStoreDump } from '../security/support.js'

const V1 = { 'a2a-version': '1.0', 'content-type': 'application/json' }
const message = { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }

for (const engine of testEngines()) {
  describe(`A2A v1.0 bad input (${engine})`, () => {
    let app: TestApp
    let dump: StoreDump
    beforeAll(async () => {
      app = await startTestApp({ engine })
      dump = await openStoreDump(app)
    })
    afterAll(async () => {
      await dump.close()
      await app.close()
    })

    const rpc = (body: string, headers: Record<string, string> = V1) => rawRequest(app.url, { method: 'POST', path: '/a2a/v1', body, headers })
    /** SendMessage on HTTP+JSON, answered at once. */
    const sendMessage = (messageId: string) =>
      rawRequest(app.url, {
        method: 'POST',
        path: '/a2a/v1/message:send',
        headers: V1,
        body: JSON.stringify({ message: { ...message, messageId }, configuration: { returnImmediately: true } }),
      })

    it.each([
      ['a body that is not JSON', '{"jsonrpc": "2.0", "method": ', -32700, null],
      ['an array (batch)', '[]', -32600, null],
      ['a string', '"SendMessage"', -32600, null],
      ['no jsonrpc member', JSON.stringify({ id: 1, method: 'GetTask', params: { id: 'x' } }), -32600, 1],
      ['jsonrpc 1.0', JSON.stringify({ jsonrpc: '1.0', id: 2, method: 'GetTask', params: { id: 'x' } }), -32600, 2],
      ['a method that is not a string', JSON.stringify({ jsonrpc: '2.0', id: 3, method: 7 }), -32600, 3],
      // Parsed, it would be 123456789012345680000000000000: answered with a null id rather than a rounded one.
      ['an id beyond 2^53', '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"GetTask","params":{"id":"x"}}', -32600, null],
      ['params that are not an object', JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'GetTask', params: [1] }), -32600, 4],
      ['an unknown method', JSON.stringify({ jsonrpc: '2.0', id: 'u', method: 'tasks/get', params: {} }), -32601, 'u'],
      ['SendMessage without params', JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'SendMessage' }), -32602, 5],
      [
        'SendMessage with a message without parts',
        JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'SendMessage', params: { message: { messageId: 'a', role: 'ROLE_USER' } } }),
        -32602,
        6,
      ],
      [
        'GetTask with a negative historyLength',
        JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'x', historyLength: -1 } }),
        -32602,
        7,
      ],
      ['an unknown task', JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'GetTask', params: { id: 'nope' } }), -32001, 8],
      ['a bad pageToken', JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ListTasks', params: { pageToken: '!!' } }), -32602, 9],
    ] as const)('%s gets its JSON-RPC error code and changes nothing', async (_name, body, code, id) => {
      const before = await dump.dump()
      const res = await rpc(body)
      expect(res.status).toBe(200)
      const answer = res.json as { jsonrpc: string; id: unknown; error: { code: number; data: { '@type': string; domain: string }[] } }
      expect(answer.jsonrpc).toBe('2.0')
      expect(answer.id).toEqual(id)
      expect(answer.error.code).toBe(code)
      expect(answer.error.data[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', domain: 'a2a-protocol.org' })
      expect(await dump.dump()).toEqual(before)
    })

    it.each([
      ['absent (0.3)', undefined],
      ['empty (0.3)', ''],
      ['0.3', '0.3'],
      ['2.0', '2.0'],
      ['garbage', 'v1'],
    ])('refuses the A2A-Version %s on both bindings with VersionNotSupportedError', async (_name, version) => {
      const before = await dump.dump()
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(version !== undefined && { 'a2a-version': version }) }
      const res = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } }), headers)
      expect(res.status).toBe(200)
      expect((res.json as { error: { code: number } }).error.code).toBe(-32009)
      const rest = await rawRequest(app.url, { method: 'POST', path: '/a2a/v1/message:send', body: JSON.stringify({ message }), headers })
      expect(rest.status).toBe(400)
      expect(rest.headers.get('content-type')).toMatch(/^application\/a2a\+json/)
      expect(rest.json).toMatchObject({ error: { code: 400, status: 'FAILED_PRECONDITION', details: [{ reason: 'VERSION_NOT_SUPPORTED' }] } })
      expect(await dump.dump()).toEqual(before)
    })

    it('accepts the version as a query parameter, and 1.0 in either media type', async () => {
      const asQuery = await rawRequest(app.url, { method: 'GET', path: '/a2a/v1/tasks?A2A-Version=1.0', headers: {} })
      expect(asQuery.status).toBe(200)
      const a2aJson = await rawRequest(app.url, {
        method: 'POST',
        path: '/a2a/v1/message:send',
        body: JSON.stringify({ message, configuration: { returnImmediately: true } }),
        headers: { 'a2a-version': '1.0', 'content-type': 'application/a2a+json' },
      })
      expect(a2aJson.status).toBe(200)
      expect(a2aJson.headers.get('content-type')).toMatch(/^application\/a2a\+json/)
      expect((a2aJson.json as { task: { status: { state: string } } }).task.status.state).toBe('TASK_STATE_SUBMITTED')
    })

    it('answers REST errors as google.rpc.Status: invalid params, unknown task, no token', async () => {
      const before = await dump.dump()
      const invalid = await rawRequest(app.url, {
        method: 'POST',
        path: '/a2a/v1/message:send',
        body: JSON.stringify({ message: { role: 'ROLE_USER' } }),
        headers: V1,
      })
      expect(invalid.status).toBe(400)
      expect(invalid.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', details: [{ reason: 'INVALID_PARAMS' }] } })
      const missing = await rawRequest(app.url, { method: 'GET', path: '/a2a/v1/tasks/nope', headers: V1 })
      expect(missing.status).toBe(404)
      expect(missing.json).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', details: [{ reason: 'TASK_NOT_FOUND' }] } })
      const cancel = await rawRequest(app.url, { method: 'POST', path: '/a2a/v1/tasks/nope:cancel', headers: V1 })
      expect(cancel.status).toBe(404)
      const anonymous = await rawRequest(app.url, { method: 'GET', path: '/a2a/v1/tasks', headers: V1, token: null })
      expect(anonymous.status).toBe(401)
      expect(anonymous.json).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED', details: [{ reason: 'UNAUTHENTICATED' }] } })
      const notJson = await rawRequest(app.url, { method: 'POST', path: '/a2a/v1/message:send', body: '{', headers: V1 })
      expect(notJson.status).toBe(400)
      expect(await dump.dump()).toEqual(before)
    })

    it('shows an artifact stored under the v1 media type that is not a well-formed v1 artifact as its text, on every read', async () => {
      const sent = await sendMessage('artifact-shapes')
      expect(sent.status).toBe(200)
      const id = (sent.json as { task: { id: string } }).task.id
      const mediaType = 'application/vnd.bernstein.a2a-v1-artifact+json'
      const malformed = [
        '{"artifactId":"a","parts":[{"zzz":1}]}',
        '{"artifactId":"b","parts":[{"text":"t","url":"u"}]}',
        '{"artifactId":"c","parts":"x"}',
        'not json',
      ]
      const wellFormed = '{"artifactId":"d","name":"data","parts":[{"data":{"k":1},"mediaType":"application/json"}]}'
      for (const data of [...malformed, wellFormed]) {
        const added = await rawRequest(app.url, {
          method: 'POST',
          path: `/a2a/tasks/${id}/artifacts`,
          body: JSON.stringify({ name: 'x', content_type: mediaType, data }),
        })
        expect(added.status, data).toBe(201)
      }
      const read = await rawRequest(app.url, { method: 'GET', path: `/a2a/v1/tasks/${id}`, headers: V1 })
      expect(read.status).toBe(200)
      const artifacts = (read.json as { artifacts: { artifactId: string; parts: Record<string, unknown>[] }[] }).artifacts
      expect(artifacts.slice(0, malformed.length).map((a) => a.parts)).toEqual(malformed.map((data) => [{ text: data, mediaType }]))
      expect(artifacts[malformed.length]).toEqual({ artifactId: 'd', name: 'data', parts: [{ data: { k: 1 }, mediaType: 'application/json' }] })
      const listed = await rawRequest(app.url, { method: 'GET', path: '/a2a/v1/tasks?includeArtifacts=true', headers: V1 })
      expect(listed.status).toBe(200)
      const rpc = await rawRequest(app.url, {
        method: 'POST',
        path: '/a2a/v1',
        headers: V1,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }),
      })
      expect((rpc.json as { result?: { artifacts: unknown[] } }).result?.artifacts).toHaveLength(malformed.length + 1)
    })

    it('refuses U+0000 in what reaches the database with the NUL 400, on both engines alike, and stores nothing', async () => {
      const before = await dump.dump()
      const nul = 'String must not contain the NUL character (\\u0000)'
      for (const path of ['/a2a/v1/tasks/a%00b', '/a2a/v1/tasks?contextId=a%00b', '/a2a/v1/tasks/a%00b/pushNotificationConfigs']) {
        const res = await rawRequest(app.url, { method: 'GET', path, headers: V1 })
        expect(res.status, path).toBe(400)
        expect((res.json as { error: { message: string } }).error.message, path).toContain(nul)
      }
      const send = await sendMessage('a\u0000b')
      expect(send.status).toBe(400)
      expect(send.json).toMatchObject({ error: { status: 'INVALID_ARGUMENT', message: `body.message.messageId: ${nul}` } })
      const get = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'a\u0000b' } }))
      expect(get.json).toMatchObject({ id: 1, error: { code: -32602 } })
      expect(await dump.dump()).toEqual(before)
    })

    it("answers the node's own refusals with their status, never INTERNAL: a method a path does not have, a target naming no operation", async () => {
      const before = await dump.dump()
      for (const path of ['/a2a/v1/tasks', '/a2a/v1/tasks/nope', '/a2a/v1/extendedAgentCard', '/a2a/v1/acme/tasks']) {
        const head = await rawRequest(app.url, { method: 'HEAD', path, headers: V1 })
        expect(head.status, path).toBe(405)
        expect(head.headers.get('allow'), path).toBe('GET')
        const put = await rawRequest(app.url, { method: 'PUT', path, headers: V1, body: '{}' })
        expect(put.status, path).toBe(405)
        expect(put.headers.get('allow'), path).toBe('GET')
      }
      // A target in absolute form names no operation of the contract (docs/api.md): 404 in the binding's dialect.
      const send = JSON.stringify({ message })
      for (const target of ['GET http://x/a2a/v1/tasks', `POST http://x/a2a/v1/message:send`]) {
        const body = target.startsWith('POST') ? send : ''
        const { connection, res } = await exchange(
          app.url,
          `${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${OPERATOR_TOKEN}\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        )
        expect(res.statusLine, target).toBe('HTTP/1.1 404 Not Found')
        expect(res.json, target).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', details: [{ reason: 'NOT_FOUND' }] } })
        connection.destroy()
      }
      expect(await dump.dump()).toEqual(before)
    })
  })
}
