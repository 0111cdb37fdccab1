/**
 * A2A v1.0 streaming (SendStreamingMessage, SubscribeToTask) as clients use it: the official `@a2a-js/sdk` client
 * over both bindings while a worker moves the task through the lifecycle API, a reconnection with `Last-Event-ID`,
 * concurrent streams, a reader too slow for its buffer, the drain, the request deadline, and bad input.
 */
import type { Client } from '@a2a-js/sdk/client'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { markDraining } from '../../src/server.js'
import { BINDINGS, type Binding, clientFor, userMessage } from '../helpers/a2a-sdk.js'
import { testEngines } from '../helpers/engines.js'
import { type SseEvent, openSse } from '../helpers/sse.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

/** The client of the node's card over one binding, after checking that the card declares streaming. */
async function streamingClient(app: TestApp, binding: Binding): Promise<Client> {
  const card = (await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent-card.json', token: null })).json as {
    capabilities: { streaming?: boolean }
  }
  expect(card.capabilities.streaming).toBe(true)
  return clientFor(app, binding)
}

let seq = 0
const wireMessage = (text: string) => ({ messageId: `w-${++seq}-${Date.now()}`, role: 'ROLE_USER', parts: [{ text }] })

async function operator(app: TestApp, method: string, path: string, body?: unknown) {
  return rawRequest(app.url, { method, path, ...(body !== undefined && { body: JSON.stringify(body) }) })
}

/** A task created without blocking (JSON over HTTP+JSON), with its linked Bernstein task. */
async function newTask(app: TestApp, text = 'stream me'): Promise<{ id: string; linked: string }> {
  const res = await rawRequest(app.url, {
    method: 'POST',
    path: '/a2a/v1/message:send',
    headers: { 'a2a-version': '1.0' },
    body: JSON.stringify({ message: wireMessage(text), configuration: { returnImmediately: true } }),
  })
  expect(res.status).toBe(200)
  const task = (res.json as { task: { id: string; metadata: Record<string, string> } }).task
  return { id: task.id, linked: task.metadata['bernstein.task_id'] as string }
}

/** The StreamResponse of an event of either binding (JSON-RPC wraps it in a response). */
function payload(event: SseEvent | null): Record<string, { status?: { state: string }; artifact?: { parts: { text?: string }[] } }> {
  expect(event).not.toBeNull()
  const data = JSON.parse((event as SseEvent).data) as Record<string, unknown>
  return (data['jsonrpc'] === '2.0' ? data['result'] : data) as never
}

function subscribe(app: TestApp, binding: Binding, id: string, headers: Record<string, string> = {}) {
  return binding === 'JSONRPC'
    ? openSse(`${app.url}/a2a/v1`, {
        method: 'POST',
        token: OPERATOR_TOKEN,
        headers,
        body: { jsonrpc: '2.0', id: 7, method: 'SubscribeToTask', params: { id } },
      })
    : openSse(`${app.url}/a2a/v1/tasks/${id}:subscribe`, { method: 'GET', token: OPERATOR_TOKEN, headers })
}

const kindOf = (event: SseEvent | null): string => Object.keys(payload(event))[0] ?? ''
const stateOf = (event: SseEvent | null): string | undefined => payload(event)['statusUpdate']?.status?.state ?? payload(event)['task']?.status?.state

