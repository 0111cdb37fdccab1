import type { IncomingHttpHeaders } from 'node:http'
import type { Schema } from '../contract.js'
import type { Caller } from '../auth/caller.js'
import { type ReceivedRequest, carriesSignature } from '../crypto/peer-http-signature.js'
import { type RouteDefinition, route } from '../http/route.js'
import type { TaskAccess } from './a2a-task.js'
import type { A2AService, A2ATaskView } from './a2a.service.js'

/** Says what the receipt attests (`acceptance`, `completion`) or that the response is unattested (`none`). */
export const ATTESTATION_HEADER = 'Bernstein-Attestation'

function a2aTaskToWire(view: A2ATaskView): { body: Schema<'A2ATaskResponse'>; headers: Record<string, string> } {
  const { body, receipt, attestation } = view
  return {
    body: { ...body, artifacts: body.artifacts.map((a) => ({ ...a })), receipt: receipt === null ? null : { ...receipt } },
    headers: { [ATTESTATION_HEADER]: attestation },
  }
}

/** Who acts on a task and how the request arrived, for the service's access check (signed delegations). */
function taskAccess(caller: Caller, headers: IncomingHttpHeaders, received: () => ReceivedRequest): TaskAccess {
  // The request is copied only if the guard checks a signature: an unsigned request on an undelegated task never is.
  return { tenantId: caller.tenantId, tenantBound: caller.tenantBound, signed: carriesSignature(headers), received }
}

export function a2aRoutes(a2a: A2AService): RouteDefinition[] {
  return [
    route('agent_card_a2a_agent_card_get', 'get', '/a2a/agent-card', async () => ({
      status: 200,
      body: { ...a2a.agentCard(), capabilities: [...a2a.agentCard().capabilities] },
    })),
    route('list_a2a_agents_a2a_agents_get', 'get', '/a2a/agents', async () => ({
      status: 200,
      body: { ...a2a.agentCard(), capabilities: [...a2a.agentCard().capabilities] },
    })),
    route('a2a_message_a2a_message_post', 'post', '/a2a/message', async ({ body, caller, headers, received }) => {
      const message = await a2a.receiveMessage(
        caller.tenantId,
        { sender: body.sender, recipient: body.recipient, content: body.content, taskId: body.task_id },
        taskAccess(caller, headers, received),
      )
      return {
        status: 201,
        body: {
          id: message.id,
          sender: message.sender,
          recipient: message.recipient,
          content: message.content,
          task_id: message.taskId,
          direction: message.direction,
          delivered: message.delivered,
          external_endpoint: message.externalEndpoint,
          created_at: message.createdAt,
        },
      }
    }),
    route('a2a_send_task_a2a_tasks_send_post', 'post', '/a2a/tasks/send', async ({ body, caller }) => {
      const view = await a2a.send(caller.tenantId, { sender: body.sender, message: body.message, role: body.role ?? 'backend' })
      return { status: 201, ...a2aTaskToWire(view) }
    }),
    route('a2a_get_task_a2a_tasks__a2a_task_id__get', 'get', '/a2a/tasks/{a2a_task_id}', async ({ params, caller, headers, received }) => {
      return { status: 200, ...a2aTaskToWire(await a2a.get(caller.tenantId, params.a2a_task_id, taskAccess(caller, headers, received))) }
    }),
    route(
      'a2a_add_artifact_a2a_tasks__a2a_task_id__artifacts_post',
      'post',
      '/a2a/tasks/{a2a_task_id}/artifacts',
      async ({ params, body, caller, headers, received }) => {
        const artifact = await a2a.addArtifact(
          caller.tenantId,
          params.a2a_task_id,
          { name: body.name, data: body.data ?? '', contentType: body.content_type ?? 'text/plain' },
          taskAccess(caller, headers, received),
        )
        return { status: 201, body: { name: artifact.name, content_type: artifact.contentType, data: artifact.data, created_at: artifact.createdAt } }
      },
    ),
  ]
}
