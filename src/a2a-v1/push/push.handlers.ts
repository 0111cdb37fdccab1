import { type RouteDefinition, route } from '../../http/route.js'
import { type JsonRpcMethod, checkVersion } from '../a2a-v1.handlers.js'
import { responseContentType } from '../media-type.js'
import type { PushConfigService, V1PushConfig } from './push-configs.js'

/** The params of Get and Delete under their JSON names (the handler has turned `task_id` into `taskId`). */
type ConfigRequest = { readonly taskId: string; readonly id: string }

/** The four push notification config methods of the JSON-RPC binding (params as the contract checked them). */
export function pushJsonRpcMethods(configs: PushConfigService): Readonly<Record<string, JsonRpcMethod>> {
  return {
    CreateTaskPushNotificationConfig: (params, caller) => {
      const config = params as V1PushConfig & { taskId: string }
      return configs.create(caller, config.taskId, config)
    },
    GetTaskPushNotificationConfig: (params, caller) => {
      const request = params as ConfigRequest
      return configs.get(caller, request.taskId, request.id)
    },
    ListTaskPushNotificationConfigs: (params, caller) => configs.list(caller, (params as { readonly taskId: string }).taskId),
    DeleteTaskPushNotificationConfig: async (params, caller) => {
      const request = params as ConfigRequest
      await configs.delete(caller, request.taskId, request.id)
      return {}
    },
  }
}

/** The HTTP+JSON routes: `/a2a/v1/tasks/{id}/pushNotificationConfigs[/{configId}]`. */
export function a2aV1PushRoutes(configs: PushConfigService): RouteDefinition[] {
  const json = (accept: string | undefined) => ({ 'Content-Type': responseContentType(accept) })
  const base = '/a2a/v1/tasks/{a2a_task_id}/pushNotificationConfigs'
  return [
    route('a2aV1CreateTaskPushNotificationConfig', 'post', base, async ({ params, body, caller, headers, query }) => {
      checkVersion(headers, query)
      return { status: 200, body: await configs.create(caller, params.a2a_task_id, body), headers: json(headers.accept) }
    }),
    route('a2aV1ListTaskPushNotificationConfigs', 'get', base, async ({ params, caller, headers, query }) => {
      checkVersion(headers, query)
      return { status: 200, body: await configs.list(caller, params.a2a_task_id), headers: json(headers.accept) }
    }),
    route('a2aV1GetTaskPushNotificationConfig', 'get', `${base}/{config_id}`, async ({ params, caller, headers, query }) => {
      checkVersion(headers, query)
      return { status: 200, body: await configs.get(caller, params.a2a_task_id, params.config_id), headers: json(headers.accept) }
    }),
    route('a2aV1DeleteTaskPushNotificationConfig', 'delete', `${base}/{config_id}`, async ({ params, caller, headers, query }) => {
      checkVersion(headers, query)
      await configs.delete(caller, params.a2a_task_id, params.config_id)
      return { status: 204, body: undefined }
    }),
  ]
}
