/**
 * A2A v1.0 push notifications, as a user proves them: the official `@a2a-js/sdk` client manages configs over both
 * bindings; a worker's completion reaches a real receiver on loopback (allow-listed), signed by the node's key
 * (verified against its published JWKS) and with the configured authentication; a receiver that fails twice gets
 * the event on the third attempt, with the node restarted between attempts; the SSRF guard refuses internal
 * targets at creation and at delivery; bad input gets its documented error and changes nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type PushJwtClaims, verifyPushJwt } from '../../src/crypto/push-jwt.js'
import type { ResolveHost } from '../../src/a2a-v1/push/push-target-guard.js'
import { BINDINGS, clientFor } from '../helpers/a2a-sdk.js'
import { createTestDatabase, testEngines } from '../helpers/engines.js'
import { type PushReceiver, startPushReceiver } from '../helpers/push-receiver.js'
import { type TestApp, type TestAppOptions, publishedJwks, rawRequest, startTestApp } from '../helpers/test-app.js'
import { type StoreDump, openStoreDump } from '../security/support.js'

const V1 = { 'a2a-version': '1.0', 'content-type': 'application/json' }
/** Fast delivery for tests: the worker polls often and retries soon. */
const FAST = { pollIntervalMs: 20, retryBaseMs: 20, retryMaxMs: 200, timeoutMs: 10_000 }

/** Starts a test node whose push worker runs; stopping it is part of `close`. */
async function startPushApp(options: TestAppOptions): Promise<TestApp> {
  const app = await startTestApp(options)
  const worker = app.app.services.a2aV1PushDelivery
  worker.start()
  return {
    ...app,
    close: async () => {
      await worker.stop()
      await app.close()
    },
  }
}

async function rpc(app: TestApp, method: string, params: unknown, tenant = 'default') {
  const res = await rawRequest(app.url, {
    method: 'POST',
    path: '/a2a/v1',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    headers: { ...V1, 'x-tenant-id': tenant },
  })
  expect(res.status).toBe(200)
  return res.json as { result?: unknown; error?: { code: number; message: string; data: { reason: string; metadata?: Record<string, string> }[] } }
}

async function rest(app: TestApp, method: string, path: string, body?: unknown, tenant = 'default') {
  return rawRequest(app.url, { method, path, headers: { ...V1, 'x-tenant-id': tenant }, ...(body !== undefined && { body: JSON.stringify(body) }) })
}

/** A new A2A task (SendMessage, returnImmediately) and its linked Bernstein task. */
async function newTask(app: TestApp, tenant = 'default'): Promise<{ id: string; linked: string; contextId: string }> {
  const sent = await rpc(
    app,
    'SendMessage',
    { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'push me' }] }, configuration: { returnImmediately: true } },
    tenant,
  )
  const task = (sent.result as { task: { id: string; contextId: string; metadata: Record<string, string> } }).task
  return { id: task.id, linked: task.metadata['bernstein.task_id']!, contextId: task.contextId }
}

async function complete(app: TestApp, linked: string, summary: string, tenant = 'default'): Promise<void> {
  const res = await rawRequest(app.url, {
    method: 'POST',
    path: `/tasks/${linked}/complete`,
    headers: { 'x-tenant-id': tenant },
    body: JSON.stringify({ result_summary: summary }),
  })
  expect(res.status).toBe(200)
}

/** The task's deliveries once `n` exist and none is pending, passes of the worker run in between (no sleeping). */
async function settled(app: TestApp, a2aTaskId: string, n: number) {
  for (;;) {
    const deliveries = await app.store.repos.a2aV1Push.deliveriesOf('default', a2aTaskId)
    if (deliveries.length === n && deliveries.every((d) => d.status !== 'pending')) return deliveries
    await app.app.services.a2aV1PushDelivery.runDue()
  }
}

