import type { IncomingHttpHeaders } from 'node:http'
import type { Caller } from '../auth/caller.js'
import type { Schema } from '../contract.js'
import { type HttpInput, type RouteDefinition, route } from '../http/route.js'
import { A2AProtocolError } from './a2a-v1-errors.js'
import type { A2AV1Service } from './a2a-v1.service.js'
import type { ListTasksRequest, SendMessageRequest } from './a2a-v1-wire.js'
import { responseContentType } from './media-type.js'
import { withJsonNames } from './proto-json-names.js'
import { callerInTenant, restCaller } from './tenant-scope.js'
import { assertSupportedVersion } from './version.js'
import { assertOperator, v1Caller } from './callers.js'
import type { A2AV1Streams } from './streaming.js'
import { jsonRpcStream } from './streaming.handlers.js'

type JsonRpcResult = Extract<Schema<'A2AV1JsonRpcResponse'>, { result: unknown }>['result']

const VERSION_QUERY = 'A2A-Version'

export function checkVersion(headers: IncomingHttpHeaders, query: Readonly<Record<string, unknown>>): void {
  assertSupportedVersion(headers['a2a-version'], query[VERSION_QUERY])
}

/** The JSON-RPC methods: params as the contract checked them, the caller, the service's answer. */
type Method = (service: A2AV1Service, params: Record<string, unknown>, caller: Caller) => Promise<JsonRpcResult>

/** A JSON-RPC method served by another part of the v1 surface (push notification configs). */
export type JsonRpcMethod = (params: Record<string, unknown>, caller: Caller) => Promise<JsonRpcResult>

const METHODS: Readonly<Record<string, Method>> = {
  SendMessage: async (service, params, caller) => {
    assertOperator(caller, 'SendMessage')
    return service.sendMessage(v1Caller(caller), params as SendMessageRequest)
  },
  GetTask: (service, params, caller) => {
    const request = params as Schema<'A2AV1GetTaskRequest'>
    return service.getTask(caller, request.id, request.historyLength)
  },
  ListTasks: (service, params, caller) => service.listTasks(caller, params as ListTasksRequest),
  CancelTask: (service, params, caller) => {
    assertOperator(caller, 'CancelTask')
    return service.cancelTask(caller, (params as Schema<'A2AV1CancelTaskRequest'> & { id: string }).id)
  },
  GetExtendedAgentCard: (service) => service.extendedAgentCard(),
}

/** The query of ListTasks as a ListTasksRequest (the validator has already coerced the numbers and booleans). */
function listRequest(query: Readonly<Record<string, unknown>>): ListTasksRequest {
  const pick = <K extends keyof ListTasksRequest>(key: K): Partial<ListTasksRequest> =>
    query[key] === undefined ? {} : ({ [key]: query[key] } as Partial<ListTasksRequest>)
  return {
    ...pick('contextId'),
    ...pick('status'),
    ...pick('pageSize'),
    ...pick('pageToken'),
    ...pick('historyLength'),
    ...pick('statusTimestampAfter'),
    ...pick('includeArtifacts'),
  }
}

/** What the HTTP+JSON operations read of a request, whichever of their twins (root or `/{tenant}/…`) it came to. */
interface RestInput {
  readonly caller: Caller
  readonly headers: IncomingHttpHeaders
  readonly query: Readonly<Record<string, unknown>>
  readonly params: object
}

export function a2aV1Routes(service: A2AV1Service, streams: A2AV1Streams, moreMethods: Readonly<Record<string, JsonRpcMethod>> = {}): RouteDefinition[] {
  const json = (headers: IncomingHttpHeaders) => ({ 'Content-Type': responseContentType(headers.accept) })
  /** The version check and the tenant of the path, then the operation's answer with its content type. */
  const rest = async <T>(input: RestInput, answer: (caller: Caller) => Promise<T>) => {
    checkVersion(input.headers, input.query)
    const body = await answer(restCaller(input))
    return { status: 200 as const, body, headers: json(input.headers) }
  }
  const jsonRpc = async ({ body, caller, headers, query }: Pick<HttpInput<'a2aV1JsonRpc'>, 'body' | 'caller' | 'headers'> & RestInput) => {
    checkVersion(headers, query)
    const params = withJsonNames((body.params ?? {}) as Record<string, unknown>)
    const tenant = typeof params['tenant'] === 'string' ? params['tenant'] : undefined
    const scoped = callerInTenant(caller, tenant, headers['x-tenant-id'])
    const streamed = await jsonRpcStream(streams, { method: body.method, id: body.id ?? null, params }, scoped, headers)
    if (streamed !== null) return streamed
    const method = Object.hasOwn(METHODS, body.method) ? METHODS[body.method] : undefined
    const more = Object.hasOwn(moreMethods, body.method) ? moreMethods[body.method] : undefined
    if (method === undefined && more === undefined) throw new A2AProtocolError('MethodNotFound', `Method not found: ${body.method.slice(0, 200)}`)
    const result = method !== undefined ? await method(service, params, scoped) : await more!(params, scoped)
    return { status: 200 as const, body: { jsonrpc: '2.0' as const, id: body.id ?? null, result }, headers: { 'Content-Type': 'application/json' } }
  }
  return [
    route('a2aV1JsonRpc', 'post', '/a2a/v1', jsonRpc),
    route('a2aV1JsonRpcSlash', 'post', '/a2a/v1/', jsonRpc),
    route('a2aV1SendMessage', 'post', '/a2a/v1/message:send', (input) => rest(input, (caller) => service.sendMessage(v1Caller(caller), input.body))),
    route('a2aV1SendMessageForTenant', 'post', '/a2a/v1/{a2a_tenant}/message:send', (input) =>
      rest(input, (caller) => service.sendMessage(v1Caller(caller), input.body)),
    ),
    route('a2aV1GetTask', 'get', '/a2a/v1/tasks/{a2a_task_id}', (input) =>
      rest(input, (caller) => service.getTask(caller, input.params.a2a_task_id, input.query.historyLength)),
    ),
    route('a2aV1GetTaskForTenant', 'get', '/a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}', (input) =>
      rest(input, (caller) => service.getTask(caller, input.params.a2a_task_id, input.query.historyLength)),
    ),
    route('a2aV1ListTasks', 'get', '/a2a/v1/tasks', (input) => rest(input, (caller) => service.listTasks(caller, listRequest(input.query)))),
    route('a2aV1ListTasksForTenant', 'get', '/a2a/v1/{a2a_tenant}/tasks', (input) =>
      rest(input, (caller) => service.listTasks(caller, listRequest(input.query))),
    ),
    route('a2aV1CancelTask', 'post', '/a2a/v1/tasks/{a2a_task_id}:cancel', (input) =>
      rest(input, (caller) => service.cancelTask(caller, input.params.a2a_task_id)),
    ),
    route('a2aV1CancelTaskForTenant', 'post', '/a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}:cancel', (input) =>
      rest(input, (caller) => service.cancelTask(caller, input.params.a2a_task_id)),
    ),
    route('a2aV1GetExtendedAgentCard', 'get', '/a2a/v1/extendedAgentCard', (input) => rest(input, () => service.extendedAgentCard())),
    route('a2aV1GetExtendedAgentCardForTenant', 'get', '/a2a/v1/{a2a_tenant}/extendedAgentCard', (input) => rest(input, () => service.extendedAgentCard())),
  ]
}
