import type { JsonBody, Schema } from '../contract.js'
import { type RouteDefinition, route } from '../http/route.js'
import type { Task } from './task.js'
import type { TaskService } from './task.service.js'

export function taskToWire(task: Task): Schema<'Task'> {
  return {
    id: task.id,
    title: task.title,
    description: task.description,
    role: task.role,
    priority: task.priority,
    scope: task.scope,
    complexity: task.complexity,
    estimated_minutes: task.estimatedMinutes,
    status: task.status,
    task_type: task.taskType,
    depends_on: [...task.dependsOn],
    parent_task_id: task.parentTaskId,
    owned_files: [...task.ownedFiles],
    assigned_agent: task.assignedAgent,
    result_summary: task.resultSummary,
    terminal_reason: task.terminalReason,
    tenant_id: task.tenantId,
    metadata: { ...task.metadata },
    created_at: task.createdAt,
    updated_at: task.updatedAt,
    claimed_at: task.claimedAt,
    completed_at: task.completedAt,
    closed_at: task.closedAt,
    progress_log: task.progressLog.map((p) => ({ ...p })),
    version: task.version,
  }
}

type TransitionId = 'claimTask' | 'progressTask' | 'completeTask' | 'failTask' | 'cancelTask' | 'blockTask' | 'closeTask'

/**
 * A lifecycle transition (`POST /tasks/{task_id}/<verb>`): one service call on the caller's task, at the version the
 * caller expects when it names one (`expected_version`), answered with the task as it stands after it.
 */
function transition<Id extends TransitionId>(
  operationId: Id,
  path: string,
  apply: (tenantId: string, taskId: string, body: JsonBody<Id>, expectedVersion: number | undefined) => Promise<Task>,
): RouteDefinition {
  // Typed over all the transitions (they share the path parameter, the query and the 200 answer); the body is the
  // one `operationId` declares.
  return route<TransitionId>(operationId, 'post', path, async ({ params, query, body, caller }) => {
    const task = await apply(caller.tenantId, params.task_id, body as JsonBody<Id>, query.expected_version)
    return { status: 200, body: taskToWire(task) }
  })
}

export function taskRoutes(tasks: TaskService): RouteDefinition[] {
  return [
    route('createTask', 'post', '/tasks', async ({ body, caller }) => {
      const task = await tasks.create(caller.tenantId, {
        title: body.title,
        ...(body.description !== undefined && { description: body.description }),
        ...(body.role !== undefined && { role: body.role }),
        ...(body.priority !== undefined && { priority: body.priority }),
        ...(body.scope !== undefined && { scope: body.scope }),
        ...(body.complexity !== undefined && { complexity: body.complexity }),
        ...(body.estimated_minutes !== undefined && { estimatedMinutes: body.estimated_minutes }),
        ...(body.task_type !== undefined && { taskType: body.task_type }),
        ...(body.depends_on !== undefined && { dependsOn: body.depends_on }),
        ...(body.parent_task_id !== undefined && { parentTaskId: body.parent_task_id }),
        ...(body.owned_files !== undefined && { ownedFiles: body.owned_files }),
        ...(body.metadata !== undefined && { metadata: body.metadata }),
      })
      return { status: 201, body: taskToWire(task) }
    }),
    route('listTasks', 'get', '/tasks', async ({ query, caller }) => {
      const page = await tasks.list(caller.tenantId, {
        limit: query.limit ?? 50,
        ...(query.status !== undefined && { status: query.status }),
        ...(query.role !== undefined && { role: query.role }),
        ...(query.cursor !== undefined && { cursor: query.cursor }),
      })
      return { status: 200, body: { tasks: page.tasks.map(taskToWire), next_cursor: page.nextCursor } }
    }),
    route('claimNextTask', 'get', '/tasks/next/{role}', async ({ params, query, caller }) => {
      const task = await tasks.claimNext(caller.tenantId, params.role, query.agent_id ?? null)
      return task ? { status: 200, body: taskToWire(task) } : { status: 204, body: undefined }
    }),
    route('getTask', 'get', '/tasks/{task_id}', async ({ params, caller }) => {
      return { status: 200, body: taskToWire(await tasks.get(caller.tenantId, params.task_id)) }
    }),
    transition('claimTask', '/tasks/{task_id}/claim', (tenantId, id, body, version) => tasks.claim(tenantId, id, body?.agent_id ?? null, version)),
    transition('progressTask', '/tasks/{task_id}/progress', (tenantId, id, body, version) =>
      tasks.progress(tenantId, id, body.message, body.percent ?? 0, version),
    ),
    transition('completeTask', '/tasks/{task_id}/complete', (tenantId, id, body, version) => tasks.complete(tenantId, id, body.result_summary, version)),
    transition('failTask', '/tasks/{task_id}/fail', (tenantId, id, body, version) => tasks.fail(tenantId, id, body.reason, version)),
    transition('cancelTask', '/tasks/{task_id}/cancel', (tenantId, id, body, version) => tasks.cancel(tenantId, id, body?.reason ?? null, version)),
    transition('blockTask', '/tasks/{task_id}/block', (tenantId, id, body, version) => tasks.block(tenantId, id, body.reason, version)),
    transition('closeTask', '/tasks/{task_id}/close', (tenantId, id, body, version) => tasks.close(tenantId, id, body?.reason ?? null, version)),
  ]
}
