import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import type { Logger } from '../logger.js'
import type { Caller } from '../auth/caller.js'
import { type ClientAddress, isLocalClient } from './client-ip.js'
import { type RateLimitBucket, routeOf } from './operation-index.js'

export type Bucket = RateLimitBucket

/** One bucket's counter: a thin seam over rate-limiter-flexible so the store behind it can vary per engine. */
export interface BucketLimiter {
  /** Resolves when the point was taken; rejects with `{ msBeforeNext }` when the bucket is empty. */
  consume(key: string): Promise<unknown>
}

export interface RateLimitOptions {
  readonly limiters: Readonly<Partial<Record<Bucket, BucketLimiter>>>
  /** Loopback clients are exempt unless this is set (or the request came through a trusted proxy). */
  readonly limitLoopback: boolean
  readonly logger: Logger
}

function isRejection(value: unknown): value is { msBeforeNext: number } {
  return typeof value === 'object' && value !== null && 'msBeforeNext' in value && typeof value.msBeforeNext === 'number'
}

/**
 * Per-client limits (token id, else IP) in the bucket the operation names (`x-rate-limit-bucket`), after
 * authentication so that an anonymous caller learns nothing about them. 429 with `Retry-After` in whole seconds
 * (bernstein-behaviour.md §1.6).
 */
export function rateLimit(options: RateLimitOptions): RequestHandler {
  return async (_req, res, next) => {
    const client = res.locals['client'] as ClientAddress
    const bucket = routeOf(res).policy.rateLimitBucket
    if (bucket === null || (isLocalClient(client) && !options.limitLoopback)) return next()
    const limiter = options.limiters[bucket]
    if (!limiter) return next()
    const caller = res.locals['caller'] as Caller
    const key = caller.tokenId !== null ? `token:${caller.tokenId}` : `ip:${client.ip}`
    try {
      await limiter.consume(key)
    } catch (error) {
      if (!isRejection(error)) {
        // A broken limiter store must not take the API down with it; it is logged and the request proceeds.
        options.logger.error({ err: error, bucket }, 'rate limiter unavailable; request not limited')
        return next()
      }
      const retryAfter = Math.max(1, Math.ceil(error.msBeforeNext / 1000))
      throw new AppError('rate_limited', `Rate limit exceeded for bucket '${bucket}'`, {
        extra: { bucket },
        headers: { 'Retry-After': String(retryAfter) },
      })
    }
    next()
  }
}
