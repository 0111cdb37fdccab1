import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import { isPublicPath, stripApiPrefix } from './auth.js'
import type { Caller } from '../auth/caller.js'

/**
 * The path as the access rules read it: without the `/api/v1` prefix, and lower-case. Routing is case-sensitive
 * (app.ts), so `/A2A/…` is not found anyway; deciding case-blind keeps these checks fail-closed should routing ever
 * be relaxed.
 */
function accessPath(path: string): string {
  return stripApiPrefix(path.toLowerCase())
}

/**
 * What an agent token may not do. Bernstein maps every write it has no rule for, which includes every
 * `POST /a2a/*`, to `admin:manage` (fail-closed); operator-only reads (lineage, metrics, federation) join them.
 */
function requiresOperator(method: string, p: string): boolean {
  if (isNodeWide(p)) return true
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS' && p.startsWith('/a2a/')
}

/**
 * Endpoints about the whole node rather than one tenant: the audit chain (every tenant's tasks), federation and
 * metrics. Only an operator token that is not bound to a tenant reaches them.
 */
function isNodeWide(p: string): boolean {
  return p.startsWith('/lineage') || p.startsWith('/federation') || p === '/metrics'
}

export function authorize(): RequestHandler {
  return (req, res, next) => {
    const caller = res.locals['caller'] as Caller
    if (caller.role === 'metrics' && !isPublicPath(req.path) && !(req.path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD'))) {
      throw new AppError('forbidden', 'The metrics token can only read /metrics', { extra: { required_permission: 'admin:manage' } })
    }
    if (caller.role === 'agent' && requiresOperator(req.method, accessPath(req.path))) {
      throw new AppError('forbidden', 'Agent tokens cannot access operator-only endpoints', { extra: { required_permission: 'admin:manage' } })
    }
    if (caller.role === 'operator' && caller.tenantBound && isNodeWide(accessPath(req.path))) {
      throw new AppError('forbidden', 'Operator tokens bound to a tenant cannot access node-wide endpoints', { extra: { required_permission: 'admin:manage' } })
    }
    next()
  }
}
