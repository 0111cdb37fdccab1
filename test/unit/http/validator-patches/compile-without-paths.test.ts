import { Ajv } from 'ajv'
import { beforeAll, describe, expect, it } from 'vitest'
import { compileWithPaths, compilingWithoutPaths, installValidatorPatches, refersInto } from '../../../../src/http/validator-patches.js'
import { loadContract } from '../../../../src/http/openapi-document.js'

type Validate = ((data: unknown) => boolean) & { readonly schema: Record<string, unknown>; readonly errors?: unknown }
type UseAjvCache = (ajv: unknown, schema: Record<string, unknown>, cacheKey: string) => Validate

const components = {
  schemas: {
    Item: {
      type: 'object',
      required: ['id'],
      additionalProperties: false,
      properties: { id: { type: 'string', minLength: 1 }, tags: { $ref: '#/components/schemas/Tags' } },
    },
    Tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
  },
}
const paths = { '/items': { get: { responses: { '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } } } } } }
/** A response root as the validator builds it: the operation's schema, with the whole document beside it. */
const root = (extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { response: { $ref: '#/components/schemas/Item' } },
  paths,
  components,
  ...extra,
})
const bodies = [
  { response: { id: 'a' } },
  { response: { id: '' } },
  { response: { id: 'a', tags: ['x', 'y', 'z'] } },
  { response: { id: 'a', more: 1 } },
  { response: 7 },
]

describe('compiling operations’ schemas without the document’s paths (patch 6)', () => {
  let patched: UseAjvCache
  beforeAll(async () => {
    installValidatorPatches()
    const util = (await import('express-openapi-validator/dist/middlewares/util.js')).default as unknown as { useAjvCache: UseAjvCache }
    patched = util.useAjvCache
  })

  it('is installed, and gives ajv the root without `paths` when nothing refers into them, with the same answers', () => {
    expect(compilingWithoutPaths()).toBe(true)
    const withPatch = patched(new Ajv({ allErrors: true, strict: false }), root(), 'response-200')
    const asShipped = (compileWithPaths as unknown as UseAjvCache)(new Ajv({ allErrors: true, strict: false }), root(), 'response-200')
    expect(Object.keys(withPatch.schema)).not.toContain('paths')
    expect(Object.keys(asShipped.schema)).toContain('paths')
    for (const body of bodies) {
      expect(withPatch(body)).toBe(asShipped(body))
      expect(withPatch.errors ?? null).toEqual(asShipped.errors ?? null)
    }
    expect(bodies.map((b) => withPatch(b))).toEqual([true, false, false, false, false])
  })

  it('keeps `paths` when a $ref points into them, so that it still resolves', () => {
    const intoPaths = { $ref: '#/paths/~1items/get/responses/200/content/application~1json/schema' }
    const referring = { ...components, schemas: { ...components.schemas, Alias: intoPaths } }
    const validate = patched(
      new Ajv({ allErrors: true, strict: false }),
      { ...root(), components: referring, properties: { response: { $ref: '#/components/schemas/Alias' } } },
      'alias-200',
    )
    expect(Object.keys(validate.schema)).toContain('paths')
    expect(validate({ response: { id: 'a' } })).toBe(true)
    expect(validate({ response: { id: '' } })).toBe(false)
  })

  it('finds a $ref into a prefix anywhere, cycles included, and nothing else', () => {
    const cyclic: Record<string, unknown> = { a: { b: [{ $ref: '#/components/x' }] } }
    cyclic['self'] = cyclic
    expect(refersInto([cyclic], '#/paths')).toBe(false)
    expect(refersInto([cyclic, { deep: [{ $ref: '#/paths/~1x' }] }], '#/paths')).toBe(true)
    expect(refersInto([{ $ref: '#/paths' }], '#/paths')).toBe(true)
    expect(refersInto([{ $ref: '#/pathsX' }, { description: '#/paths/~1x' }], '#/paths')).toBe(false)
  })

  it('applies to the shipped contract: no $ref in it points into its paths', () => {
    const { document } = loadContract()
    const doc = document as unknown as { paths: unknown; components: unknown }
    expect(refersInto([doc.paths, doc.components], '#/paths')).toBe(false)
  })
})