for (const engine of testEngines()) {
  describe(`A2A v1.0 streaming (${engine})`, () => {
    let app: TestApp
    const warnings: { obj: Record<string, unknown>; msg: string | undefined }[] = []
    beforeAll(async () => {
      app = await startTestApp({
        engine,
        a2aV1: { blockingTimeoutMs: 20_000, pollIntervalMs: 100, defaultRole: 'backend' },
        a2aV1Streams: { keepAliveMs: 50, pollIntervalMs: 100, maxBufferBytes: 64 * 1024 },
        logger: {
          error() {},
          info() {},
          debug() {},
          warn: (obj, msg) => void warnings.push({ obj: obj as Record<string, unknown>, msg }),
        },
        // A stream outlives the request deadline: it is not an answer that is late.
        admission: { maxWritesInFlight: 1, requestDeadlineMs: 300 },
      })
    })
    afterAll(async () => {
      await app.close()
    })

    for (const binding of BINDINGS) {
      describe(binding, () => {
        it('streams to completion through the SDK while a worker claims, reports and completes the task', async () => {
          const client = await streamingClient(app, binding)
          const role = `stream-${binding === 'JSONRPC' ? 'rpc' : 'rest'}`
          const stream = client.sendMessageStream({ message: userMessage('stream this'), metadata: { 'bernstein.role': role } } as never)
          const events = stream[Symbol.asyncIterator]()
          const first = (await events.next()).value as { payload: { $case: string; value: { id: string; status: { state: number } } } }
          expect(first.payload.$case).toBe('task')
          expect(first.payload.value.status.state).toBe(1 /* SUBMITTED */)
          const claimed = await operator(app, 'GET', `/tasks/next/${role}`)
          expect(claimed.status).toBe(200)
          const linked = (claimed.json as { id: string }).id
          const working = (await events.next()).value as { payload: { $case: string; value: { taskId: string; status: { state: number } } } }
          expect(working.payload).toMatchObject({ $case: 'statusUpdate', value: { taskId: first.payload.value.id, status: { state: 2 /* WORKING */ } } })
          expect((await operator(app, 'POST', `/tasks/${linked}/progress`, { message: 'half way' })).status).toBe(200)
          expect((await operator(app, 'POST', `/tasks/${linked}/complete`, { result_summary: 'streamed result' })).status).toBe(200)
          const rest: { payload: { $case: string; value: Record<string, unknown> } }[] = []
          for (let next = await events.next(); next.done !== true; next = await events.next()) rest.push(next.value as never)
          expect(rest.map((e) => e.payload.$case)).toEqual(['artifactUpdate', 'statusUpdate'])
          expect(rest[0]?.payload.value).toMatchObject({ artifact: { parts: [{ content: { $case: 'text', value: 'streamed result' } }] } })
          expect(rest[1]?.payload.value).toMatchObject({ status: { state: 3 /* COMPLETED */ } })
        })

        it('resubscribes after a dropped connection and gets the missed events (Last-Event-ID)', async () => {
          const task = await newTask(app)
          const first = await subscribe(app, binding, task.id)
          expect(first.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
          const current = await first.next()
          expect(kindOf(current)).toBe('task')
          expect((await operator(app, 'POST', `/tasks/${task.linked}/claim`, {})).status).toBe(200)
          const working = await first.next()
          expect(stateOf(working)).toBe('TASK_STATE_WORKING')
          first.close()
          // Missed while disconnected: the result artifact and the completion.
          expect((await operator(app, 'POST', `/tasks/${task.linked}/complete`, { result_summary: 'while away' })).status).toBe(200)
          const again = await subscribe(app, binding, task.id, { 'last-event-id': String(working?.id) })
          const missed = await again.rest()
          expect(missed.map(kindOf)).toEqual(['artifactUpdate', 'statusUpdate'])
          expect(missed.map((e) => Number(e.id))).toEqual([Number(working?.id) + 1, Number(working?.id) + 2])
          expect(stateOf(missed[1] ?? null)).toBe('TASK_STATE_COMPLETED')
          // A client that had everything gets an empty, ended stream; one that had nothing may not subscribe to a finished task.
          expect(await (await subscribe(app, binding, task.id, { 'last-event-id': String(missed[1]?.id) })).rest()).toEqual([])
          const finished = await subscribe(app, binding, task.id)
          expect(finished.text).toContain(binding === 'JSONRPC' ? '-32004' : 'UNSUPPORTED_OPERATION')
        })

        it('resubscribes through the SDK: the current Task first, then the rest', async () => {
          const client = await streamingClient(app, binding)
          const task = await newTask(app)
          const events = client.resubscribeTask({ id: task.id } as never)[Symbol.asyncIterator]()
          const first = (await events.next()).value as { payload: { $case: string; value: { id: string } } }
          expect(first.payload).toMatchObject({ $case: 'task', value: { id: task.id } })
          expect((await operator(app, 'POST', `/tasks/${task.linked}/fail`, { reason: 'no luck' })).status).toBe(200)
          const cases: string[] = []
          for (let next = await events.next(); next.done !== true; next = await events.next())
            cases.push((next.value as { payload: { $case: string } }).payload.$case)
          expect(cases).toEqual(['artifactUpdate', 'statusUpdate'])
          await expect(async () => {
            for await (const _ of client.resubscribeTask({ id: task.id } as never)) break
          }).rejects.toMatchObject({ name: 'UnsupportedOperationError' })
          await expect(async () => {
            for await (const _ of client.resubscribeTask({ id: 'no-such-task' } as never)) break
          }).rejects.toMatchObject({ name: 'TaskNotFoundError' })
        })

        it('gives concurrent streams of one task the same events in the same order', async () => {
          const task = await newTask(app)
          // One after the other: the app admits one write at a time, and a stream's slot is released once it started.
          const streams = []
          for (let i = 0; i < 3; i++) streams.push(await subscribe(app, binding, task.id))
          for (const s of streams) expect(kindOf(await s.next())).toBe('task')
          for (let i = 0; i < 3; i++) {
            expect(
              (await operator(app, 'POST', `/a2a/tasks/${task.id}/artifacts`, { name: `part-${i}`, data: `chunk ${i}`, content_type: 'text/plain' })).status,
            ).toBe(201)
          }
          expect((await operator(app, 'POST', `/tasks/${task.linked}/complete`, { result_summary: 'together' })).status).toBe(200)
          const seen = await Promise.all(streams.map((s) => s.rest()))
          expect(seen[0]?.map(kindOf)).toEqual(['artifactUpdate', 'artifactUpdate', 'artifactUpdate', 'artifactUpdate', 'statusUpdate'])
          expect(seen[1]).toEqual(seen[0])
          expect(seen[2]).toEqual(seen[0])
        })
      })
    }

    it('keeps a stream open past the request deadline, with keep-alive comments, and not as a write in flight', async () => {
      const task = await newTask(app)
      const stream = await openSse(`${app.url}/a2a/v1/message:stream`, { method: 'POST', token: OPERATOR_TOKEN, body: { message: wireMessage('long one') } })
      const first = await stream.next()
      const id = (payload(first)['task'] as unknown as { id: string }).id
      // Keep-alives every 50 ms: ten of them is well past the 300 ms deadline.
      await stream.untilComments(10)
      expect(stream.comments.slice(0, 10)).toEqual(Array(10).fill('keep-alive'))
      // The stream's write slot was released: another write (the admission allows one) is served.
      expect((await operator(app, 'POST', `/tasks/${task.linked}/claim`, {})).status).toBe(200)
      const linked = String((payload(first)['task'] as unknown as { metadata: Record<string, string> }).metadata['bernstein.task_id'])
      expect((await operator(app, 'POST', `/tasks/${linked}/complete`, { result_summary: 'late but fine' })).status).toBe(200)
      const rest = await stream.rest()
      expect(rest.map(kindOf)).toEqual(['artifactUpdate', 'statusUpdate'])
      expect(stateOf(rest[1] ?? null)).toBe('TASK_STATE_COMPLETED')
      expect(rest.every((e) => JSON.stringify(payload(e)).includes(id))).toBe(true)
    })

    it('disconnects a reader that falls behind by more than its buffer, with a logged reason', async () => {
      const task = await newTask(app)
      const url = new URL(app.url)
      // A reader that never reads: paused from the start, so the kernel's buffers fill, then the server's.
      const connection = connect({ host: url.hostname, port: Number(url.port), noDelay: true })
      connection.pause()
      await new Promise<void>((resolve) => connection.once('connect', resolve))
      connection.write(
        `GET /a2a/v1/tasks/${task.id}:subscribe HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${OPERATOR_TOKEN}\r\nA2A-Version: 1.0\r\nAccept: text/event-stream\r\n\r\n`,
      )
      const big = 'x'.repeat(900_000)
      let added = 0
      while (!warnings.some((w) => w.obj['reason'] === 'slow_reader') && added < 17) {
        expect((await operator(app, 'POST', `/a2a/tasks/${task.id}/artifacts`, { name: `big-${added}`, data: big, content_type: 'text/plain' })).status).toBe(
          201,
        )
        added++
        await new Promise((r) => setTimeout(r, 150))
      }
      const warning = warnings.find((w) => w.obj['reason'] === 'slow_reader')
      expect(warning).toBeDefined()
      // What it held unsent stayed within the buffer plus the one event that crossed it.
      expect(Number(warning?.obj['buffered_bytes'])).toBeLessThan(64 * 1024 + 1_000_000)
      expect(warning?.obj['operation']).toBe('GET /a2a/v1/tasks/{a2a_task_id}:subscribe')
      connection.destroy()
    })

    it('ends open streams cleanly when the node drains', async () => {
      const task = await newTask(app)
      const stream = await subscribe(app, 'HTTP+JSON', task.id)
      expect(kindOf(await stream.next())).toBe('task')
      const open = app.app.streams.open
      expect(open).toBeGreaterThan(0)
      markDraining(app.app, { closing: false, refusing: false })
      expect(await stream.next()).toBeNull()
      expect(stream.comments.at(-1)).toContain('reconnect with Last-Event-ID')
      expect(app.app.streams.open).toBe(0)
    })
  })
}
