import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import { stripApiPrefix } from './auth.js'
import { type ClientAddress, blockListOf, clientAddress, isLoopback, listContains } from './client-ip.js'

/** Health probes and discovery documents stay reachable from anywhere (load balancers, peers). */
export function isHealthOrDiscovery(path: string): boolean {
  const p = stripApiPrefix(path)
  return p === '/health' || p.startsWith('/health/') || p === '/ready' || p === '/alive' || p.startsWith('/.well-known/')
}

export interface NetworkOptions {
  readonly allowedIps: readonly string[]
  readonly trustedProxyIps: readonly string[]
}

/**
 * Establishes the client address (`res.locals.client`) and enforces the IP allowlist
 * (`BERNSTEIN_ALLOWED_IPS`): 403 `IP <ip> not in allowed list`. Loopback is always allowed.
 */
export function networkGuard(options: NetworkOptions): RequestHandler {
  const trusted = blockListOf(options.trustedProxyIps)
  const allowed = options.allowedIps.length > 0 ? blockListOf(options.allowedIps) : null
  return (req, res, next) => {
    const client: ClientAddress = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted)
    res.locals['client'] = client
    if (allowed && !isHealthOrDiscovery(req.path) && !isLoopback(client.ip) && !listContains(allowed, client.ip)) {
      throw new AppError('forbidden', `IP ${client.ip} not in allowed list`)
    }
    next()
  }
}
