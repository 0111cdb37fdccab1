import { type RouteDefinition, route } from '../http/route.js'
import { type InboundService, parseInboundTask } from './inbound.service.js'

export function inboundRoutes(inbound: InboundService): RouteDefinition[] {
  return [
    route('a2a_v0_accept_task_a2a_v0_tasks_post', 'post', '/a2a/v0/tasks', async ({ rawBody, caller }) => {
      const request = parseInboundTask(rawBody ?? '')
      const { created, ...accepted } = await inbound.accept(caller.tenantId, request)
      return { status: 202, body: accepted, headers: { 'Bernstein-Delivery': created ? 'new' : 'duplicate' } }
    }),
  ]
}
