import { describe, expect, it } from 'vitest'
import type { OpenApiDocument } from '../../../src/http/openapi-document.js'
import { pairHandlers } from '../../../src/http/dispatch.js'
import { OperationIndex } from '../../../src/http/operation-index.js'
import type { RouteDefinition } from '../../../src/http/route.js'

const operation = (operationId: string) => ({
  operationId,
  'x-permission': 'any',
  'x-rate-limit-bucket': 'default_read',
  responses: { '200': { description: 'ok' } },
})
const index = new OperationIndex({
  openapi: '3.2.0',
  security: [{ bearer: [] }],
  paths: {
    '/things': { get: operation('listThings') },
    '/api/v1/things': { get: operation('listThingsApiV1') },
    '/things/{id}': { get: operation('getThing') },
  },
} as OpenApiDocument)

/** A handler as the handler files declare one (`route()`), for operations of the small document above. */
const handler = (operationId: string, method: 'get' | 'post', path: string): RouteDefinition => ({
  operationId: operationId as never,
  method,
  path,
  handle: async () => ({ status: 200 }),
})
const complete = [handler('listThings', 'get', '/things'), handler('getThing', 'get', '/things/{id}')]

describe('pairing handlers with the operations of the contract', () => {
  it('pairs each operation with its handler, and an /api/v1 mirror with the handler of the path without the prefix', () => {
    const targets = pairHandlers(index, complete, null)
    expect([...targets.keys()].sort()).toEqual(['GET /api/v1/things', 'GET /things', 'GET /things/{id}'])
    expect(targets.get('GET /api/v1/things')?.route).toBe(complete[0])
  })

  it.each([
    ['an operation without a handler', { given: [complete[0]!], want: /getThing \(GET \/things\/\{id\}\) has no handler/ }],
    [
      'a handler naming no operation of the contract',
      {
        given: [...complete, handler('deleteThing', 'post', '/things/{id}/delete')],
        want: /a handler for POST \/things\/\{id\}\/delete names deleteThing, which openapi\.yaml does not have/,
      },
    ],
    [
      'a handler at another path than its operation',
      { given: [handler('listThings', 'get', '/thing'), complete[1]!], want: /the handler of listThings says GET \/thing, openapi\.yaml says GET \/things/ },
    ],
    [
      'a handler with another method than its operation',
      {
        given: [handler('listThings', 'post', '/things'), complete[1]!],
        want: /the handler of listThings says POST \/things, openapi\.yaml says GET \/things/,
      },
    ],
    ['two handlers for one operation', { given: [...complete, handler('getThing', 'get', '/things/{id}')], want: /two handlers for getThing/ }],
  ] as const)('fails at start-up on %s', (_name, { given, want }) => {
    expect(() => pairHandlers(index, given, null)).toThrow(want)
  })
})
