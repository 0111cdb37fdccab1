import type { Server } from 'node:http'
import express from 'express'
import * as OpenApiValidator from 'express-openapi-validator'
import specLoaderModule from 'express-openapi-validator/dist/framework/openapi.spec.loader.js'
import validatorModule from 'express-openapi-validator/dist/openapi.validator.js'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { installMiddlewareAsShipped, installValidatorPatches, validationInOneStep } from '../../../../src/http/validator-patches.js'

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'one step', version: '1' },
  paths: {
    '/items': {
      post: {
        operationId: 'createItem',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string', minLength: 1 } } },
            },
          },
        },
        responses: {
          '201': {
            description: 'created',
            content: { 'application/json': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } } },
          },
        },
      },
    },
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': { description: 'one', content: { 'application/json': { schema: { type: 'object', required: ['id'] } } } } },
      },
    },
  },
}

type Options = Parameters<typeof OpenApiValidator.middleware>[0]
const OPTIONS: Options = {
  apiSpec: DOCUMENT as never,
  validateRequests: { allErrors: true, allowUnknownQueryParameters: true },
  validateResponses: { allErrors: true },
  validateSecurity: false,
  fileUploader: false,
}

/** The validator's middlewares as it ships them (five, each waiting on the document), built like its own `middleware()`. */
function asShipped(options: Options): express.RequestHandler[] {
  const validator = new validatorModule.OpenApiValidator(options)
  const loader = new specLoaderModule.OpenApiSpecLoader({ apiDoc: structuredClone(options.apiSpec) as never, validateApiSpec: true })
  return installMiddlewareAsShipped.call(validator as never, loader.load() as never)
}

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
})

/** An app with the given validator middlewares and handlers that answer what the request asks (`?answer=bad`). */
async function serve(middlewares: express.RequestHandler[]): Promise<string> {
  const app = express()
  app.use(express.json())
  app.use(middlewares)
  app.post('/items', (req, res) => void res.status(201).json(req.query['answer'] === 'bad' ? { id: 7 } : { id: 'a' }))
  app.get('/items/:id', (req, res) => void res.status(200).json({ id: req.params['id'], type: typeof (req as { openapi?: { pathParams?: unknown } }).openapi }))
  app.use(
    (
      err: Error & { status?: number; headers?: Record<string, string>; errors?: unknown },
      _req: express.Request,
      res: express.Response,
      _next: express.NextFunction,
    ) => {
      for (const [name, value] of Object.entries(err.headers ?? {})) res.setHeader(name, value)
      res.status(err.status ?? 500).json({ message: err.message, errors: err.errors ?? null })
    },
  )
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  servers.push(server)
  const address = server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
}

const REQUESTS: readonly [string, string, RequestInit?][] = [
  ['a valid body', '/items', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' }],
  ['a body the schema refuses', '/items', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"","extra":1}' }],
  ['a media type the operation does not take', '/items', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }],
  ['a response the contract refuses', '/items?answer=bad', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' }],
  ['a path parameter of the wrong type', '/items/abc'],
  ['a path parameter of the right type', '/items/12'],
  ['a method the path does not have', '/items', { method: 'DELETE' }],
  ['an undocumented path', '/elsewhere'],
]

describe('express-openapi-validator as one synchronous middleware', () => {
  beforeAll(() => installValidatorPatches())

  it('is installed: middleware() gives one middleware instead of five', () => {
    expect(validationInOneStep()).toBe(true)
    expect(OpenApiValidator.middleware(OPTIONS)).toHaveLength(1)
    expect(asShipped(OPTIONS)).toHaveLength(5)
  })

  it.each(REQUESTS)('answers %s exactly as the shipped middlewares do (status, message, errors, Allow)', async (_name, path, init) => {
    const [patched, shipped] = await Promise.all([serve(OpenApiValidator.middleware(OPTIONS)), serve(asShipped(OPTIONS))])
    const answer = async (base: string) => {
      // Twice: the first request waits for the document, later ones run synchronously.
      const outcomes = []
      for (let i = 0; i < 2; i++) {
        const response = await fetch(base + path, init)
        outcomes.push({ status: response.status, allow: response.headers.get('allow'), body: await response.text() })
      }
      return outcomes
    }
    const [mine, theirs] = await Promise.all([answer(patched), answer(shipped)])
    expect(mine).toEqual(theirs)
    expect(mine[0]).toEqual(mine[1])
  })

  it('a document that cannot be loaded is the error of every request, as with the shipped middlewares', async () => {
    const broken: Options = {
      ...OPTIONS,
      apiSpec: { openapi: '3.1.0', info: { title: 'broken', version: '1' }, paths: { '/x': { $ref: './missing.yaml#/X' } } } as never,
    }
    const [patched, shipped] = await Promise.all([serve(OpenApiValidator.middleware(broken)), serve(asShipped(broken))])
    for (let i = 0; i < 2; i++) {
      const [mine, theirs] = await Promise.all([fetch(patched + '/x'), fetch(shipped + '/x')])
      expect(mine.status).toBe(theirs.status)
      expect(mine.status).toBeGreaterThanOrEqual(400)
      expect(await mine.text()).toBe(await theirs.text())
    }
  })
})
