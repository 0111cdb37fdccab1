import { createRequire } from 'node:module'
import ajvOptionsModule from 'express-openapi-validator/dist/framework/ajv/options.js'
import validatorModule from 'express-openapi-validator/dist/openapi.validator.js'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadContract } from '../../../../src/http/openapi-document.js'
import { OperationIndex } from '../../../../src/http/operation-index.js'
import { indexedOperationLookup, installValidatorPatches } from '../../../../src/http/validator-patches.js'

const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'))
type Handler = (req: object, res: object, next: () => void) => void
const { OpenApiSpecLoader } = fromValidator('./framework/openapi.spec.loader.js') as { OpenApiSpecLoader: new (options: object) => { load(): Promise<object> } }
const { OpenApiContext } = fromValidator('./framework/openapi.context.js') as {
  OpenApiContext: new (spec: object, ignorePaths: unknown, ignoreUndocumented?: boolean) => { openApiRouteMap: Record<string, object> }
}
const { SchemaPreprocessor } = fromValidator('./middlewares/parsers/schema.preprocessor.js') as {
  SchemaPreprocessor: new (apiDoc: object, options: object, responseOptions: object) => { preProcess(): { apiDocRes: object } }
}
const { applyOpenApiMetadata } = fromValidator('./middlewares/openapi.metadata.js') as {
  applyOpenApiMetadata: (context: object, responseApiDoc: object | null) => Handler
}

/** The contract as the validator holds it after loading: its context and its response document. */
async function validatorState(ignoreUndocumented: boolean): Promise<{ context: { openApiRouteMap: Record<string, object> }; responseApiDoc: object }> {
  const spec = (await new OpenApiSpecLoader({
    apiDoc: structuredClone(loadContract().validatorDocument),
    validateApiSpec: false,
    $refParser: { mode: 'bundle' },
  }).load()) as { apiDoc: object }
  const options = new ajvOptionsModule.AjvOptions({ serDes: [], formats: {}, validateFormats: true } as never).preprocessor
  const { apiDocRes } = new SchemaPreprocessor(spec.apiDoc, options, { allErrors: true }).preProcess()
  return { context: new OpenApiContext(spec, undefined, ignoreUndocumented), responseApiDoc: apiDocRes }
}

interface Outcome {
  readonly error?: {
    readonly name: string
    readonly status: unknown
    readonly message: unknown
    readonly path: unknown
    readonly headers: unknown
    readonly errors: unknown
  }
  readonly next?: boolean
  readonly openapi?: Record<string, unknown>
  readonly params?: unknown
}

function run(handler: Handler, method: string, url: string, settings: { sensitive: boolean; strict: boolean }, res: object = {}): Outcome {
  const query = url.indexOf('?')
  const req: Record<string, unknown> = {
    method,
    url,
    originalUrl: url,
    path: query < 0 ? url : url.slice(0, query),
    baseUrl: '',
    params: {},
    app: { enabled: (name: string) => (name === 'case sensitive routing' ? settings.sensitive : name === 'strict routing' ? settings.strict : false) },
  }
  let next = false
  try {
    handler(req, res, () => (next = true))
  } catch (error) {
    const e = error as Record<string, unknown>
    return {
      error: {
        name: (error as Error).constructor.name,
        status: e['status'],
        message: e['message'],
        path: e['path'],
        headers: e['headers'],
        errors: e['errors'],
      },
    }
  }
  return { next, openapi: req['openapi'] as Record<string, unknown> | undefined, params: req['params'] }
}

/** Same outcome, and the same schema objects (not copies) in `req.openapi`. */
function expectSame(actual: Outcome, expected: Outcome, label: string): void {
  expect(actual, label).toEqual(expected)
  if (expected.openapi !== undefined) {
    expect(actual.openapi!['schema'], label).toBe(expected.openapi['schema'])
    expect(actual.openapi!['_responseSchema'], label).toBe(expected.openapi['_responseSchema'])
  }
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE'] as const

/** A path segment: plain, percent-encoded text, a raw (possibly malformed) escape, or odd characters. */
const segment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_.-]{1,24}$/),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map(encodeURIComponent),
  fc.tuple(fc.stringMatching(/^[a-z]{0,4}$/), fc.stringMatching(/^%[0-9A-Fa-fGz]{0,2}$/)).map(([a, b]) => a + b),
  fc.constantFrom('next', 'send', 'artifacts', 'complete', 'v0', 'tasks', 'TASKS', '', '%E2%82', '%C3%A9', 'a;b', 'a,b', '..'),
)

