/**
 * The `/a2a/v1/{tenant}/…` twins of the HTTP+JSON streaming (`message:stream`, `tasks/{id}:subscribe`, POST and GET)
 * and push notification config operations (spec §1.9): they see that tenant's tasks and events and no other's, and
 * a token bound to another tenant may not name it. Both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testEngines } from '../helpers/engines.js'
import { type SseEvent, type SseStream, openSse } from '../helpers/sse.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

const V1 = { 'a2a-version': '1.0', 'content-type': 'application/json' }
const HOOK = 'http://127.0.0.1:9/hook'

let seq = 0
const wireMessage = (text: string) => ({ messageId: `twin-${++seq}`, role: 'ROLE_USER', parts: [{ text }] })

type StreamResponse = Record<string, { id?: string; taskId?: string; status?: { state: string }; metadata?: Record<string, string> }>
const payload = (event: SseEvent | null): StreamResponse => JSON.parse((event as SseEvent).data) as StreamResponse
const kindOf = (event: SseEvent | null): string => Object.keys(payload(event))[0] ?? ''
const reasonOf = (json: unknown): string | undefined => (json as { error?: { details?: { reason: string }[] } }).error?.details?.[0]?.reason

for (const engine of testEngines()) {
  describe(`A2A v1.0 tenant twins of streams and push configs (${engine})`, () => {
    let app: TestApp
    let otherOperator: string
    let otherAgent: string
    beforeAll(async () => {
      app = await startTestApp({
        engine,
        a2aV1: { blockingTimeoutMs: 20_000, pollIntervalMs: 100, defaultRole: 'backend' },
        a2aV1Streams: { keepAliveMs: 50, pollIntervalMs: 100 },
        a2aV1Push: { allowedTargets: ['127.0.0.1/32'] },
      })
      otherOperator = (await app.tokens.create({ role: 'operator', tenant: 'other', expiresInSeconds: null })).token
      otherAgent = (await app.tokens.create({ role: 'agent', tenant: 'other', expiresInSeconds: null })).token
    })
    afterAll(async () => {
      await app.close()
    })

    const call = (method: string, path: string, body?: unknown, token: string = OPERATOR_TOKEN, headers: Record<string, string> = {}) =>
      rawRequest(app.url, { method, path, token, headers: { ...V1, ...headers }, ...(body !== undefined && { body: JSON.stringify(body) }) })
    /** The Bernstein task's lifecycle in tenant acme (the node's operator acting there). */
    const lifecycle = (linked: string, step: string, body: unknown) => call('POST', `/tasks/${linked}/${step}`, body, OPERATOR_TOKEN, { 'x-tenant-id': 'acme' })
    const subscribe = (method: 'GET' | 'POST', tenant: string, id: string, token: string = OPERATOR_TOKEN): Promise<SseStream> =>
      openSse(`${app.url}/a2a/v1/${tenant}/tasks/${id}:subscribe`, { method, token, ...(method === 'POST' && { body: {} }) })

    it('streams and subscribes under /a2a/v1/{tenant}/: that tenant s task and its events, no other tenant s', async () => {
      const stream = await openSse(`${app.url}/a2a/v1/acme/message:stream`, {
        method: 'POST',
        token: OPERATOR_TOKEN,
        body: { message: wireMessage('stream in acme') },
      })
      expect(stream.status).toBe(200)
      const first = await stream.next()
      expect(kindOf(first)).toBe('task')
      const task = payload(first)['task']
      const id = task?.id as string
      const linked = task?.metadata?.['bernstein.task_id'] as string
      expect(task?.status?.state).toBe('TASK_STATE_SUBMITTED')
      // The task is acme's: the twin of another tenant and the root (the default tenant) do not find it.
      expect((await call('GET', `/a2a/v1/acme/tasks/${id}`)).status).toBe(200)
      for (const method of ['GET', 'POST'] as const) {
        const elsewhere = await subscribe(method, 'other', id)
        expect(elsewhere.status).toBe(404)
        expect(reasonOf(JSON.parse(elsewhere.text as string))).toBe('TASK_NOT_FOUND')
      }
      const root = await openSse(`${app.url}/a2a/v1/tasks/${id}:subscribe`, { method: 'GET', token: OPERATOR_TOKEN })
      expect(root.status).toBe(404)
      const elsewhereStream = await openSse(`${app.url}/a2a/v1/other/message:stream`, {
        method: 'POST',
        token: OPERATOR_TOKEN,
        body: { message: { ...wireMessage('continue'), taskId: id } },
      })
      expect(elsewhereStream.status).toBe(404)
      expect(reasonOf(JSON.parse(elsewhereStream.text as string))).toBe('TASK_NOT_FOUND')
      // Tokens bound to another tenant may not name acme (403), on either twin of subscribe and on message:stream.
      expect((await subscribe('GET', 'acme', id, otherAgent)).status).toBe(403)
      expect((await subscribe('POST', 'acme', id, otherOperator)).status).toBe(403)
      const refused = await openSse(`${app.url}/a2a/v1/acme/message:stream`, {
        method: 'POST',
        token: otherOperator,
        body: { message: wireMessage('not mine') },
      })
      expect(refused.status).toBe(403)
      // Both subscribe twins in acme get the current task, then the events as a worker moves it.
      const subscribers = [await subscribe('GET', 'acme', id), await subscribe('POST', 'acme', id)]
      for (const subscriber of subscribers) expect(payload(await subscriber.next())['task']?.id).toBe(id)
      expect((await lifecycle(linked, 'claim', {})).status).toBe(200)
      for (const s of [stream, ...subscribers]) expect(payload(await s.next())['statusUpdate']?.status?.state).toBe('TASK_STATE_WORKING')
      expect((await lifecycle(linked, 'complete', { result_summary: 'done in acme' })).status).toBe(200)
      for (const s of [stream, ...subscribers]) {
        const rest = await s.rest()
        expect(rest.map(kindOf)).toEqual(['artifactUpdate', 'statusUpdate'])
        expect(payload(rest[1] ?? null)['statusUpdate']).toMatchObject({ taskId: id, status: { state: 'TASK_STATE_COMPLETED' } })
      }
    })

    it('creates, lists, reads and deletes push configs under /a2a/v1/{tenant}/, in that tenant only', async () => {
      const sent = await call('POST', '/a2a/v1/acme/message:send', { message: wireMessage('push in acme'), configuration: { returnImmediately: true } })
      expect(sent.status).toBe(200)
      const id = (sent.json as { task: { id: string } }).task.id
      const base = `/a2a/v1/acme/tasks/${id}/pushNotificationConfigs`
      const created = await call('POST', base, { id: 'twin', url: HOOK, token: 'notify' })
      expect(created.status).toBe(200)
      expect(created.json).toMatchObject({ id: 'twin', taskId: id, url: HOOK, token: 'notify' })
      const listed = await call('GET', base)
      expect((listed.json as { configs: { id: string }[] }).configs.map((c) => c.id)).toEqual(['twin'])
      expect((await call('GET', `${base}/twin`)).json).toMatchObject({ id: 'twin', taskId: id, url: HOOK })
      // Another tenant's twin, and the root in the default tenant, do not find acme's task; nothing changes.
      for (const [method, path, body] of [
        ['POST', `/a2a/v1/other/tasks/${id}/pushNotificationConfigs`, { url: HOOK }],
        ['GET', `/a2a/v1/other/tasks/${id}/pushNotificationConfigs`],
        ['GET', `/a2a/v1/other/tasks/${id}/pushNotificationConfigs/twin`],
        ['DELETE', `/a2a/v1/other/tasks/${id}/pushNotificationConfigs/twin`],
        ['GET', `/a2a/v1/tasks/${id}/pushNotificationConfigs/twin`],
      ] as const) {
        const res = await call(method, path, body)
        expect(res.status, `${method} ${path}`).toBe(404)
        expect(reasonOf(res.json)).toBe('TASK_NOT_FOUND')
      }
      // An operator token bound to another tenant naming acme: 403.
      expect((await call('POST', base, { url: HOOK }, otherOperator)).status).toBe(403)
      expect((await call('DELETE', `${base}/twin`, undefined, otherOperator)).status).toBe(403)
      // The root with x-tenant-id acme is the same tenant.
      expect((await call('GET', `/a2a/v1/tasks/${id}/pushNotificationConfigs/twin`, undefined, OPERATOR_TOKEN, { 'x-tenant-id': 'acme' })).status).toBe(200)
      expect((await call('GET', base)).json).toMatchObject({ configs: [{ id: 'twin' }] })
      expect((await call('DELETE', `${base}/twin`)).status).toBe(204)
      const gone = await call('GET', `${base}/twin`)
      expect(gone.status).toBe(404)
      expect((await call('GET', base)).json).toMatchObject({ configs: [] })
    })
  })
}
