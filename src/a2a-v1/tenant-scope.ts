import type { IncomingHttpHeaders } from 'node:http'
import type { Caller } from '../auth/caller.js'
import { AppError } from '../errors.js'
import { TENANT_PATTERN } from '../http/auth.js'
import { A2AProtocolError } from './a2a-v1-errors.js'

/**
 * The caller scoped to the tenant an A2A v1.0 request names (the `/{tenant}/…` REST path segment, or a request's
 * `tenant` field; spec §1.9). A2A's tenant is this node's tenant: the one `x-tenant-id` names. An operator token not
 * bound to a tenant acts in the named one (an `x-tenant-id` naming another is InvalidParams); a token bound to a
 * tenant may name only its own (another is a 403). An absent or empty tenant leaves the caller as it is.
 */
export function callerInTenant(caller: Caller, tenant: string | undefined, headerTenant: string | string[] | undefined): Caller {
  if (tenant === undefined || tenant === '') return caller
  if (!TENANT_PATTERN.test(tenant)) {
    throw new A2AProtocolError('InvalidParams', 'tenant must be 1-64 characters of letters, digits, dot, dash and underscore', { field: 'tenant' })
  }
  if (caller.tenantBound) {
    if (tenant === caller.tenantId) return caller
    throw new AppError('forbidden', `This token is bound to another tenant than '${tenant}'`, { extra: { required_permission: 'tenant' } })
  }
  const header = (Array.isArray(headerTenant) ? headerTenant[0] : headerTenant)?.trim() ?? ''
  if (header !== '' && header !== tenant) {
    throw new A2AProtocolError('InvalidParams', `The request names tenant '${tenant}' and x-tenant-id '${header.slice(0, 64)}'`, { field: 'tenant' })
  }
  return { ...caller, tenantId: tenant }
}

/** The tenant the path of an HTTP+JSON tenant twin names (`/a2a/v1/{a2a_tenant}/…`); undefined at the root. */
export function tenantOf(params: object): string | undefined {
  return 'a2a_tenant' in params && typeof params.a2a_tenant === 'string' ? params.a2a_tenant : undefined
}

/**
 * The caller of an HTTP+JSON operation, whichever of its twins (root or `/{tenant}/…`) the request came to: scoped
 * to the tenant of the path as {@link callerInTenant} says (at the root, as it is).
 */
export function restCaller(input: { readonly caller: Caller; readonly params: object; readonly headers: IncomingHttpHeaders }): Caller {
  return callerInTenant(input.caller, tenantOf(input.params), input.headers['x-tenant-id'])
}
