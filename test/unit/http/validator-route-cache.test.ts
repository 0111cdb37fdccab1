import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { compactValidatorRouteMap, memoizeValidatorRouteCompilation } from '../../../src/http/validator-route-cache.js'

type Compiled = { regexp: RegExp; keys: { name: string }[] }
const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'))
const pathToRegexpModule = fromValidator('path-to-regexp') as { pathToRegexp: (path: unknown, options?: Record<string, unknown>) => Compiled }

describe('memoizeValidatorRouteCompilation', () => {
  memoizeValidatorRouteCompilation()
  memoizeValidatorRouteCompilation() // idempotent
  const compile = (path: unknown, options?: Record<string, unknown>): Compiled => pathToRegexpModule.pathToRegexp(path, options)

  it('compiles a template once per option set and matches as the original does', () => {
    const a = compile('/tasks/:task_id', { sensitive: false, strict: false })
    expect(compile('/tasks/:task_id', { strict: false, sensitive: false })).toBe(a)
    expect(a.regexp.exec('/tasks/abc')?.[1]).toBe('abc')
    expect(a.regexp.exec('/TASKS/abc')?.[1]).toBe('abc')
    const sensitive = compile('/tasks/:task_id', { sensitive: true, strict: false })
    expect(sensitive).not.toBe(a)
    expect(sensitive.regexp.exec('/TASKS/abc')).toBeNull()
    expect(compile('/tasks/:task_id', { sensitive: false, strict: false, extra: undefined })).toBe(a)
    expect(compile('/other/:id', { sensitive: false, strict: false })).not.toBe(a)
  })

  it('does not cache options it cannot compare by value', () => {
    const options = { sensitive: false, strict: false, nested: { x: 1 } }
    expect(compile('/tasks/:task_id', options)).not.toBe(compile('/tasks/:task_id', options))
  })
})

type RouteDetails = { basePath: string; _openApiRoute: string; _expressRoute: string; [method: string]: unknown }
interface Context {
  expressRouteMap: Record<string, RouteDetails>
  openApiRouteMap: Record<string, RouteDetails>
  routePair(route: string): { expressRoute: string; openApiRoute: string } | null
  methods(route: string): RouteDetails | undefined
}
const { OpenApiContext } = fromValidator('./framework/openapi.context.js') as {
  OpenApiContext: new (spec: unknown, ignorePaths: unknown, ignoreUndocumented?: boolean, useRequestUrl?: boolean) => Context
}

describe('compactValidatorRouteMap', () => {
  // The validator walks routes in this order and takes the first match, so the order is part of the behaviour.
  const paths = ['/.well-known/agent.json', '/a2a/tasks/send', '/a2a/tasks/{id}', '/api/v1/a2a/tasks/{id}', '/tasks/{task_id}/claim', '/123']
  const routes = paths.flatMap((openApiRoute) => {
    const expressRoute = openApiRoute.replace(/\{([^}]+)\}/g, ':$1')
    return ['GET', 'POST'].map((method) => ({ basePath: '', expressRoute, openApiRoute, method, pathParams: [] }))
  })
  const apiDoc = { paths: Object.fromEntries(paths.map((p) => [p, { get: { operationId: `get ${p}` }, post: { operationId: `post ${p}` } }])) }
  const spec = { apiDoc, basePaths: [''], routes, serial: 1 }
  const before = new OpenApiContext(spec, undefined)
  compactValidatorRouteMap()
  compactValidatorRouteMap() // idempotent: a second call must not wrap the build twice
  const after = new OpenApiContext(spec, undefined)

  it('keeps the same routes, in the same order, with the same details', () => {
    expect(Object.keys(after.expressRouteMap)).toEqual(Object.keys(before.expressRouteMap))
    expect(Object.keys(after.expressRouteMap)).toContain('/a2a/tasks/:id')
    expect(after.expressRouteMap).toEqual(before.expressRouteMap)
    expect(after.expressRouteMap['/a2a/tasks/:id']?.['GET']).toEqual({ operationId: 'get /a2a/tasks/{id}' })
  })

  it('shares each route\'s details with the map by OpenAPI path, as the validator expects', () => {
    for (const [expressRoute, details] of Object.entries(after.expressRouteMap)) {
      expect(after.openApiRouteMap[details._openApiRoute]).toBe(details)
      expect(after.routePair(expressRoute)).toEqual({ expressRoute, openApiRoute: details._openApiRoute })
    }
    expect(after.methods('/tasks/{task_id}/claim')).toBe(after.expressRouteMap['/tasks/:task_id/claim'])
  })
})