for (const engine of testEngines()) {
  describe(`A2A v1.0 push notifications (${engine})`, () => {
    let app: TestApp
    let receiver: PushReceiver
    beforeAll(async () => {
      receiver = await startPushReceiver()
      app = await startPushApp({ engine, a2aV1Push: { ...FAST, allowedTargets: ['127.0.0.1'] } })
    })
    afterAll(async () => {
      await app.close()
      await receiver.close()
    })

    for (const binding of BINDINGS) {
      it(`the official client creates, gets, lists and deletes configs over ${binding}`, async () => {
        const client = await clientFor(app, binding)
        const task = await newTask(app)
        const created = await client.createTaskPushNotificationConfig({
          tenant: '',
          id: '',
          taskId: task.id,
          url: `${receiver.url}?b=${binding}`,
          token: 'notify-token',
          authentication: { scheme: 'Bearer', credentials: 'receiver-secret' },
        } as never)
        expect(created.id).not.toBe('')
        expect(created).toMatchObject({ taskId: task.id, url: `${receiver.url}?b=${binding}`, token: 'notify-token' })
        expect(created.authentication).toEqual({ scheme: 'Bearer', credentials: 'receiver-secret' })
        const named = await client.createTaskPushNotificationConfig({ tenant: '', id: 'second', taskId: task.id, url: receiver.url, token: '' } as never)
        expect(named.id).toBe('second')
        const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id } as never)
        expect(got).toEqual(created)
        const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' } as never)
        expect(listed.configs.map((c) => c.id).sort()).toEqual([created.id, 'second'].sort())
        // Replacing by id keeps one config.
        await client.createTaskPushNotificationConfig({ tenant: '', id: 'second', taskId: task.id, url: `${receiver.url}/v2`, token: '' } as never)
        const replaced = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'second' } as never)
        expect(replaced.url).toBe(`${receiver.url}/v2`)
        await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id } as never)
        // Idempotent.
        await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id } as never)
        const after = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' } as never)
        expect(after.configs.map((c) => c.id)).toEqual(['second'])
        await expect(client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id } as never)).rejects.toMatchObject({
          name: 'TaskNotFoundError',
        })
      })
    }

    it('delivers the result artifact and the completion to the receiver, signed by the node and authenticated as configured', async () => {
      const task = await newTask(app)
      const before = receiver.received.length
      const url = `${receiver.url}?task=${task.id}`
      const created = await rpc(app, 'CreateTaskPushNotificationConfig', {
        taskId: task.id,
        url,
        token: 'notify-token',
        authentication: { scheme: 'Bearer', credentials: 'receiver-secret' },
      })
      expect(created.error).toBeUndefined()
      await complete(app, task.linked, 'pushed result')
      const got = (await receiver.waitFor(before + 2)).slice(before).filter((r) => r.path === `/hook?task=${task.id}`)
      expect(got).toHaveLength(2)
      const jwks = await publishedJwks(app.url)
      const bodies = got.map((r) => JSON.parse(r.body) as Record<string, Record<string, unknown>>)
      // In order: the result artifact, then the terminal status.
      expect(bodies[0]).toEqual({
        artifactUpdate: {
          taskId: task.id,
          contextId: task.contextId,
          artifact: { artifactId: `${task.id}-artifact-0`, name: 'result', parts: [{ text: 'pushed result', mediaType: 'text/plain' }] },
          append: false,
          lastChunk: true,
        },
      })
      expect(bodies[1]).toMatchObject({ statusUpdate: { taskId: task.id, contextId: task.contextId, status: { state: 'TASK_STATE_COMPLETED' } } })
      const ids = new Set<string>()
      for (const r of got) {
        expect(r.headers['content-type']).toBe('application/a2a+json')
        expect(r.headers['authorization']).toBe('Bearer receiver-secret')
        expect(r.headers['x-a2a-notification-token']).toBe('notify-token')
        const verdict = await verifyPushJwt(String(r.headers['a2a-notification-signature']), r.body, jwks, { nowSeconds: Date.now() / 1000, audience: url })
        expect(verdict.ok).toBe(true)
        const claims = (verdict as { value: PushJwtClaims }).value
        expect(claims).toMatchObject({ iss: 'http://bernstein.test', taskId: task.id })
        ids.add(claims.jti)
        // A body changed in transit, or a JWKS without the key, does not verify.
        expect((await verifyPushJwt(String(r.headers['a2a-notification-signature']), `${r.body} `, jwks, { nowSeconds: Date.now() / 1000 })).ok).toBe(false)
        expect((await verifyPushJwt(String(r.headers['a2a-notification-signature']), r.body, { keys: [] }, { nowSeconds: Date.now() / 1000 })).ok).toBe(false)
      }
      expect(ids.size).toBe(2)
      const deliveries = await app.store.repos.a2aV1Push.deliveriesOf('default', task.id)
      expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([
        ['delivered', 1],
        ['delivered', 1],
      ])
    })

    it('a config sent inline with SendMessage is stored with the task, and its events are delivered', async () => {
      const url = `${receiver.url}?inline`
      const sent = await rpc(app, 'SendMessage', {
        message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'push me inline' }] },
        configuration: { returnImmediately: true, taskPushNotificationConfig: { id: 'inline', url, token: 'inline-token' } },
      })
      const task = (sent.result as { task: { id: string; metadata: Record<string, string> } }).task
      const listed = await rpc(app, 'ListTaskPushNotificationConfigs', { taskId: task.id })
      expect((listed.result as { configs: unknown[] }).configs).toEqual([{ id: 'inline', taskId: task.id, url, token: 'inline-token' }])
      const before = receiver.received.length
      await complete(app, task.metadata['bernstein.task_id']!, 'done inline')
      const got = (await receiver.waitFor(before + 2)).slice(before).filter((r) => r.path === '/hook?inline')
      expect(got.map((r) => Object.keys(JSON.parse(r.body) as object)[0])).toEqual(['artifactUpdate', 'statusUpdate'])
      expect(got.every((r) => r.headers['x-a2a-notification-token'] === 'inline-token')).toBe(true)
    })

    it('a cancellation is pushed too, and a deleted config gets nothing more', async () => {
      const task = await newTask(app)
      const other = await newTask(app)
      const url = `${receiver.url}?cancel=${task.id}`
      await rest(app, 'POST', `/a2a/v1/tasks/${task.id}/pushNotificationConfigs`, { url, id: 'keep' })
      await rest(app, 'POST', `/a2a/v1/tasks/${other.id}/pushNotificationConfigs`, { url: `${receiver.url}?gone`, id: 'gone' })
      expect((await rest(app, 'DELETE', `/a2a/v1/tasks/${other.id}/pushNotificationConfigs/gone`)).status).toBe(204)
      const before = receiver.received.length
      await complete(app, other.linked, 'unheard')
      expect((await rest(app, 'POST', `/a2a/v1/tasks/${task.id}:cancel`, {})).status).toBe(200)
      const got = await receiver.waitFor(before + 2)
      const mine = got.slice(before).map((r) => ({ path: r.path, body: JSON.parse(r.body) as Record<string, unknown> }))
      expect(mine.map((m) => m.path)).toEqual([`/hook?cancel=${task.id}`, `/hook?cancel=${task.id}`])
      expect(mine[1]?.body).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_CANCELED' } } })
      expect(await app.store.repos.a2aV1Push.deliveriesOf('default', other.id)).toEqual([])
    })
  })

  describe(`A2A v1.0 push delivery retries across a restart (${engine})`, () => {
    const closing: (() => Promise<void>)[] = []
    afterEach(async () => {
      for (const close of closing.splice(0).reverse()) await close()
    })

    it('a receiver that fails twice gets the event on the third attempt, the node restarted in between', async () => {
      const receiver = await startPushReceiver([503, 503])
      closing.push(() => receiver.close())
      const database = await createTestDatabase(engine)
      closing.push(() => database.drop())
      // The first node waits a minute after a failure, so that the second attempt is the restarted node's.
      const first = await startPushApp({ engine, database, a2aV1Push: { ...FAST, retryBaseMs: 60_000, allowedTargets: ['127.0.0.1/32'] } })
      let firstClosed = false
      closing.push(async () => {
        if (!firstClosed) await first.close()
      })
      const task = await newTask(first)
      expect((await rest(first, 'POST', `/a2a/v1/tasks/${task.id}/pushNotificationConfigs`, { url: receiver.url })).status).toBe(200)
      await complete(first, task.linked, 'eventually')
      await receiver.waitFor(1)
      await first.close()
      firstClosed = true
      // The clock of the second node is two minutes ahead: the persisted retry is due at once.
      const ahead = { now: () => Date.now() / 1000 + 120, nowNs: () => BigInt(Date.now() + 120_000) * 1_000_000n }
      const second = await startTestApp({ engine, database, clock: ahead, a2aV1Push: { ...FAST, allowedTargets: ['127.0.0.1/32'] } })
      closing.push(() => second.close())
      const pending = await second.store.repos.a2aV1Push.deliveriesOf('default', task.id)
      expect(pending.map((d) => [d.status, d.attempts])).toEqual([
        ['pending', 1],
        ['pending', 0],
      ])
      expect(pending[0]?.lastError).toContain('503')
      const worker = second.app.services.a2aV1PushDelivery
      worker.start()
      closing.push(() => worker.stop())
      const got = await receiver.waitFor(4)
      expect(got.slice(0, 3).map((r) => r.body)).toEqual([got[0]?.body, got[0]?.body, got[0]?.body])
      expect(JSON.parse(got[0]!.body)).toHaveProperty('artifactUpdate')
      expect(JSON.parse(got[3]!.body)).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } })
      const jtis = got.map((r) => JSON.parse(Buffer.from(String(r.headers['a2a-notification-signature']).split('.')[1]!, 'base64url').toString()).jti)
      expect(new Set(jtis.slice(0, 3)).size).toBe(1)
      expect(jtis[3]).not.toBe(jtis[0])
      await worker.stop()
      const done = await second.store.repos.a2aV1Push.deliveriesOf('default', task.id)
      expect(done.map((d) => [d.status, d.attempts])).toEqual([
        ['delivered', 3],
        ['delivered', 1],
      ])
    })
  })

  describe(`A2A v1.0 push SSRF guard and bad input (${engine})`, () => {
    let app: TestApp
    let dump: StoreDump
    /** Names the tests resolve: `public.test` to a public address, `rebind.test` to a public one first, then loopback. */
    const lookups = new Map<string, number>()
    const resolveHost: ResolveHost = async (host) => {
      lookups.set(host, (lookups.get(host) ?? 0) + 1)
      if (host === 'public.test') return [{ address: '93.184.216.34' }]
      if (host === 'rebind.test') return [{ address: (lookups.get(host) ?? 0) > 1 ? '127.0.0.1' : '93.184.216.34' }]
      if (host === 'localhost') return [{ address: '127.0.0.1' }, { address: '::1' }]
      throw new Error('ENOTFOUND')
    }
    const fetched: { url: string; redirect: RequestInit['redirect'] }[] = []
    const fetchSpy: typeof fetch = async (input, init) => {
      fetched.push({ url: String(input), redirect: init?.redirect })
      if (String(input).startsWith('https://public.test/moved')) return new Response(null, { status: 302, headers: { location: 'http://127.0.0.1/' } })
      return new Response('ok', { status: 200 })
    }
    beforeAll(async () => {
      app = await startPushApp({ engine, a2aV1Push: { ...FAST, resolveHost, fetch: fetchSpy } })
      dump = await openStoreDump(app)
    })
    afterAll(async () => {
      await dump.close()
      await app.close()
    })

    it.each([
      ['loopback', 'http://127.0.0.1:8080/hook'],
      ['a private address', 'http://10.1.2.3/hook'],
      ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data'],
      ['IPv6 loopback', 'http://[::1]:8080/hook'],
      ['an IPv4-mapped private address', 'http://[::ffff:192.168.1.1]/hook'],
      ['a host name resolving to loopback', 'http://localhost:8080/hook'],
    ])('refuses %s at config creation on both bindings, and stores nothing', async (_name, url) => {
      const task = await newTask(app)
      const before = await dump.dump()
      const answer = await rpc(app, 'CreateTaskPushNotificationConfig', { taskId: task.id, url })
      expect(answer.error?.code).toBe(-32602)
      expect(answer.error?.data[0]).toMatchObject({ reason: 'INVALID_PARAMS', metadata: { field: 'url', reason: 'forbidden_address' } })
      expect(answer.error?.message).toContain('BERNSTEIN_A2A_PUSH_ALLOWED_TARGETS')
      const res = await rest(app, 'POST', `/a2a/v1/tasks/${task.id}/pushNotificationConfigs`, { url })
      expect(res.status).toBe(400)
      expect(res.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', details: [{ reason: 'INVALID_PARAMS', metadata: { field: 'url' } }] } })
      expect(await dump.dump()).toEqual(before)
    })

    it('an inline config with a forbidden URL refuses the SendMessage, and no task is made', async () => {
      const before = await dump.dump()
      const sent = await rpc(app, 'SendMessage', {
        message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'no' }] },
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: 'http://169.254.169.254/latest' } },
      })
      expect(sent.error?.code).toBe(-32602)
      expect(await dump.dump()).toEqual(before)
    })

    it('refuses at delivery a host that has come to resolve to loopback, without connecting', async () => {
      const task = await newTask(app)
      const created = await rpc(app, 'CreateTaskPushNotificationConfig', { taskId: task.id, url: 'http://rebind.test/hook' })
      expect(created.error).toBeUndefined()
      await complete(app, task.linked, 'done')
      const deliveries = await settled(app, task.id, 2)
      expect(deliveries.map((d) => d.status)).toEqual(['failed', 'failed'])
      expect(deliveries[0]?.lastError).toContain('SSRF guard')
      expect(fetched.filter((f) => f.url.includes('rebind.test'))).toEqual([])
    })

    it('delivers to a public host through the injected fetch, redirects not followed', async () => {
      const task = await newTask(app)
      expect((await rpc(app, 'CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://public.test/hook' })).error).toBeUndefined()
      await complete(app, task.linked, 'done')
      const deliveries = await settled(app, task.id, 2)
      expect(deliveries.map((d) => d.status)).toEqual(['delivered', 'delivered'])
      expect(fetched.filter((f) => f.url === 'https://public.test/hook')).toEqual([
        { url: 'https://public.test/hook', redirect: 'manual' },
        { url: 'https://public.test/hook', redirect: 'manual' },
      ])
      // A receiver that redirects: not followed, and final at once (no retry).
      const moved = await newTask(app)
      expect((await rpc(app, 'CreateTaskPushNotificationConfig', { taskId: moved.id, url: 'https://public.test/moved' })).error).toBeUndefined()
      await complete(app, moved.linked, 'done')
      const refused = await settled(app, moved.id, 2)
      expect(refused.map((d) => [d.status, d.attempts])).toEqual([
        ['failed', 1],
        ['failed', 1],
      ])
      expect(refused[0]?.lastError).toContain('redirects are not followed')
      expect(fetched.filter((f) => f.url === 'http://127.0.0.1/')).toEqual([])
    })

    it.each([
      ['an unknown task', (id: string) => ({ taskId: `${id}-nope`, url: 'https://public.test/h' }), -32001, 'TASK_NOT_FOUND'],
      ['a URL that is not one', (id: string) => ({ taskId: id, url: 'not a url' }), -32602, 'INVALID_PARAMS'],
      ['an ftp URL', (id: string) => ({ taskId: id, url: 'ftp://public.test/h' }), -32602, 'INVALID_PARAMS'],
      ['a URL with user info', (id: string) => ({ taskId: id, url: 'https://user:pw@public.test/h' }), -32602, 'INVALID_PARAMS'],
      ['no taskId', (_id: string) => ({ url: 'https://public.test/h' }), -32602, 'INVALID_PARAMS'],
      ['no url', (id: string) => ({ taskId: id }), -32602, 'INVALID_PARAMS'],
      ['a url that is a number', (id: string) => ({ taskId: id, url: 7 }), -32602, 'INVALID_PARAMS'],
      [
        'a scheme with a space',
        (id: string) => ({ taskId: id, url: 'https://public.test/h', authentication: { scheme: 'Bad scheme' } }),
        -32602,
        'INVALID_PARAMS',
      ],
      [
        'credentials with a line break',
        (id: string) => ({ taskId: id, url: 'https://public.test/h', authentication: { scheme: 'Bearer', credentials: 'a\r\nX-Evil: 1' } }),
        -32602,
        'INVALID_PARAMS',
      ],
      ['an id with a slash', (id: string) => ({ taskId: id, id: 'a/b', url: 'https://public.test/h' }), -32602, 'INVALID_PARAMS'],
    ] as const)('CreateTaskPushNotificationConfig with %s is refused and changes nothing', async (_name, params, code, reason) => {
      const task = await newTask(app)
      const before = await dump.dump()
      const answer = await rpc(app, 'CreateTaskPushNotificationConfig', params(task.id))
      expect(answer.error?.code).toBe(code)
      expect(answer.error?.data[0]?.reason).toBe(reason)
      expect(await dump.dump()).toEqual(before)
    })

    it('a host that does not resolve now is stored (each delivery checks it again), under taskId or task_id', async () => {
      const task = await newTask(app)
      const created = await rpc(app, 'CreateTaskPushNotificationConfig', { taskId: task.id, id: 'later', url: 'https://nowhere.invalid/h' })
      expect(created.error).toBeUndefined()
      const proto = await rpc(app, 'CreateTaskPushNotificationConfig', { task_id: task.id, id: 'proto', url: 'https://public.test/h' })
      expect(proto.error).toBeUndefined()
      const listed = await rpc(app, 'ListTaskPushNotificationConfigs', { task_id: task.id })
      expect((listed.result as { configs: { id: string; url: string }[] }).configs.map((c) => [c.id, c.url])).toEqual([
        ['later', 'https://nowhere.invalid/h'],
        ['proto', 'https://public.test/h'],
      ])
    })

    it('another tenant s task is not found on every operation and both bindings, and nothing changes', async () => {
      const task = await newTask(app, 'push-owner')
      expect(
        (await rest(app, 'POST', `/a2a/v1/tasks/${task.id}/pushNotificationConfigs`, { url: 'https://public.test/h', id: 'c1' }, 'push-owner')).status,
      ).toBe(200)
      const before = await dump.dump()
      for (const [method, params] of [
        ['CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://public.test/x' }],
        ['GetTaskPushNotificationConfig', { taskId: task.id, id: 'c1' }],
        ['ListTaskPushNotificationConfigs', { taskId: task.id }],
        ['DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'c1' }],
      ] as const) {
        const answer = await rpc(app, method, params, 'push-intruder')
        expect(answer.error?.code, method).toBe(-32001)
      }
      const base = `/a2a/v1/tasks/${task.id}/pushNotificationConfigs`
      for (const [method, path, body] of [
        ['POST', base, { url: 'https://public.test/x' }],
        ['GET', base, undefined],
        ['GET', `${base}/c1`, undefined],
        ['DELETE', `${base}/c1`, undefined],
      ] as const) {
        const res = await rest(app, method, path, body, 'push-intruder')
        expect(res.status, `${method} ${path}`).toBe(404)
        expect(res.json).toMatchObject({ error: { status: 'NOT_FOUND', details: [{ reason: 'TASK_NOT_FOUND' }] } })
      }
      expect(await dump.dump()).toEqual(before)
      // The owner still has it.
      expect((await rest(app, 'GET', `${base}/c1`, undefined, 'push-owner')).status).toBe(200)
    })

    it('HTTP+JSON refuses a taskId that is not the path s, a malformed body, and an agent token', async () => {
      const task = await newTask(app)
      const agent = await app.tokens.create({ role: 'agent', tenant: 'default', expiresInSeconds: null })
      const before = await dump.dump()
      const base = `/a2a/v1/tasks/${task.id}/pushNotificationConfigs`
      const mismatch = await rest(app, 'POST', base, { taskId: 'other', url: 'https://public.test/h' })
      expect(mismatch.status).toBe(400)
      expect(mismatch.json).toMatchObject({ error: { details: [{ reason: 'INVALID_PARAMS', metadata: { field: 'taskId' } }] } })
      const noUrl = await rest(app, 'POST', base, { token: 'x' })
      expect(noUrl.status).toBe(400)
      expect(noUrl.json).toMatchObject({ error: { status: 'INVALID_ARGUMENT' } })
      const forbidden = await rawRequest(app.url, { method: 'GET', path: base, headers: V1, token: agent.token })
      expect(forbidden.status).toBe(403)
      const unknownConfig = await rest(app, 'GET', `${base}/nope`)
      expect(unknownConfig.status).toBe(404)
      expect(unknownConfig.json).toMatchObject({ error: { details: [{ reason: 'TASK_NOT_FOUND', metadata: { configId: 'nope' } }] } })
      expect(await dump.dump()).toEqual(before)
    })
  })
}
