import type { RequestHandler } from 'express'
import { API_PREFIX } from './auth.js'
import { type RouteDefinition, writeReply } from './route.js'
import type { ValidatedBodies } from './validated-bodies.js'

/** What express-openapi-validator leaves on a request it matched to an operation of the contract. */
interface ValidatedRequest {
  readonly openapi?: {
    readonly openApiRoute?: string
    readonly pathParams?: Record<string, string>
    readonly schema?: { readonly operationId?: unknown }
  }
}

/** The contract operation the validator matched `req` to (its path template and operationId), if it did. */
export function validatedOperation(req: object): { readonly template: string; readonly operationId: string } | null {
  const matched = (req as ValidatedRequest).openapi
  const template = matched?.openApiRoute
  const operationId = matched?.schema?.operationId
  return typeof template === 'string' && typeof operationId === 'string' ? { template, operationId } : null
}

/**
 * Hands a request to the handler of the operation the contract validator matched it to: one map lookup, instead
 * of Express walking a route layer per documented path (two per operation with the `/api/v1` mirrors) and matching
 * the path a second time, possibly differently from the validator. A request the validator did not match (it has
 * already answered 404/405 for the paths it manages) falls through to the next middleware. Replies are written by
 * {@link writeReply}, with `validated` remembering the JSON bodies of reads the response validator passed (null
 * when responses are not validated).
 */
export function operationDispatcher(routes: readonly RouteDefinition[], hasPath: (template: string) => boolean, validated: ValidatedBodies | null): RequestHandler {
  /** By `METHOD template`, which also names the operation to the memo of validated bodies. */
  const targets = new Map<string, { readonly route: RouteDefinition; readonly validated: ValidatedBodies | null }>()
  for (const r of routes) {
    // Reads only: a read polled again answers the same bytes, while a write's answer (a new id, a new receipt) is
    // new every time, so remembering it would only push reads out.
    const target = { route: r, validated: r.method === 'get' ? validated : null }
    targets.set(`${r.method.toUpperCase()} ${r.path}`, target)
    if (hasPath(API_PREFIX + r.path)) targets.set(`${r.method.toUpperCase()} ${API_PREFIX}${r.path}`, target)
  }
  return async (req, res, next) => {
    const matched = (req as ValidatedRequest).openapi
    if (matched?.openApiRoute === undefined) return next()
    const operation = `${req.method} ${matched.openApiRoute}`
    const target = targets.get(operation)
    if (target === undefined) return next()
    // Express resets req.params for every middleware layer; the validator's (decoded, coerced) ones are the truth.
    req.params = matched.pathParams ?? {}
    writeReply(res, await target.route.handle(req, res), operation, target.validated)
  }
}
