import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import type { Caller, TokenIdentity, TokenResolver } from '../auth/caller.js'
import type { Logger } from '../logger.js'
import { type ClientAddress, isLocalClient } from './client-ip.js'
import { routeOf } from './operation-index.js'
import type { BucketLimiter } from './rate-limit.js'

export const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

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
  /** The `auth_failure` bucket: failed authentications per client address; none when absent. */
  readonly failures?: AuthFailureOptions
}

export interface AuthFailureOptions {
  /** One point per failed authentication, keyed by client address (shared by the replicas on PostgreSQL). */
  readonly limiter: BucketLimiter
  /** Loopback clients are exempt unless this is set, as from the other buckets. */
  readonly limitLoopback: boolean
  /** Milliseconds since the epoch, as the limiter counts them; `Date.now` by default. */
  readonly now?: () => number
  readonly logger: Logger
}

/** Addresses remembered as blocked at once; past this the oldest are forgotten (their bucket still counts). */
const MAX_BLOCKED = 10_000

/**
 * The addresses whose `auth_failure` bucket is empty, until when: a request from one of them that carries a token
 * is answered 429 before the token is looked at, so a flood of wrong tokens costs no lookups. Learnt when a
 * failure is refused by the (possibly shared) bucket, so each replica blocks an address once the shared budget is
 * spent.
 */
class FailureBlocks {
  readonly #until = new Map<string, number>()
  readonly #now: () => number

  constructor(now: () => number) {
    this.#now = now
  }

  /** Milliseconds left while `ip` is blocked, else 0. */
  remaining(ip: string): number {
    const until = this.#until.get(ip)
    if (until === undefined) return 0
    const left = until - this.#now()
    if (left > 0) return left
    this.#until.delete(ip)
    return 0
  }

  block(ip: string, ms: number): void {
    this.#until.delete(ip)
    if (this.#until.size >= MAX_BLOCKED) {
      const oldest = this.#until.keys().next()
      if (!oldest.done) this.#until.delete(oldest.value)
    }
    this.#until.set(ip, this.#now() + ms)
  }
}

const AUTH_FAILURE_BUCKET = 'auth_failure'

const tooManyFailures = (ms: number): AppError =>
  new AppError('rate_limited', `Rate limit exceeded for bucket '${AUTH_FAILURE_BUCKET}'`, {
    extra: { bucket: AUTH_FAILURE_BUCKET },
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(ms / 1000))) },
  })

function isRejection(value: unknown): value is { msBeforeNext: number } {
  return typeof value === 'object' && value !== null && 'msBeforeNext' in value && typeof value.msBeforeNext === 'number'
}

const unauthenticated = (detail: string): AppError =>
  new AppError('unauthenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="bernstein-a2a"' } })

/**
 * Bearer authentication (bernstein-behaviour.md §1.4). Sets `res.locals.caller`. Public operations (`security: []`
 * in the contract) pass without a valid token, as an anonymous caller scoped to the header's tenant.
 */
export function authenticate(options: AuthOptions): RequestHandler {
  const failures = options.failures
  const blocks = failures ? new FailureBlocks(failures.now ?? Date.now) : null
  /** The address whose failures count, or null when none do (no bucket, or a local client exempt from limits). */
  const failureKey = (res: Parameters<RequestHandler>[1]): string | null => {
    if (!failures) return null
    const client = res.locals['client'] as ClientAddress | undefined
    if (client === undefined || (isLocalClient(client) && !failures.limitLoopback)) return null
    return client.ip
  }
  /** Spends a point of the address's bucket on a failed authentication: 401, or 429 once the bucket is empty. */
  const failed = async (ip: string | null, refusal: AppError): Promise<AppError> => {
    if (ip === null || !failures || !blocks) return refusal
    try {
      await failures.limiter.consume(`ip:${ip}`)
      return refusal
    } catch (error) {
      if (!isRejection(error)) {
        failures.logger.error({ err: error, bucket: AUTH_FAILURE_BUCKET }, 'rate limiter unavailable; failed authentication not counted')
        return refusal
      }
      blocks.block(ip, error.msBeforeNext)
      return tooManyFailures(error.msBeforeNext)
    }
  }
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
    const ip = failureKey(res)
    const blockedMs = ip === null ? 0 : (blocks?.remaining(ip) ?? 0)
    if (blockedMs > 0) {
      // Too many failures from this address: its token is not looked at (on a public path it is ignored, as a wrong one is).
      if (publicPath) return anonymous()
      throw tooManyFailures(blockedMs)
    }
    const identified = (identity: TokenIdentity | null): void => {
      if (identity === null) {
        if (publicPath) return anonymous()
        failed(ip, unauthenticated('Invalid or expired authentication token')).then(next, next)
        return
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
