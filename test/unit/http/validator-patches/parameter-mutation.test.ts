import { createRequire } from 'node:module'
import ajvOptionsModule from 'express-openapi-validator/dist/framework/ajv/options.js'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadContract } from '../../../../src/http/openapi-document.js'
import {
  installValidatorPatches,
  leavesUnchangedWithoutQuery,
  modifyRequestAsShipped,
  mutationSkippedWhenUnchanged,
} from '../../../../src/http/validator-patches.js'

const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'))
const { OpenApiSpecLoader } = fromValidator('./framework/openapi.spec.loader.js') as {
  OpenApiSpecLoader: new (options: object) => { load(): Promise<{ apiDoc: ApiDoc }> }
}
const { RequestValidator } = fromValidator('./middlewares/openapi.request.validator.js') as {
  RequestValidator: new (apiDoc: object, options: object) => { ajv: unknown; apiDoc: object }
}
type Mutator = { modifyRequest(req: object): void; ajv: unknown; _apiDocs: unknown; handleBracketNotationQueryFields(query: unknown): unknown }
const { RequestParameterMutator } = fromValidator('./middlewares/parsers/req.parameter.mutator.js') as {
  RequestParameterMutator: new (ajv: unknown, apiDoc: object, path: string, parsedSchema: object) => Mutator
}

interface Parameter {
  readonly in?: string
  readonly name?: string
  readonly $ref?: string
}
interface Operation {
  readonly parameters?: readonly Parameter[]
}
interface ApiDoc {
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>
  readonly components?: { readonly parameters?: Readonly<Record<string, Parameter>> }
}

/** The contract as the request validator holds it, with the validator's own ajv for its requests. */
async function loaded(apiDoc: object): Promise<{ apiDoc: ApiDoc; ajv: unknown }> {
  const spec = await new OpenApiSpecLoader({ apiDoc: structuredClone(apiDoc), validateApiSpec: false, $refParser: { mode: 'bundle' } }).load()
  // The options the app gives the validator (app.ts), as the validator turns them into its request ajv's.
  const options = new ajvOptionsModule.AjvOptions({
    serDes: [],
    formats: {},
    validateFormats: true,
    validateRequests: { allErrors: true, allowUnknownQueryParameters: true },
  } as never).request
  const validator = new RequestValidator(spec.apiDoc, options)
  return { apiDoc: validator.apiDoc as ApiDoc, ajv: validator.ajv }
}

function operationsOf(apiDoc: ApiDoc): { label: string; path: string; operation: Operation }[] {
  return Object.entries(apiDoc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => ({ label: `${method.toUpperCase()} ${path}`, path, operation })),
  )
}