describe('the indexed operation lookup', () => {
  let state: Awaited<ReturnType<typeof validatorState>>
  let templates: string[]
  beforeAll(async () => {
    state = await validatorState(false)
    templates = Object.keys(state.context.openApiRouteMap)
  })

  /** A documented template with its parameters filled in, varied at the edges; or any path at all. */
  const url = (): fc.Arbitrary<string> =>
    fc.oneof(
      fc
        .tuple(
          fc.constantFrom(...templates),
          fc.array(segment, { minLength: 4, maxLength: 4 }),
          fc.constantFrom('', '/', '?x=1', '?', '/?a=%zz', '#f'),
          fc.boolean(),
        )
        .map(([template, values, suffix, upper]) => {
          let i = 0
          const filled = template.replace(/\{[^}]+\}/g, () => values[i++ % values.length]!) + suffix
          return upper ? filled.toUpperCase() : filled
        }),
      fc.array(segment, { minLength: 0, maxLength: 5 }).map((parts) => '/' + parts.join('/')),
    )

  it('answers every request as the validator does: same match, parameters, schemas and errors', () => {
    const original = applyOpenApiMetadata(state.context, state.responseApiDoc)
    const indexed = indexedOperationLookup(state.context as never, state.responseApiDoc as never) as unknown as Handler
    fc.assert(
      fc.property(fc.constantFrom(...METHODS), url(), fc.boolean(), fc.boolean(), (method, path, sensitive, strict) => {
        const settings = { sensitive, strict }
        expectSame(run(indexed, method, path, settings), run(original, method, path, settings), `${method} ${path} ${JSON.stringify(settings)}`)
      }),
      { numRuns: 5000 },
    )
  })

  it("answers the same from the app's own match of the request (res.locals), made once before the validator", () => {
    const original = applyOpenApiMetadata(state.context, state.responseApiDoc)
    const indexed = indexedOperationLookup(state.context as never, state.responseApiDoc as never) as unknown as Handler
    const operations = new OperationIndex(loadContract().document)
    fc.assert(
      fc.property(fc.constantFrom(...METHODS), url(), fc.boolean(), (method, path, strict) => {
        // As the app sets them: case-sensitive routing, and the match made on the path without its query.
        const settings = { sensitive: true, strict }
        const query = path.indexOf('?')
        const res = { locals: { route: operations.match(method, query < 0 ? path : path.slice(0, query)) } }
        expectSame(run(indexed, method, path, settings, res), run(original, method, path, settings), `${method} ${path} ${JSON.stringify(settings)}`)
      }),
      { numRuns: 5000 },
    )
  })

  it('covers what it claims: matches, 405s, 404s, malformed escapes and pass-throughs all occur', () => {
    const indexed = indexedOperationLookup(state.context as never, state.responseApiDoc as never) as unknown as Handler
    const settings = { sensitive: true, strict: true }
    expect(run(indexed, 'GET', '/a2a/tasks/abc%20def?x=1', settings)).toMatchObject({
      next: true,
      openapi: { openApiRoute: '/a2a/tasks/{a2a_task_id}', pathParams: { a2a_task_id: 'abc def' } },
      params: { a2a_task_id: 'abc def' },
    })
    expect(run(indexed, 'POST', '/tasks/t1/complete', settings)).toMatchObject({ next: true, openapi: { openApiRoute: '/tasks/{task_id}/complete' } })
    expect(run(indexed, 'DELETE', '/tasks/t1/complete', settings).error).toMatchObject({ name: 'MethodNotAllowed', status: 405, headers: { Allow: 'POST' } })
    expect(run(indexed, 'GET', '/a2a/tasks/%E2%82', settings).error).toMatchObject({ name: 'BadRequest', status: 400 })
    expect(run(indexed, 'GET', '/no/such/path', settings).error).toMatchObject({ name: 'NotFound', status: 404 })
  })

  it('passes undocumented paths and methods through when told to ignore them, as the validator does', async () => {
    const lenient = await validatorState(true)
    const original = applyOpenApiMetadata(lenient.context, lenient.responseApiDoc)
    const indexed = indexedOperationLookup(lenient.context as never, lenient.responseApiDoc as never) as unknown as Handler
    const settings = { sensitive: true, strict: true }
    for (const [method, path] of [
      ['GET', '/no/such/path'],
      ['DELETE', '/tasks/t1/complete'],
      ['GET', '/health'],
    ] as const) {
      const outcome = run(indexed, method, path, settings)
      expectSame(outcome, run(original, method, path, settings), `${method} ${path}`)
      if (path !== '/health') expect(outcome).toEqual({ next: true, openapi: undefined, params: {} })
    }
  })

  it('is what the validator uses once installed, and installing twice changes nothing', () => {
    installValidatorPatches()
    const prototype = validatorModule.OpenApiValidator.prototype as unknown as { metadataMiddleware: unknown }
    const installed = prototype.metadataMiddleware
    installValidatorPatches()
    expect(prototype.metadataMiddleware).toBe(installed)
    expect((installed as { indexed?: boolean }).indexed).toBe(true)
  })
})
