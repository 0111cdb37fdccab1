import { type BodyVerifier, requireUtf8 } from '../http/utf8-guard.js'
import { pythonUtf8DecodeText } from '../text/utf8.js'
import { type RouteDefinition, route } from '../http/route.js'
import { type InboundService, invalidJsonBody, parseInboundTask } from './inbound.service.js'

export function inboundRoutes(inbound: InboundService): RouteDefinition[] {
  return [
    route('a2a_v0_accept_task_a2a_v0_tasks_post', 'post', '/a2a/v0/tasks', async ({ rawBody, caller, received }) => {
      const request = { ...parseInboundTask(rawBody ?? ''), transport: received() }
      const { created, ...accepted } = await inbound.accept(caller.tenantId, request)
      return { status: 202, body: accepted, headers: { 'Bernstein-Delivery': created ? 'new' : 'duplicate' } }
    }),
  ]
}

/**
 * The `verify` option of the raw parser in front of `/a2a/v0/tasks`, whose bytes are read as UTF-8 whatever charset
 * the request declares: a body that is not UTF-8 is refused as Bernstein's `request.json()` refuses it, 400
 * `Invalid JSON body: 'utf-8' codec can't decode byte 0xff in position 6: invalid start byte`, instead of reaching
 * the handler with U+FFFD in place of the bad bytes.
 */
export const inboundBodyVerifier: BodyVerifier = requireUtf8((fault, bytes) => invalidJsonBody(pythonUtf8DecodeText(bytes, fault)))
