import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import { type ClientAddress, blockListOf, clientAddress, isLocalClient, listContains } from './client-ip.js'
import { routeOf } from './operation-index.js'

export interface NetworkOptions {
  readonly allowedIps: readonly string[]
  readonly trustedProxyIps: readonly string[]
}

/**
 * Establishes the client address (`res.locals.client`) and enforces the IP allowlist
 * (`BERNSTEIN_ALLOWED_IPS`): 403 `IP <ip> not in allowed list`. Loopback is always allowed (a local peer, never an
 * address a proxy forwards), and so are the
 * operations the contract marks `x-allowlist-exempt` (health probes and discovery documents, for load balancers
 * and peers).
 */
export function networkGuard(options: NetworkOptions): RequestHandler {
  const trusted = blockListOf(options.trustedProxyIps)
  const allowed = options.allowedIps.length > 0 ? blockListOf(options.allowedIps) : null
  return (req, res, next) => {
    const client: ClientAddress = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted)
    res.locals['client'] = client
    if (allowed && !routeOf(res).policy.allowlistExempt && !isLocalClient(client) && !listContains(allowed, client.ip)) {
      throw new AppError('forbidden', `IP ${client.ip} not in allowed list`)
    }
    next()
  }
}
