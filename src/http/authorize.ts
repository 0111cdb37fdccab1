import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import type { Caller } from '../auth/caller.js'
import { routeOf } from './operation-index.js'

const forbidden = (detail: string): AppError => new AppError('forbidden', detail, { extra: { required_permission: 'admin:manage' } })

/**
 * The permission the operation declares (`x-permission`) against who the caller is. Bernstein maps every write it
 * has no rule for, which includes every `POST /a2a/*`, to `admin:manage`: those operations need an operator; those
 * about the whole node (the audit chain of every tenant's tasks, metrics) an operator not bound to a tenant. A
 * request the contract has no operation for needs the latter (fail-closed).
 */
export function authorize(): RequestHandler {
  return (_req, res, next) => {
    const { policy } = routeOf(res)
    if (policy.public) return next()
    const caller = res.locals['caller'] as Caller
    const { permission } = policy
    if (caller.role === 'metrics' && permission !== 'metrics-reader') throw forbidden('The metrics token can only read /metrics')
    if (caller.role === 'agent' && permission !== 'any') throw forbidden('Agent tokens cannot access operator-only endpoints')
    if (caller.role === 'operator' && caller.tenantBound && (permission === 'node-operator' || permission === 'metrics-reader')) {
      throw forbidden('Operator tokens bound to a tenant cannot access node-wide endpoints')
    }
    next()
  }
}
