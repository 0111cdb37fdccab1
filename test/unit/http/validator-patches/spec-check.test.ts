import schemaValidatorModule from 'express-openapi-validator/dist/framework/openapi.schema.validator.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { installValidatorPatches, openApiSchemaCompilationDeferred } from '../../../../src/http/validator-patches.js'
import { validatorPingPerTest } from '../../../helpers/validator-ping.js'

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

const ping = validatorPingPerTest()
afterEach(() => {
  vi.restoreAllMocks()
})

describe("express-openapi-validator's check of the OpenAPI document, compiled on first use", () => {
  it('is in place once deferred, and deferring twice changes nothing', () => {
    installValidatorPatches()
    const first = schemaValidatorModule.OpenAPISchemaValidator
    installValidatorPatches()
    expect(openApiSchemaCompilationDeferred()).toBe(true)
    expect(schemaValidatorModule.OpenAPISchemaValidator).toBe(first)
  })

  it('still refuses an invalid document when validateApiSpec is on', async () => {
    installValidatorPatches()
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const refused = await ping(INVALID, true)
    expect(refused.status).toBe(500)
    expect(refused.error).toMatch(/apiDoc was invalid/)
    expect(await ping(VALID, true)).toEqual({ status: 200, error: null })
  })

  it('reports the same errors as before when called directly', () => {
    installValidatorPatches()
    const validator = new schemaValidatorModule.OpenAPISchemaValidator({ version: '3.1.0', validateApiSpec: true })
    expect(validator.validate(VALID as never).errors).toEqual([])
    const errors = validator.validate(INVALID as never).errors ?? []
    expect(errors.map((e) => e.instancePath)).toEqual(expect.arrayContaining(['/info']))
  })

  it('serves requests without checking the document when validateApiSpec is off', async () => {
    installValidatorPatches()
    expect(await ping(VALID, false)).toEqual({ status: 200, error: null })
  })
})