/** A request of `operation`: every parameter given a value with a comma and JSON-looking text, where its kind reads it. */
function requestFor(apiDoc: ApiDoc, path: string, operation: Operation, query: string): Record<string, unknown> {
  const params: Record<string, string> = {}
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  const cookies: Record<string, string> = {}
  for (const declared of operation.parameters ?? []) {
    const parameter = declared.$ref ? (apiDoc.components?.parameters?.[declared.$ref.replace(/^.+\//, '')] ?? {}) : declared
    const name = parameter.name ?? ''
    if (parameter.in === 'path') params[name] = 'a,b'
    if (parameter.in === 'header') headers[name.toLowerCase()] = '["a","b"],c'
    if (parameter.in === 'cookie') cookies[name] = '{"a":1}'
  }
  const url = path.replace(/\{[^}]+\}/g, 'a,b') + query
  return {
    originalUrl: url,
    url,
    method: 'GET',
    query: Object.fromEntries(new URLSearchParams(query.slice(1))),
    params,
    headers,
    cookies,
    body: {},
    openapi: { schema: operation },
  }
}

/** What the mutator did: the request's fields after it, or the error it threw. */
function outcome(run: (req: object) => void, req: Record<string, unknown>): unknown {
  try {
    run(req)
  } catch (error) {
    return { threw: (error as Error).message }
  }
  const { query, params, headers, cookies, body } = req
  return structuredClone({ query, params, headers, cookies, body })
}

function compare(apiDoc: ApiDoc, ajv: unknown, path: string, operation: Operation, query: string): { shipped: unknown; patched: unknown } {
  const mutator = () => new RequestParameterMutator(ajv, apiDoc, path, { query: { properties: {} }, headers: { properties: {} }, params: { properties: {} } })
  return {
    shipped: outcome((req) => modifyRequestAsShipped.call(mutator() as never, req as never), requestFor(apiDoc, path, operation, query)),
    patched: outcome((req) => mutator().modifyRequest(req), requestFor(apiDoc, path, operation, query)),
  }
}

describe('the parameter mutator, skipped where it changes nothing (patch 7)', () => {
  let contract: { apiDoc: ApiDoc; ajv: unknown }

  beforeAll(async () => {
    installValidatorPatches()
    contract = await loaded(loadContract().validatorDocument)
  })

  it('is installed by installValidatorPatches', () => {
    expect(mutationSkippedWhenUnchanged()).toBe(true)
  })

  it('leaves every operation of the contract exactly as the shipped mutator does, with and without a query', () => {
    const operations = operationsOf(contract.apiDoc)
    expect(operations.length).toBeGreaterThan(40)
    for (const { label, path, operation } of operations) {
      for (const query of ['', '?limit=2&status=open&tags=a,b&filter[x]=1', '?']) {
        const { shipped, patched } = compare(contract.apiDoc, contract.ajv, path, operation, query)
        expect(patched, `${label}${query}`).toEqual(shipped)
      }
    }
  })

  it('skips the hot reads and writes of the contract (only scalar parameters), and not every operation', () => {
    const mutator = new RequestParameterMutator(contract.ajv, contract.apiDoc, '', {})
    const skipped = operationsOf(contract.apiDoc).filter(({ operation }) => leavesUnchangedWithoutQuery(mutator, operation))
    const labels = skipped.map(({ label }) => label)
    expect(labels).toContain('GET /a2a/tasks/{a2a_task_id}')
    expect(labels).toContain('POST /a2a/tasks/send')
    expect(labels).toContain('GET /tasks/{task_id}')
  })

  describe('on parameters the mutator does reshape', () => {
    const document = (parameter: object) => ({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/things/{id}': {
          get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }, parameter], responses: { 200: { description: 'ok' } } },
        },
      },
    })
    const cases: [string, object][] = [
      ['a header array', { name: 'X-List', in: 'header', style: 'simple', schema: { type: 'array', items: { type: 'string' } } }],
      ['a header with content', { name: 'X-Json', in: 'header', content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } } } } }],
      ['a cookie object', { name: 'prefs', in: 'cookie', schema: { type: 'object', properties: { a: { type: 'integer' } } } }],
      ['a query object', { name: 'filter', in: 'query', style: 'deepObject', schema: { type: 'object', properties: { x: { type: 'string' } } } }],
      ['a query oneOf', { name: 'either', in: 'query', schema: { oneOf: [{ type: 'string' }, { type: 'integer' }] } }],
    ]
    it.each(cases)('%s: the operation is not skipped, and the answers stay the shipped ones', async (_label, parameter) => {
      const { apiDoc, ajv } = await loaded(document(parameter))
      const operation = apiDoc.paths['/things/{id}']?.['get'] as Operation
      expect(leavesUnchangedWithoutQuery(new RequestParameterMutator(ajv, apiDoc, '', {}), operation)).toBe(false)
      for (const query of ['', '?filter[x]=1&either=2']) {
        const { shipped, patched } = compare(apiDoc, ajv, '/things/{id}', operation, query)
        expect(patched).toEqual(shipped)
      }
    })

    it('a header array is split by the shipped mutator even without a query, so skipping it would change the request', async () => {
      const { apiDoc, ajv } = await loaded(document(cases[0]![1]))
      const operation = apiDoc.paths['/things/{id}']?.['get'] as Operation
      const { shipped } = compare(apiDoc, ajv, '/things/{id}', operation, '')
      expect((shipped as { headers: Record<string, unknown> }).headers['x-list']).toEqual(['["a"', '"b"]', 'c'])
    })
  })
})
