import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import { routeIfMatched } from './operation-index.js'

/**
 * Refuses a path with a trailing slash (other than `/` itself) as not found, before anything decides by the path.
 * The contract's paths have none, authentication and authorisation compare paths exactly, but the validator's
 * router (path-to-regexp 8) also matches a template followed by one slash: without this, `/lineage/envelope/` or
 * `/metrics/` would be routed to the operation while the access checks saw another path.
 */
export function exactPaths(): RequestHandler {
  return (req, res, next) => {
    const path = req.path
    if (path.length > 1 && path.endsWith('/') && routeIfMatched(res)?.path?.template !== path) throw new AppError('not_found', 'Not Found')
    next()
  }
}
