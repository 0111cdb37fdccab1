import type { IncomingHttpHeaders } from 'node:http'
import type { Caller } from '../auth/caller.js'
import { AppError } from '../errors.js'
import { type HttpInput, type RouteDefinition, route } from '../http/route.js'
import type { SseFrame, StreamReply } from '../http/sse.js'
import { type A2AErrorFormat, renderA2AError } from './a2a-v1-error-render.js'
import { A2AProtocolError } from './a2a-v1-errors.js'
import type { JsonRpcId } from './jsonrpc.js'
import type { A2AV1Streams, TaskStreamEvent } from './streaming.js'
import { restCaller } from './tenant-scope.js'
import { assertSupportedVersion } from './version.js'
import { assertOperator, v1Caller } from './callers.js'

/** The `Last-Event-ID` of a reconnecting client (the contract checks its form on the operations that declare it). */
export function lastEventIdOf(headers: IncomingHttpHeaders): number | undefined {
  const raw = headers['last-event-id']
  const value = Array.isArray(raw) ? raw.join(',') : raw
  if (value === undefined || value === '') return undefined
  if (!/^[0-9]{1,15}$/.test(value)) throw new A2AProtocolError('InvalidParams', 'Last-Event-ID is not an event id of this node', { field: 'Last-Event-ID' })
  return Number(value)
}

/**
 * A task's events as a Server-Sent Events reply in a binding's dialect: for JSON-RPC each `data:` is a JSON-RPC
 * response (`id` the request's) with the StreamResponse as `result`; for HTTP+JSON the bare StreamResponse. A
 * failure after the stream started is one last event: a JSON-RPC error response, or `event: error` with a
 * `google.rpc.Status`.
 */
export function streamReply(
  streams: A2AV1Streams,
  events: AsyncGenerator<TaskStreamEvent>,
  format: A2AErrorFormat,
  request: { readonly body: unknown; readonly id: JsonRpcId; readonly accept: string | undefined },
): StreamReply {
  const frames: AsyncIterator<SseFrame> = {
    async next() {
      const next = await events.next()
      if (next.done === true) return { done: true, value: undefined }
      const { id, data } = next.value
      const body = format === 'a2a-jsonrpc' ? { jsonrpc: '2.0', id: request.id, result: data } : data
      return { done: false, value: { id, data: JSON.stringify(body) } }
    },
    async return() {
      await events.return(undefined)
      return { done: true, value: undefined }
    },
  }
  return {
    status: 200,
    stream: {
      events: frames,
      keepAliveMs: streams.options.keepAliveMs,
      maxBufferBytes: streams.options.maxBufferBytes,
      maxDurationMs: streams.options.maxDurationMs,
      failure: (error) => {
        const rendered = renderA2AError(format, error, error instanceof AppError ? error : null, request)
        const data = JSON.stringify(rendered.body)
        return format === 'a2a-jsonrpc' ? { data } : { event: 'error', data }
      },
    },
  }
}

/**
 * The HTTP+JSON streaming operations: `message:stream` and `tasks/{id}:subscribe` (POST, the spec's text; GET, its
 * proto's rule), each at the root and under `/{tenant}/` (the same handler; the caller scoped to the path's tenant).
 */
export function a2aV1StreamRoutes(streams: A2AV1Streams): RouteDefinition[] {
  const rest = (headers: IncomingHttpHeaders, body: unknown) => ({ body, id: null, accept: headers.accept })
  const send = async (input: HttpInput<'a2aV1SendStreamingMessage'> | HttpInput<'a2aV1SendStreamingMessageForTenant'>) => {
    assertSupportedVersion(input.headers['a2a-version'], input.query['A2A-Version'])
    return streamReply(streams, await streams.sendStreaming(v1Caller(restCaller(input)), input.body), 'a2a-rest', rest(input.headers, input.body))
  }
  const subscribe = async (
    input:
      | HttpInput<'a2aV1SubscribeToTask'>
      | HttpInput<'a2aV1SubscribeToTaskForTenant'>
      | HttpInput<'a2aV1SubscribeToTaskGet'>
      | HttpInput<'a2aV1SubscribeToTaskGetForTenant'>,
  ) => {
    assertSupportedVersion(input.headers['a2a-version'], input.query['A2A-Version'])
    const events = await streams.subscribe(restCaller(input), input.params.a2a_task_id, lastEventIdOf(input.headers))
    return streamReply(streams, events, 'a2a-rest', rest(input.headers, input.body))
  }
  return [
    route('a2aV1SendStreamingMessage', 'post', '/a2a/v1/message:stream', send),
    route('a2aV1SendStreamingMessageForTenant', 'post', '/a2a/v1/{a2a_tenant}/message:stream', send),
    route('a2aV1SubscribeToTask', 'post', '/a2a/v1/tasks/{a2a_task_id}:subscribe', subscribe),
    route('a2aV1SubscribeToTaskForTenant', 'post', '/a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}:subscribe', subscribe),
    route('a2aV1SubscribeToTaskGet', 'get', '/a2a/v1/tasks/{a2a_task_id}:subscribe', subscribe),
    route('a2aV1SubscribeToTaskGetForTenant', 'get', '/a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}:subscribe', subscribe),
  ]
}

/** The JSON-RPC streaming methods, by name: the params as the contract checked them, the caller, the request's headers. */
const JSON_RPC_STREAM_METHODS: Readonly<
  Record<
    string,
    (streams: A2AV1Streams, params: Record<string, unknown>, caller: Caller, headers: IncomingHttpHeaders) => Promise<AsyncGenerator<TaskStreamEvent>>
  >
> = {
  SendStreamingMessage: (streams, params, caller) => {
    assertOperator(caller, 'SendStreamingMessage')
    return streams.sendStreaming(v1Caller(caller), params as Parameters<A2AV1Streams['sendStreaming']>[1])
  },
  SubscribeToTask: (streams, params, caller, headers) => streams.subscribe(caller, String(params['id']), lastEventIdOf(headers)),
}

/**
 * A JSON-RPC request for a streaming method (`SendStreamingMessage`, `SubscribeToTask`) answered as a stream; null
 * for any other method.
 */
export async function jsonRpcStream(
  streams: A2AV1Streams,
  body: { readonly method: string; readonly id?: JsonRpcId; readonly params?: Record<string, unknown> },
  caller: Caller,
  headers: IncomingHttpHeaders,
): Promise<StreamReply | null> {
  const method = Object.hasOwn(JSON_RPC_STREAM_METHODS, body.method) ? JSON_RPC_STREAM_METHODS[body.method] : undefined
  if (method === undefined) return null
  const events = await method(streams, body.params ?? {}, caller, headers)
  return streamReply(streams, events, 'a2a-jsonrpc', { body, id: body.id ?? null, accept: headers.accept })
}
