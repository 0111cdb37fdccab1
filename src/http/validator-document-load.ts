import frameworkModule from 'express-openapi-validator/dist/framework/index.js'
import preprocessorModule from 'express-openapi-validator/dist/middlewares/parsers/schema.preprocessor.js'

/**
 * Two steps of express-openapi-validator's loading of the document, done once per start before the first request
 * can be answered, and a quarter of a server's start-up CPU time between them (measured with `--cpu-prof`):
 * - it bundles the document with json-schema-ref-parser (a crawl of every `$ref`, ~70 ms), which for a document
 *   that is already bundled changes nothing and returns the very object it was given;
 * - its schema preprocessor resolves each `$ref` it meets with `ajv.getSchema`, which compiles a full validator for
 *   every component schema reached (~95 ms) only to read back the schema object, then throws those validators away
 *   (the request and response validators compile their own).
 * Both are patched in the module objects the validator itself uses (bundled or from node_modules), idempotently.
 */

/**
 * Marks a document as a fixed point of the validator's bundling (bundling it returns it unchanged). A symbol key,
 * enumerable so that it survives the deep copy the validator makes of its `apiSpec`, and invisible to JSON and to
 * anything that walks the document by its string keys.
 */
const ALREADY_BUNDLED = Symbol('bernstein-a2a: already bundled')

type Document = Record<PropertyKey, unknown>
type LoadSpec = (this: unknown, filePath: unknown, refParser?: unknown) => Promise<unknown>
type FrameworkPrototype = { loadSpec: LoadSpec & { readonly skipsBundled?: true } }

const frameworkPrototype = frameworkModule.OpenAPIFramework.prototype as unknown as FrameworkPrototype
/** The validator's own `loadSpec` (this module is the only one that replaces it, and only after loading). */
export const bundleWithValidator: LoadSpec = frameworkPrototype.loadSpec

/**
 * Vouches that `document` is already bundled. Only for a document whose bundling is known to change nothing: the
 * shipped contract's checked copy, which the test suite bundles and compares.
 */
export function markBundled<T extends object>(document: T): T {
  ;(document as Document)[ALREADY_BUNDLED] = true
  return document
}

/** The validator's `loadSpec` returns a marked document as it is, as bundling it would; anything else is bundled. */
export function skipBundlingOfBundledDocuments(): void {
  if (frameworkPrototype.loadSpec.skipsBundled) return
  const original = bundleWithValidator
  const loadSpec: LoadSpec = function (this: unknown, filePath, refParser) {
    if (typeof filePath === 'object' && filePath !== null && (filePath as Document)[ALREADY_BUNDLED] === true) return Promise.resolve(filePath)
    return original.call(this, filePath, refParser)
  }
  frameworkPrototype.loadSpec = Object.assign(loadSpec, { skipsBundled: true as const })
}

type Preprocessor = { apiDoc: Document; resolvedSchemaCache: Map<string, unknown> }
type ResolveSchema = ((this: Preprocessor, schema: unknown) => unknown) & { readonly withoutCompiling?: true }
const preprocessorPrototype = preprocessorModule.SchemaPreprocessor.prototype as unknown as { resolveSchema: ResolveSchema }
/** The validator's own `resolveSchema`, through ajv (tests compare against it). */
export const resolveSchemaWithAjv: ResolveSchema = preprocessorPrototype.resolveSchema

/**
 * The preprocessor's `resolveSchema` finds a local `$ref` (`#/…`) by its JSON pointer in the document: the object
 * `ajv.getSchema` would have handed back (ajv keeps the schema objects it is given), or the one the validator's own
 * fallback would have looked up for refs that are not component schemas, without compiling anything. A ref it
 * cannot follow goes to the original, unchanged.
 */
export function resolveLocalRefsWithoutCompiling(): void {
  if (preprocessorPrototype.resolveSchema.withoutCompiling) return
  const original = resolveSchemaWithAjv
  const resolveSchema = function (this: Preprocessor, schema: unknown): unknown {
    const ref = typeof schema === 'object' && schema !== null ? (schema as Document)['$ref'] : undefined
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      if (this.resolvedSchemaCache.has(ref)) return this.resolvedSchemaCache.get(ref)
      const target = followPointer(this.apiDoc, ref.slice(2))
      if (target !== undefined) {
        this.resolvedSchemaCache.set(ref, target)
        return target
      }
    }
    return original.call(this, schema)
  }
  preprocessorPrototype.resolveSchema = Object.assign(resolveSchema, { withoutCompiling: true as const })
}

/** RFC 6901: `/`-separated tokens, `~1` for `/` and `~0` for `~`, own properties only; undefined when any step is missing. */
function followPointer(root: unknown, pointer: string): unknown {
  let node = root
  for (const raw of pointer.split('/')) {
    if (typeof node !== 'object' || node === null) return undefined
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (!Object.hasOwn(node, token)) return undefined
    node = (node as Document)[token]
  }
  return node
}
