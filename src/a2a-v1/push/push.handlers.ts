import type { OperationId } from '../../contract.js'
import { type HttpInput, type RouteDefinition, route } from '../../http/route.js'
import { type JsonRpcMethod, checkVersion } from '../a2a-v1.handlers.js'
import { responseContentType } from '../media-type.js'
import { restCaller } from '../tenant-scope.js'
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

/** What the push config operations read of a request, whichever of their twins (root or `/{tenant}/…`) it came to. */
type ConfigInput<Root extends OperationId, Twin extends OperationId> = HttpInput<Root> | HttpInput<Twin>

/**
 * The HTTP+JSON routes: `/a2a/v1/tasks/{id}/pushNotificationConfigs[/{configId}]`, each at the root and under
 * `/{tenant}/` (the same handler; the caller scoped to the path's tenant).
 */
export function a2aV1PushRoutes(configs: PushConfigService): RouteDefinition[] {
  const json = (accept: string | undefined) => ({ 'Content-Type': responseContentType(accept) })
  const base = 'tasks/{a2a_task_id}/pushNotificationConfigs'
  const root = `/a2a/v1/${base}`
  const twin = `/a2a/v1/{a2a_tenant}/${base}`
  const create = async (input: ConfigInput<'a2aV1CreateTaskPushNotificationConfig', 'a2aV1CreateTaskPushNotificationConfigForTenant'>) => {
    checkVersion(input.headers, input.query)
    return { status: 200 as const, body: await configs.create(restCaller(input), input.params.a2a_task_id, input.body), headers: json(input.headers.accept) }
  }
  const list = async (input: ConfigInput<'a2aV1ListTaskPushNotificationConfigs', 'a2aV1ListTaskPushNotificationConfigsForTenant'>) => {
    checkVersion(input.headers, input.query)
    return { status: 200 as const, body: await configs.list(restCaller(input), input.params.a2a_task_id), headers: json(input.headers.accept) }
  }
  const get = async (input: ConfigInput<'a2aV1GetTaskPushNotificationConfig', 'a2aV1GetTaskPushNotificationConfigForTenant'>) => {
    checkVersion(input.headers, input.query)
    const body = await configs.get(restCaller(input), input.params.a2a_task_id, input.params.config_id)
    return { status: 200 as const, body, headers: json(input.headers.accept) }
  }
  const remove = async (input: ConfigInput<'a2aV1DeleteTaskPushNotificationConfig', 'a2aV1DeleteTaskPushNotificationConfigForTenant'>) => {
    checkVersion(input.headers, input.query)
    await configs.delete(restCaller(input), input.params.a2a_task_id, input.params.config_id)
    return { status: 204 as const, body: undefined }
  }
  return [
    route('a2aV1CreateTaskPushNotificationConfig', 'post', root, create),
    route('a2aV1CreateTaskPushNotificationConfigForTenant', 'post', twin, create),
    route('a2aV1ListTaskPushNotificationConfigs', 'get', root, list),
    route('a2aV1ListTaskPushNotificationConfigsForTenant', 'get', twin, list),
    route('a2aV1GetTaskPushNotificationConfig', 'get', `${root}/{config_id}`, get),
    route('a2aV1GetTaskPushNotificationConfigForTenant', 'get', `${twin}/{config_id}`, get),
    route('a2aV1DeleteTaskPushNotificationConfig', 'delete', `${root}/{config_id}`, remove),
    route('a2aV1DeleteTaskPushNotificationConfigForTenant', 'delete', `${twin}/{config_id}`, remove),
  ]
}
