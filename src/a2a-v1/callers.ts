import type { Caller } from '../auth/caller.js'
import { AppError } from '../errors.js'
import type { A2AV1Caller } from './a2a-v1.service.js'

/** The caller as the v1 service sees it: its tenant (bound to it or not), and a name for the receipt's `sender`. */
export function v1Caller(caller: Caller): A2AV1Caller {
  return { tenantId: caller.tenantId, tenantBound: caller.tenantBound, sender: `a2a-v1:${caller.tokenId ?? caller.role}` }
}

/** SendMessage, SendStreamingMessage and CancelTask change tasks: an operator's, as every `POST /a2a/*` (the contract says so of the REST twins). */
export function assertOperator(caller: Caller, method: string): void {
  if (caller.role !== 'operator') {
    throw new AppError('forbidden', `Agent tokens cannot call ${method}, which needs an operator token`, { extra: { required_permission: 'admin:manage' } })
  }
}
