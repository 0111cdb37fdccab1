import { createRequire } from 'node:module'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import typesModule from 'express-openapi-validator/dist/framework/types.js'
import preprocessorModule from 'express-openapi-validator/dist/middlewares/parsers/schema.preprocessor.js'
import validatorModule from 'express-openapi-validator/dist/openapi.validator.js'

/** The parts of express-openapi-validator's OpenApiContext the operation lookup reads. */
interface ValidatorContext {
  readonly expressRouteMap: Readonly<Record<string, { readonly basePath: string }>>
  readonly openApiRouteMap: Readonly<Record<string, object>>
  readonly apiDoc: { readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>> }
  readonly serial: number
  readonly useRequestUrl: boolean
  readonly ignoreUndocumented: boolean
  routePair(route: string): { readonly expressRoute: string; readonly openApiRoute: string } | null
  shouldIgnoreRoute(path: string): boolean
  isManagedRoute(path: string): boolean
}
type ResponseDocument = { readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>> } | null | undefined
type PathToRegexp = (path: string, options: { sensitive: boolean; strict: boolean }) => { readonly regexp: RegExp; readonly keys: readonly { readonly name: string }[] }
type ValidatorPrototype = { metadataMiddleware: ((context: ValidatorContext, responseApiDoc: ResponseDocument) => RequestHandler) & { readonly indexed?: true } }

/** `require` as express-openapi-validator's own files resolve it: the path-to-regexp instance the validator uses. */
const requireFromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'))

/** One documented route, in the validator's order, with everything a lookup needs computed once. */
interface IndexedRoute {
  readonly expressRoute: string
  readonly openApiRoute: string
  readonly regexp: RegExp
  readonly paramNames: readonly string[]
  /** The path item of the request document, and of the response document when responses are validated. */
  readonly pathItem: Readonly<Record<string, unknown>>
  readonly responsePathItem: Readonly<Record<string, unknown>> | undefined
}

function indexRoutes(context: ValidatorContext, responseApiDoc: ResponseDocument, options: { sensitive: boolean; strict: boolean }): readonly IndexedRoute[] {
  const { pathToRegexp } = requireFromValidator('path-to-regexp') as { pathToRegexp: PathToRegexp }
  return Object.entries(context.expressRouteMap).map(([expressRoute, methods]) => {
    const openApiRoute = context.routePair(expressRoute)!.openApiRoute
    const pathKey = openApiRoute.substring(methods.basePath.length)
    const compiled = pathToRegexp(expressRoute, options)
    return {
      expressRoute,
      openApiRoute,
      regexp: compiled.regexp,
      paramNames: compiled.keys.map((key) => key.name),
      pathItem: context.apiDoc.paths[pathKey]!,
      responsePathItem: responseApiDoc?.paths[pathKey],
    }
  })
}

interface Match {
  readonly route: IndexedRoute
  readonly pathParams: Record<string, string>
}

function findRoute(routes: readonly IndexedRoute[], path: string, req: Request): Match | null {
  for (const route of routes) {
    const found = route.regexp.exec(path)
    if (found === null) continue
    const pathParams: Record<string, string> = {}
    try {
      for (let i = 0; i < route.paramNames.length; i++) pathParams[route.paramNames[i]!] = decodeURIComponent(found[i + 1]!)
    } catch {
      // The validator's own text, quote included, so that the answer is the same as before.
      throw new typesModule.BadRequest({ path: req.path, message: `malformed uri'` })
    }
    return { route, pathParams }
  }
  return null
}

/**
 * The validator's metadata middleware, which finds the documented operation of each request, with the same
 * answers and a lookup that costs a fraction of the original's. The original walks the route map on every request
 * and, for each route in turn until one matches, builds its entries, pair, path key and options anew (and
 * compiles or fetches its pattern): in a loop, 12 µs for `GET /a2a/tasks/{id}` (the 10th route) and 26 µs for
 * `/health` (the 41st); 28 µs median for that GET inside a running server, more for the later routes. Here the
 * routes are prepared once per routing option pair, in the same order, and a lookup only runs their expressions.
 * Everything else is as in the validator: first match in that order, parameters URI-decoded (a malformed escape is
 * its 400), 405 with `Allow` for a documented path without that method, 404 for an undocumented path under a base
 * path, the same `req.openapi` (with the very schema objects) and `req.params`.
 */
export function indexedOperationLookup(context: ValidatorContext, responseApiDoc: ResponseDocument): RequestHandler {
  // One prepared table per routing-option pair, at index (sensitive ? 2 : 0) + (strict ? 1 : 0).
  const byOptions: (readonly IndexedRoute[] | undefined)[] = [undefined, undefined, undefined, undefined]
  return (req: Request, _res: Response, next: NextFunction): void => {
    const path = req.path.startsWith(req.baseUrl) ? req.path : `${req.baseUrl}/${req.path}`
    if (context.shouldIgnoreRoute(path)) return next()
    // Read per request, as the validator does: the app's settings decide how its paths match.
    const sensitive = Boolean(req.app.enabled('case sensitive routing'))
    const strict = Boolean(req.app.enabled('strict routing'))
    const slot = (sensitive ? 2 : 0) + (strict ? 1 : 0)
    const routes = (byOptions[slot] ??= indexRoutes(context, responseApiDoc, { sensitive, strict }))
    const url = context.useRequestUrl ? req.url : req.originalUrl
    const query = url.indexOf('?')
    const matched = findRoute(routes, query < 0 ? url : url.slice(0, query), req)
    if (matched === null) {
      if (context.isManagedRoute(path) && !context.ignoreUndocumented) throw new typesModule.NotFound({ path: req.path, message: 'not found' })
      return next()
    }
    const { route, pathParams } = matched
    const method = req.method.toLowerCase()
    const schema = route.pathItem[method]
    if (!schema) {
      if (context.ignoreUndocumented) return next()
      const allowed = Object.keys(context.openApiRouteMap[route.openApiRoute] ?? {}).filter((key) => preprocessorModule.httpMethods.has(key.toLowerCase()))
      throw new typesModule.MethodNotAllowed({ path: req.path, message: `${req.method} method not allowed`, headers: { Allow: allowed.join(', ') } })
    }
    const openapi: Record<string, unknown> = { expressRoute: route.expressRoute, openApiRoute: route.openApiRoute, pathParams, schema, serial: context.serial }
    if (responseApiDoc) openapi['_responseSchema'] = route.responsePathItem?.[method]
    ;(req as Request & { openapi?: unknown }).openapi = openapi
    req.params = pathParams
    next()
  }
}

/** Makes express-openapi-validator use {@link indexedOperationLookup} as its metadata middleware. Idempotent. */
export function indexValidatorOperationLookup(): void {
  const prototype = validatorModule.OpenApiValidator.prototype as unknown as ValidatorPrototype
  if (prototype.metadataMiddleware.indexed) return
  prototype.metadataMiddleware = Object.assign((context: ValidatorContext, responseApiDoc: ResponseDocument) => indexedOperationLookup(context, responseApiDoc), { indexed: true as const })
}
