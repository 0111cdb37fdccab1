import type { Repositories } from '../store/store.js'
import { taskNotFound } from './a2a-v1-errors.js'

/**
 * Which tasks an A2A v1.0 request reaches: those of the tenant it is scoped to, and, for a token bound to that
 * tenant, not every one of them (see {@link hidesSignedDelegations}). A `Caller` is one.
 */
export interface V1TaskScope {
  readonly tenantId: string
  readonly tenantBound: boolean
}

/**
 * The rule of a task delegated by a signed delivery (docs/federation.md, "Requests on a delegated task") on the v1
 * surface. Over the A2A task API every request on such a task by a tenant-bound caller must be signed by the key the
 * delegation recorded; the v1 bindings take no such signature, so a tenant-bound caller does not reach the task
 * through them at all: it is `TaskNotFoundError` (nothing is read or written) and ListTasks leaves it out. The node's
 * own operator token, bound to no tenant, still reaches it, as it does over the A2A task API.
 */
export function hidesSignedDelegations(scope: V1TaskScope): boolean {
  return scope.tenantBound
}

/** `TaskNotFoundError` when the scope may not reach the task (whether the task exists is the caller's own check). */
export async function assertReachable(repos: Repositories, scope: V1TaskScope, a2aTaskId: string): Promise<void> {
  if (hidesSignedDelegations(scope) && (await repos.a2a.inboundSigningKey(scope.tenantId, { a2aTaskId })) !== null) throw taskNotFound(a2aTaskId)
}
