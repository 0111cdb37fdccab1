import type { IncomingHttpHeaders } from 'node:http'
import type { Caller } from '../auth/caller.js'
import type { Schema } from '../contract.js'
import { AppError } from '../errors.js'
import { type RouteDefinition, route } from '../http/route.js'
import { A2AProtocolError } from './a2a-v1-errors.js'
import type { A2AV1Caller, A2AV1Service } from './a2a-v1.service.js'
import type { ListTasksRequest, SendMessageRequest } from './a2a-v1-wire.js'
import { responseContentType } from './media-type.js'
import { assertSupportedVersion } from './version.js'

type JsonRpcResult = Extract<Schema<'A2AV1JsonRpcResponse'>, { result: unknown }>['result']

const VERSION_QUERY = 'A2A-Version'

function v1Caller(caller: Caller): A2AV1Caller {
  return { tenantId: caller.tenantId, sender: `a2a-v1:${caller.tokenId ?? caller.role}` }
}

/** SendMessage and CancelTask change tasks: an operator's, as every `POST /a2a/*` (the contract says so of the REST twins). */
function assertOperator(caller: Caller, method: string): void {
  if (caller.role !== 'operator') {
    throw new AppError('forbidden', `Agent tokens cannot call ${method}, which needs an operator token`, { extra: { required_permission: 'admin:manage' } })
  }
}

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
    return { task: await service.sendMessage(v1Caller(caller), params as SendMessageRequest) }
  },
  GetTask: (service, params, caller) => {
    const request = params as Schema<'A2AV1GetTaskRequest'>
    return service.getTask(caller.tenantId, request.id, request.historyLength)
  },
  ListTasks: (service, params, caller) => service.listTasks(caller.tenantId, params as ListTasksRequest),
  CancelTask: (service, params, caller) => {
    assertOperator(caller, 'CancelTask')
    return service.cancelTask(caller.tenantId, (params as Schema<'A2AV1CancelTaskRequest'> & { id: string }).id)
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

export function a2aV1Routes(service: A2AV1Service, moreMethods: Readonly<Record<string, JsonRpcMethod>> = {}): RouteDefinition[] {
  const json = (headers: IncomingHttpHeaders) => ({ 'Content-Type': responseContentType(headers.accept) })
  return [
    route('a2aV1JsonRpc', 'post', '/a2a/v1', async ({ body, caller, headers, query }) => {
      checkVersion(headers, query)
      const params = (body.params ?? {}) as Record<string, unknown>
      const method = Object.hasOwn(METHODS, body.method) ? METHODS[body.method] : undefined
      const more = Object.hasOwn(moreMethods, body.method) ? moreMethods[body.method] : undefined
      if (method === undefined && more === undefined) throw new A2AProtocolError('MethodNotFound', `Method not found: ${body.method.slice(0, 200)}`)
      const result = method !== undefined ? await method(service, params, caller) : await more!(params, caller)
      return { status: 200, body: { jsonrpc: '2.0' as const, id: body.id ?? null, result }, headers: { 'Content-Type': 'application/json' } }
    }),
    route('a2aV1SendMessage', 'post', '/a2a/v1/message:send', async ({ body, caller, headers, query }) => {
      checkVersion(headers, query)
      return { status: 200, body: { task: await service.sendMessage(v1Caller(caller), body) }, headers: json(headers) }
    }),
    route('a2aV1GetTask', 'get', '/a2a/v1/tasks/{a2a_task_id}', async ({ params, query, caller, headers }) => {
      checkVersion(headers, query)
      return { status: 200, body: await service.getTask(caller.tenantId, params.a2a_task_id, query.historyLength), headers: json(headers) }
    }),
    route('a2aV1ListTasks', 'get', '/a2a/v1/tasks', async ({ query, caller, headers }) => {
      checkVersion(headers, query)
      return { status: 200, body: await service.listTasks(caller.tenantId, listRequest(query)), headers: json(headers) }
    }),
    route('a2aV1CancelTask', 'post', '/a2a/v1/tasks/{a2a_task_id}:cancel', async ({ params, caller, headers, query }) => {
      checkVersion(headers, query)
      return { status: 200, body: await service.cancelTask(caller.tenantId, params.a2a_task_id), headers: json(headers) }
    }),
    route('a2aV1GetExtendedAgentCard', 'get', '/a2a/v1/extendedAgentCard', async ({ caller: _caller, headers, query }) => {
      checkVersion(headers, query)
      return { status: 200, body: await service.extendedAgentCard(), headers: json(headers) }
    }),
  ]
}
