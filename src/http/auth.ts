import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import type { Caller, TokenIdentity, TokenResolver } from '../auth/caller.js'
import { routeOf } from './operation-index.js'

const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** `x-tenant-id` normalised as Bernstein does (empty means `default`), and checked so it is safe to store. */
export function tenantFromHeader(raw: string | string[] | undefined): string {
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? ''
  if (value === '') return 'default'
  if (!TENANT_PATTERN.test(value)) {
    throw new AppError('validation_failed', 'invalid tenant', {
      issues: [
        { loc: ['header', 'x-tenant-id'], msg: 'Tenant ids are 1-64 characters of letters, digits, dot, dash and underscore', type: 'string_pattern_mismatch' },
      ],
    })
  }
  return value
}

export interface AuthOptions {
  /** Null when auth is disabled: every request passes as the operator. */
  readonly resolveToken: TokenResolver | null
}

const unauthenticated = (detail: string): AppError =>
  new AppError('unauthenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="bernstein-a2a"' } })

/**
 * Bearer authentication (bernstein-behaviour.md §1.4). Sets `res.locals.caller`. Public operations (`security: []`
 * in the contract) pass without a valid token, as an anonymous caller scoped to the header's tenant.
 */
export function authenticate(options: AuthOptions): RequestHandler {
  return (req, res, next) => {
    const setCaller = (caller: Caller): void => {
      res.locals['caller'] = caller
      next()
    }
    const resolveToken = options.resolveToken
    if (resolveToken === null) return setCaller({ role: 'operator', tenantId: tenantFromHeader(req.headers['x-tenant-id']), tokenId: null, tenantBound: false })
    const publicPath = routeOf(res).policy.public
    // Probes and discovery must not fail on an odd tenant header: anonymous callers there fall back to `default`.
    const anonymous = (): void => {
      let tenantId = 'default'
      try {
        tenantId = tenantFromHeader(req.headers['x-tenant-id'])
      } catch {
        // keep the default
      }
      setCaller({ role: 'anonymous', tenantId, tokenId: null, tenantBound: false })
    }
    const header = req.headers.authorization
    if (typeof header !== 'string' || !header.startsWith('Bearer ') || header.slice(7).trim() === '') {
      if (publicPath) return anonymous()
      throw unauthenticated('Missing or invalid Authorization header')
    }
    const identified = (identity: TokenIdentity | null): void => {
      if (identity === null) {
        if (publicPath) return anonymous()
        throw unauthenticated('Invalid or expired authentication token')
      }
      // Agent tokens are bound to their tenant, as are operator tokens issued for one; only an unbound operator
      // token picks the tenant with the header.
      const tenantBound = identity.tenantId !== null
      setCaller({ role: identity.role, tenantId: identity.tenantId ?? tenantFromHeader(req.headers['x-tenant-id']), tokenId: identity.tokenId, tenantBound })
    }
    const identity = resolveToken(header.slice(7).trim())
    // A token known at once goes on in the same turn (no promise, no microtask); a stored one when its lookup ends.
    if (!(identity instanceof Promise)) return identified(identity)
    identity.then((found) => {
      try {
        identified(found)
      } catch (error) {
        next(error)
      }
    }, next)
  }
}
