import type { RequestHandler } from 'express'
import { API_PREFIX, type OperationIndex } from './operation-index.js'
import { type RouteDefinition, writeReply } from './route.js'
import type { EventStreams } from './sse.js'
import type { ValidatedBodies } from './validated-bodies.js'

/** What express-openapi-validator leaves on a request it matched to an operation of the contract. */
interface ValidatedRequest {
  readonly openapi?: {
    readonly openApiRoute?: string
    readonly pathParams?: Record<string, string>
  }
}

interface Target {
  readonly route: RouteDefinition
  readonly validated: ValidatedBodies | null
}

/**
 * Pairs every operation of the contract with its handler, and fails loudly when they do not pair up: a handler
 * naming an operation the contract does not have (or with another method or path), two handlers for one
 * operation, an operation without a handler. An `/api/v1` mirror is served by the handler of the operation at the
 * same method and path without the prefix. Keyed by `METHOD template`, which also names the operation to the memo
 * of validated bodies.
 */
export function pairHandlers(operations: OperationIndex, routes: readonly RouteDefinition[], validated: ValidatedBodies | null): ReadonlyMap<string, Target> {
  const problems: string[] = []
  const byOperationId = new Map<string, RouteDefinition>()
  for (const r of routes) {
    const operation = operations.operation(r.operationId)
    const declared = `${r.method.toUpperCase()} ${r.path}`
    if (operation === undefined) problems.push(`a handler for ${declared} names ${r.operationId}, which openapi.yaml does not have`)
    else if (`${operation.method} ${operation.template}` !== declared)
      problems.push(`the handler of ${r.operationId} says ${declared}, openapi.yaml says ${operation.method} ${operation.template}`)
    if (byOperationId.has(r.operationId)) problems.push(`two handlers for ${r.operationId}`)
    byOperationId.set(r.operationId, r)
  }
  const byKey = new Map([...byOperationId.values()].map((r) => [`${r.method.toUpperCase()} ${r.path}`, r]))
  const targets = new Map<string, Target>()
  for (const operation of operations.operations) {
    const key = `${operation.method} ${operation.template}`
    const mirrored = operation.template.startsWith(API_PREFIX + '/')
      ? byKey.get(`${operation.method} ${operation.template.slice(API_PREFIX.length)}`)
      : undefined
    const route = byOperationId.get(operation.operationId) ?? mirrored
    if (route === undefined) {
      problems.push(`${operation.operationId} (${key}) has no handler`)
      continue
    }
    // Reads only: a read polled again answers the same bytes, while a write's answer (a new id, a new receipt) is
    // new every time, so remembering it would only push reads out.
    targets.set(key, { route, validated: route.method === 'get' ? validated : null })
  }
  if (problems.length > 0) throw new Error(`The handlers do not match openapi.yaml:\n- ${problems.join('\n- ')}`)
  return targets
}

/**
 * Hands a request to the handler of the operation the contract validator matched it to: one map lookup, instead
 * of Express walking a route layer per documented path. A request the validator did not match (it has already
 * answered 404/405 for the paths it manages) falls through to the next middleware. Replies are written by
 * {@link writeReply}, with `validated` remembering the JSON bodies of reads the response validator passed (null
 * when responses are not validated); Server-Sent Events streams are written by `streams`.
 */
export function operationDispatcher(targets: ReadonlyMap<string, Target>, streams?: EventStreams): RequestHandler {
  return async (req, res, next) => {
    const matched = (req as ValidatedRequest).openapi
    if (matched?.openApiRoute === undefined) return next()
    const operation = `${req.method} ${matched.openApiRoute}`
    const target = targets.get(operation)
    if (target === undefined) return next()
    // Express resets req.params for every middleware layer; the validator's (decoded, coerced) ones are the truth.
    req.params = matched.pathParams ?? {}
    let reply: Awaited<ReturnType<typeof target.route.handle>>
    try {
      reply = await target.route.handle(req, res)
    } catch (error) {
      // Answered 503 at the request deadline (Admission.deadline) while the handler still worked: nothing to add.
      if (res.locals['deadlinePassed'] === true) return
      throw error
    }
    if (res.locals['deadlinePassed'] === true) return
    writeReply(res, reply, operation, target.validated, streams)
  }
}
