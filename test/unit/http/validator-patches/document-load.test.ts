import { isDeepStrictEqual } from 'node:util'
import frameworkModule from 'express-openapi-validator/dist/framework/index.js'
import ajvOptionsModule from 'express-openapi-validator/dist/framework/ajv/options.js'
import preprocessorModule from 'express-openapi-validator/dist/middlewares/parsers/schema.preprocessor.js'
import { describe, expect, it } from 'vitest'
import { loadContract } from '../../../../src/http/openapi-document.js'
import { bundleWithValidator, installValidatorPatches, markBundled, resolveSchemaWithAjv } from '../../../../src/http/validator-patches.js'
import { validatorPingPerTest } from '../../../helpers/validator-ping.js'

type Preprocessor = {
  preProcess(): { apiDoc: object; apiDocRes: object | null }
  resolveSchema(schema: unknown): unknown
  ajv: { schemas: Record<string, { validate?: unknown } | undefined> }
}
const { SchemaPreprocessor } = preprocessorModule as unknown as {
  SchemaPreprocessor: new (apiDoc: object, ajvOptions: object, responseOptions: object) => Preprocessor
}
/** The validator's `loadSpec` as it is now (patched or not). */
const loadSpec = (document: unknown): Promise<unknown> =>
  (frameworkModule.OpenAPIFramework.prototype as unknown as { loadSpec(this: unknown, document: unknown): Promise<unknown> }).loadSpec.call(
    { loggingPrefix: '' },
    document,
  )

/** The preprocessor's options as the validator builds them (its default serialisers included). */
const PREPROCESSOR_OPTIONS = new ajvOptionsModule.AjvOptions({ serDes: [], formats: {}, validateFormats: true } as never).preprocessor
const RESPONSE_OPTIONS = { allErrors: true }

/** Every `$ref` string in a document, each once. */
function refsIn(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) refsIn(item, into)
  else if (typeof node === 'object' && node !== null)
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') into.add(value)
      else refsIn(value, into)
    }
  return into
}

/** GET /ping through the validator on a document, its own check of the document off. */
const pingThroughValidator = validatorPingPerTest()
const ping = (document: object) => pingThroughValidator(document, false)

/** A valid document that cannot be bundled: an extension refers to a file that does not exist. */
function unbundlable(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'document load', version: '1' },
    paths: { '/ping': { get: { operationId: 'ping', responses: { '200': { description: 'pong' } } } } },
    'x-elsewhere': { $ref: './no-such-file-anywhere.yaml#/Thing' },
  }
}

describe("the shipped contract and express-openapi-validator's bundling", () => {
  it('is a fixed point: bundling the checked copy returns the same object, unchanged', async () => {
    const contract = loadContract()
    expect(contract.fromCheckedCopy).toBe(true)
    const copy = structuredClone(contract.validatorDocument)
    const bundled = await bundleWithValidator.call({ loggingPrefix: '' }, copy)
    expect(bundled).toBe(copy)
    expect(isDeepStrictEqual(bundled, structuredClone(contract.validatorDocument))).toBe(true)
  })
})

describe('skipping the bundling of bundled documents', () => {
  installValidatorPatches()
  installValidatorPatches() // idempotent

  it('returns a marked document as it is, and still bundles (here: fails to) one that is not marked', async () => {
    const marked = markBundled(unbundlable())
    await expect(loadSpec(marked)).resolves.toBe(marked)
    await expect(loadSpec(unbundlable())).rejects.toThrow(/no-such-file-anywhere/)
  })

  it('keeps the mark through the copy the validator makes of its document', async () => {
    expect(await ping(markBundled(unbundlable()))).toEqual({ status: 200, error: null })
    const unmarked = await ping(unbundlable())
    expect(unmarked.status).toBe(500)
    expect(unmarked.error).toMatch(/no-such-file-anywhere/)
  })

  it('leaves JSON and string-keyed walks of a marked document alone', () => {
    const marked = markBundled(unbundlable())
    expect(JSON.parse(JSON.stringify(marked))).toEqual(unbundlable())
    expect(Object.keys(marked)).toEqual(Object.keys(unbundlable()))
  })
})

describe('resolving local refs without compiling', () => {
  installValidatorPatches()
  installValidatorPatches() // idempotent

  it('resolves every $ref of the contract to the very object the validator resolved it to', () => {
    const document = structuredClone(loadContract().validatorDocument)
    const withAjv = new SchemaPreprocessor(document, PREPROCESSOR_OPTIONS, RESPONSE_OPTIONS)
    const withoutCompiling = new SchemaPreprocessor(document, PREPROCESSOR_OPTIONS, RESPONSE_OPTIONS)
    const refs = [...refsIn(document)]
    // Component schemas (which the validator resolved through ajv) and the refs it looked up itself.
    for (const kind of ['schemas', 'responses', 'parameters'])
      expect(
        refs.some((ref) => ref.startsWith(`#/components/${kind}/`)),
        kind,
      ).toBe(true)
    for (const ref of refs) {
      const expected = resolveSchemaWithAjv.call(withAjv as never, { $ref: ref })
      expect(expected, ref).toBeTypeOf('object')
      expect(withoutCompiling.resolveSchema({ $ref: ref }), ref).toBe(expected)
    }
    // Non-ref schemas and refs it cannot follow behave as before.
    const inline = { type: 'string' }
    expect(withoutCompiling.resolveSchema(inline)).toBe(inline)
    expect(withoutCompiling.resolveSchema(null)).toBeNull()
    expect(withoutCompiling.resolveSchema({ $ref: '#/components/schemas/NoSuchSchema' })).toBe(
      resolveSchemaWithAjv.call(withAjv as never, { $ref: '#/components/schemas/NoSuchSchema' }),
    )
  })

  it('follows escaped pointer tokens (~1 for /, ~0 for ~)', () => {
    const target = { type: 'integer' }
    const document = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {}, components: { schemas: {}, 'x-odd': { 'a/b~c': target } } }
    const preprocessor = new SchemaPreprocessor(document, PREPROCESSOR_OPTIONS, RESPONSE_OPTIONS)
    expect(preprocessor.resolveSchema({ $ref: '#/components/x-odd/a~1b~0c' })).toBe(target)
  })

  it('preprocesses the contract exactly as before, without compiling a validator', () => {
    const original = new SchemaPreprocessor(structuredClone(loadContract().validatorDocument), PREPROCESSOR_OPTIONS, RESPONSE_OPTIONS)
    original.resolveSchema = resolveSchemaWithAjv as never
    const expected = original.preProcess()
    const patched = new SchemaPreprocessor(structuredClone(loadContract().validatorDocument), PREPROCESSOR_OPTIONS, RESPONSE_OPTIONS)
    const actual = patched.preProcess()
    expect(isDeepStrictEqual(actual.apiDoc, expected.apiDoc)).toBe(true)
    expect(actual.apiDocRes).not.toBeNull()
    expect(isDeepStrictEqual(actual.apiDocRes, expected.apiDocRes)).toBe(true)
    const compiled = (preprocessor: Preprocessor): number => Object.values(preprocessor.ajv.schemas).filter((env) => env?.validate !== undefined).length
    expect(compiled(original)).toBeGreaterThan(10)
    expect(compiled(patched)).toBe(0)
  })
})
