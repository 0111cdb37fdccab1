import type { Server } from 'node:http'
import express from 'express'
import * as OpenApiValidator from 'express-openapi-validator'
import schemaValidatorModule from 'express-openapi-validator/dist/framework/openapi.schema.validator.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deferOpenApiSchemaCompilation, openApiSchemaCompilationDeferred } from '../../../src/http/validator-spec-check.js'

const VALID = {
  openapi: '3.1.0',
  info: { title: 'spec check', version: '1' },
  paths: { '/ping': { get: { operationId: 'ping', responses: { '200': { description: 'pong' } } } } },
}
/** `info` without `version`, and a response without `description`: refused by the OpenAPI schema. */
const INVALID = {
  openapi: '3.1.0',
  info: { title: 'spec check' },
  paths: { '/ping': { get: { operationId: 'ping', responses: { '200': {} } } } },
}

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
  vi.restoreAllMocks()
})

/** GET /ping through express-openapi-validator on `document`: the status, and the error the validator raised, if any. */
async function ping(document: object, validateApiSpec: boolean): Promise<{ status: number; error: string | null }> {
  const app = express()
  let error: string | null = null
  app.use(OpenApiValidator.middleware({ apiSpec: document as never, validateApiSpec, validateRequests: true, validateResponses: false }))
  app.get('/ping', (_req, res) => void res.status(200).end())
  app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    error = err.message
    res.status(500).end()
  })
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  servers.push(server)
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const response = await fetch(`http://127.0.0.1:${port}/ping`)
  return { status: response.status, error }
}

describe("express-openapi-validator's check of the OpenAPI document, compiled on first use", () => {
  it('is in place once deferred, and deferring twice changes nothing', () => {
    deferOpenApiSchemaCompilation()
    const first = schemaValidatorModule.OpenAPISchemaValidator
    deferOpenApiSchemaCompilation()
    expect(openApiSchemaCompilationDeferred()).toBe(true)
    expect(schemaValidatorModule.OpenAPISchemaValidator).toBe(first)
  })

  it('still refuses an invalid document when validateApiSpec is on', async () => {
    deferOpenApiSchemaCompilation()
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const refused = await ping(INVALID, true)
    expect(refused.status).toBe(500)
    expect(refused.error).toMatch(/apiDoc was invalid/)
    expect(await ping(VALID, true)).toEqual({ status: 200, error: null })
  })

  it('reports the same errors as before when called directly', () => {
    deferOpenApiSchemaCompilation()
    const validator = new schemaValidatorModule.OpenAPISchemaValidator({ version: '3.1.0', validateApiSpec: true })
    expect(validator.validate(VALID as never).errors).toEqual([])
    const errors = validator.validate(INVALID as never).errors ?? []
    expect(errors.map((e) => e.instancePath)).toEqual(expect.arrayContaining(['/info']))
  })

  it('serves requests without checking the document when validateApiSpec is off', async () => {
    deferOpenApiSchemaCompilation()
    expect(await ping(VALID, false)).toEqual({ status: 200, error: null })
  })
})
