import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import typesModule from 'express-openapi-validator/dist/framework/types.js'
import frameworkModule from 'express-openapi-validator/dist/framework/index.js'
import schemaValidatorModule from 'express-openapi-validator/dist/framework/openapi.schema.validator.js'
import preprocessorModule from 'express-openapi-validator/dist/middlewares/parsers/schema.preprocessor.js'
import validatorModule from 'express-openapi-validator/dist/openapi.validator.js'
import contextModule from 'express-openapi-validator/dist/framework/openapi.context.js'
import utilModule from 'express-openapi-validator/dist/middlewares/util.js'
import mutatorModule from 'express-openapi-validator/dist/middlewares/parsers/req.parameter.mutator.js'
import parserUtilModule from 'express-openapi-validator/dist/middlewares/parsers/util.js'
import { routeIfMatched } from './operation-index.js'
import { PathTemplates, decodeParameters, parameterNames } from './path-templates.js'

/**
 * Seven replacements of express-openapi-validator internals, for start-up time and per-request cost, each with the
 * validator's own answers (the tests in test/unit/http/validator-patches/ compare them with the originals). They are
 * applied by {@link installValidatorPatches}, which `createApp` calls: importing this module changes nothing.
 * They are written against one release of the validator, and installing them on another one fails at start-up.
 */

/** The express-openapi-validator release these patches replace internals of (package.json pins it). */
export const PATCHED_VALIDATOR_VERSION = '5.6.2'

/** The version of the express-openapi-validator installed beside this module (its package.json). */
export function installedValidatorVersion(): string {
  const manifest = createRequire(import.meta.url).resolve('express-openapi-validator/package.json')
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }
  return typeof version === 'string' ? version : 'unknown'
}

/**
 * Applies every patch, once (calling it again changes nothing). Throws before changing anything when the installed
 * validator is not the release the patches were written for: its internals may have moved, and a patch that no
 * longer fits would change answers silently. `installedVersion` reads the installed version (a parameter for tests).
 */
export function installValidatorPatches(installedVersion: () => string = installedValidatorVersion): void {
  const version = installedVersion()
  if (version !== PATCHED_VALIDATOR_VERSION) {
    throw new Error(
      `express-openapi-validator ${version} is installed, but src/http/validator-patches.ts replaces internals of ${PATCHED_VALIDATOR_VERSION}: ` +
        `check each patch against the installed release (test/unit/http/validator-patches/), then update PATCHED_VALIDATOR_VERSION`,
    )
  }
  indexOperationLookup()
  deferOpenApiSchemaCompilation()
  skipBundlingOfBundledDocuments()
  resolveLocalRefsWithoutCompiling()
  validateInOneStep()
  compileWithoutUnreferencedPaths()
  mutateParametersOnlyWhenTheyCanChange()
}

// --- 1. The operation lookup: the contract's one path matcher, and the match the app already made -----------------

/** The parts of express-openapi-validator's OpenApiContext the operation lookup reads. */
interface ValidatorContext {
  readonly expressRouteMap: Readonly<Record<string, { readonly basePath: string }>>
  readonly openApiRouteMap: Readonly<Record<string, object>>
  readonly apiDoc: { readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>> }
  readonly serial: number
  readonly useRequestUrl: boolean
  readonly ignoreUndocumented: boolean
  routePair(route: string): { readonly expressRoute: string; readonly openApiRoute: string } | null
  shouldIgnoreRoute(path: string): boolean
  isManagedRoute(path: string): boolean
}
type ResponseDocument = { readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>> } | null | undefined
type ValidatorPrototype = {
  metadataMiddleware: ((context: ValidatorContext, responseApiDoc: ResponseDocument) => RequestHandler) & { readonly indexed?: true }
}

/** One documented route, with everything a lookup needs computed once. */
interface IndexedRoute {
  readonly expressRoute: string
  readonly openApiRoute: string
  readonly paramNames: readonly string[]
  /** The path item of the request document, and of the response document when responses are validated. */
  readonly pathItem: Readonly<Record<string, unknown>>
  readonly responsePathItem: Readonly<Record<string, unknown>> | undefined
}

interface RouteTable {
  readonly templates: PathTemplates<IndexedRoute>
  readonly byOpenApiRoute: ReadonlyMap<string, IndexedRoute>
}

function routeTable(context: ValidatorContext, responseApiDoc: ResponseDocument, caseSensitive: boolean): RouteTable {
  const routes = Object.entries(context.expressRouteMap).map(([expressRoute, methods]): IndexedRoute => {
    const openApiRoute = context.routePair(expressRoute)!.openApiRoute
    const pathKey = openApiRoute.substring(methods.basePath.length)
    return {
      expressRoute,
      openApiRoute,
      paramNames: parameterNames(openApiRoute),
      pathItem: context.apiDoc.paths[pathKey]!,
      responsePathItem: responseApiDoc?.paths[pathKey],
    }
  })
  return {
    // path-to-regexp 8, the validator's router, ignores `strict routing` and always accepts one trailing slash.
    templates: new PathTemplates(
      routes.map((r) => [r.openApiRoute, r] as const),
      { caseSensitive, trailingSlash: true },
    ),
    byOpenApiRoute: new Map(routes.map((r) => [r.openApiRoute, r])),
  }
}

/** The validator's refusal of a parameter that does not decode (its own text, quote included). */
const malformed = (req: Request): Error => new typesModule.BadRequest({ path: req.path, message: `malformed uri'` })

/**
 * The validator's metadata middleware, which finds the documented operation of each request, with the same answers
 * and a fraction of the cost. The original walks the route map on every request and, for each route until one
 * matches, builds its entries and options anew and compiles or fetches its pattern (12 µs for `GET /a2a/tasks/{id}`,
 * 26 µs for `/health`). Here the request was already matched by the operation index (`res.locals`, by the same
 * matcher, path-templates.ts), so a lookup is one map read; a request matched nowhere else (another app, another
 * path spelling) is matched here with the same matcher under the app's routing settings. Everything else is as in
 * the validator: most specific route first, parameters URI-decoded (a malformed escape is its 400), 405 with
 * `Allow` for a documented path without that method, 404 for an undocumented path under a base path, the same
 * `req.openapi` (with the very schema objects) and `req.params`.
 */
export function indexedOperationLookup(context: ValidatorContext, responseApiDoc: ResponseDocument): RequestHandler {
  // One table per case sensitivity, built on first use.
  const tables: (RouteTable | undefined)[] = [undefined, undefined]
  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path.startsWith(req.baseUrl) ? req.path : `${req.baseUrl}/${req.path}`
    if (context.shouldIgnoreRoute(path)) return next()
    // Read per request, as the validator does: the app's settings decide how its paths match.
    const sensitive = Boolean(req.app.enabled('case sensitive routing'))
    const table = (tables[sensitive ? 1 : 0] ??= routeTable(context, responseApiDoc, sensitive))
    const url = context.useRequestUrl ? req.url : req.originalUrl
    const query = url.indexOf('?')
    const urlPath = query < 0 ? url : url.slice(0, query)
    let route: IndexedRoute | undefined
    let pathParams: Record<string, string> | undefined
    // The app's match holds when it was made on this very path (exact and case-sensitive, as the app routes).
    const matched = sensitive && urlPath === req.path ? routeIfMatched(res) : undefined
    if (matched !== undefined && matched.path !== null) {
      route = table.byOpenApiRoute.get(matched.path.template)
      if (route !== undefined) {
        if (matched.undecodableParameter !== null) throw malformed(req)
        pathParams = { ...matched.params }
      }
    }
    if (route === undefined) {
      const found = table.templates.match(urlPath)
      if (found === null) {
        if (context.isManagedRoute(path) && !context.ignoreUndocumented) throw new typesModule.NotFound({ path: req.path, message: 'not found' })
        return next()
      }
      const decoded = decodeParameters(found.value.paramNames, found.raw)
      if (!('params' in decoded)) throw malformed(req)
      route = found.value
      pathParams = decoded.params
    }
    const method = req.method.toLowerCase()
    const schema = route.pathItem[method]
    if (!schema) {
      if (context.ignoreUndocumented) return next()
      const allowed = Object.keys(context.openApiRouteMap[route.openApiRoute] ?? {}).filter((key) => preprocessorModule.httpMethods.has(key.toLowerCase()))
      throw new typesModule.MethodNotAllowed({ path: req.path, message: `${req.method} method not allowed`, headers: { Allow: allowed.join(', ') } })
    }
    const openapi: Record<string, unknown> = { expressRoute: route.expressRoute, openApiRoute: route.openApiRoute, pathParams, schema, serial: context.serial }
    if (responseApiDoc) openapi['_responseSchema'] = route.responsePathItem?.[method]
    ;(req as Request & { openapi?: unknown }).openapi = openapi
    req.params = pathParams!
    next()
  }
}

function indexOperationLookup(): void {
  const prototype = validatorModule.OpenApiValidator.prototype as unknown as ValidatorPrototype
  if (prototype.metadataMiddleware.indexed) return
  prototype.metadataMiddleware = Object.assign(
    (context: ValidatorContext, responseApiDoc: ResponseDocument) => indexedOperationLookup(context, responseApiDoc),
    { indexed: true as const },
  )
}

/** Whether the validator now finds operations with {@link indexedOperationLookup}. */
export function operationLookupIndexed(): boolean {
  return (validatorModule.OpenApiValidator.prototype as unknown as ValidatorPrototype).metadataMiddleware.indexed === true
}

// --- 2. The check of the document against the OpenAPI schema, compiled only when it runs --------------------------

type SchemaValidatorOptions = ConstructorParameters<typeof schemaValidatorModule.OpenAPISchemaValidator>[0]
type SchemaValidatorClass = typeof schemaValidatorModule.OpenAPISchemaValidator & { readonly deferred?: true }
/** The module object express-openapi-validator reads the class from at each use (so a replacement takes effect). */
const schemaValidators = schemaValidatorModule as { OpenAPISchemaValidator: SchemaValidatorClass }

/**
 * express-openapi-validator checks the OpenAPI document against the OpenAPI schema with an ajv validator that it
 * compiles when it loads the document, even when told not to check (`validateApiSpec: false`): a quarter of a
 * second of start-up spent on a validator that is never called. Its validator class is replaced (in the module
 * object the validator itself reads it from, whether loaded from node_modules or bundled) by one that compiles
 * on the first `validate` call, so the check still runs, unchanged, whenever `validateApiSpec` asks for it.
 */
function deferOpenApiSchemaCompilation(): void {
  const Original = schemaValidators.OpenAPISchemaValidator
  if (typeof Original !== 'function' || Original.deferred) return
  class DeferredOpenAPISchemaValidator {
    static readonly deferred = true
    readonly #options: SchemaValidatorOptions
    #compiled: InstanceType<SchemaValidatorClass> | undefined
    constructor(options: SchemaValidatorOptions) {
      this.#options = options
    }
    validate(document: Parameters<InstanceType<SchemaValidatorClass>['validate']>[0]): ReturnType<InstanceType<SchemaValidatorClass>['validate']> {
      this.#compiled ??= new Original(this.#options)
      return this.#compiled.validate(document)
    }
  }
  schemaValidators.OpenAPISchemaValidator = DeferredOpenAPISchemaValidator as unknown as SchemaValidatorClass
}

/** Whether express-openapi-validator now builds its document validator lazily (for tests and diagnostics). */
export function openApiSchemaCompilationDeferred(): boolean {
  return schemaValidators.OpenAPISchemaValidator.deferred === true
}

// --- 3 and 4. Loading the document: no bundling of a bundled document, no compiling to resolve a $ref --------------
//
// Two steps of the validator's loading of the document, done once per start before the first request can be
// answered, and a quarter of a server's start-up CPU time between them (measured with `--cpu-prof`):
// - it bundles the document with json-schema-ref-parser (a crawl of every `$ref`, ~70 ms), which for a document
//   that is already bundled changes nothing and returns the very object it was given;
// - its schema preprocessor resolves each `$ref` it meets with `ajv.getSchema`, which compiles a full validator for
//   every component schema reached (~95 ms) only to read back the schema object, then throws those validators away
//   (the request and response validators compile their own).
// Both are patched in the module objects the validator itself uses (bundled or from node_modules).

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
/** The validator's own `loadSpec` (this module is the only one that replaces it, and only when installing). */
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
function skipBundlingOfBundledDocuments(): void {
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
function resolveLocalRefsWithoutCompiling(): void {
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

// --- 5. The validator's middlewares as one synchronous step, once the document is loaded -------------------------

/** The parts of the validator's OpenApiValidator that assembling its middlewares reads. */
interface ValidatorInstance {
  readonly options: {
    readonly ignorePaths?: unknown
    readonly ignoreUndocumented?: boolean
    readonly useRequestUrl?: boolean
    readonly validateRequests?: unknown
    readonly validateResponses?: unknown
    readonly validateSecurity?: unknown
    readonly fileUploader?: unknown
    readonly operationHandlers?: unknown
  }
  readonly ajvOpts: { readonly preprocessor: object }
  installPathParams(app: unknown, context: unknown): void
  metadataMiddleware(context: unknown, responseApiDoc: unknown): RequestHandler
  securityMiddleware(apiDoc: unknown): RequestHandler
  requestValidationMiddleware(apiDoc: unknown): RequestHandler
  responseValidationMiddleware(apiDoc: unknown, serial: number): RequestHandler
}
type LoadedSpec = { readonly apiDoc: { readonly components?: { readonly securitySchemes?: unknown } }; readonly serial: number }
type Loaded = { readonly context: unknown; readonly chain: readonly RequestHandler[] } | { readonly error: unknown }
type InstallMiddleware = ((this: ValidatorInstance, spec: Promise<LoadedSpec>) => RequestHandler[]) & { readonly oneStep?: true }
const validatorPrototype = validatorModule.OpenApiValidator.prototype as unknown as { installMiddleware: InstallMiddleware }
/** The validator's own `installMiddleware` (its five middlewares, each waiting on the document through a promise). */
export const installMiddlewareAsShipped: InstallMiddleware = validatorPrototype.installMiddleware
const { SchemaPreprocessor } = preprocessorModule as unknown as {
  SchemaPreprocessor: new (apiDoc: unknown, ajvOptions: object, responseOptions: unknown) => { preProcess(): { apiDocRes: unknown } }
}
const { OpenApiContext } = contextModule as unknown as {
  OpenApiContext: new (spec: LoadedSpec, ignorePaths: unknown, ignoreUndocumented?: boolean, useRequestUrl?: boolean) => { readonly serial: number }
}

/**
 * The validator installs one middleware per concern (path parameters, operation lookup, security, request,
 * response), and each of them, on every request, waits on the loaded document through a promise before it does its
 * work: five Express layers and five microtask hops per request, whatever the request. Here the same middlewares,
 * built the same way from the same loaded document, run as one middleware: the document is awaited by the first
 * request only, and after that each request runs the lookup, the request validation and the response hook in one
 * synchronous pass, a refusal going to `next` as the validator's own would. Configurations this app does not use
 * (file uploads, operation handlers) get the validator's own middlewares unchanged.
 */
function validateInOneStep(): void {
  if (validatorPrototype.installMiddleware.oneStep) return
  const original = installMiddlewareAsShipped
  const installMiddleware = function (this: ValidatorInstance, spec: Promise<LoadedSpec>): RequestHandler[] {
    if (this.options.fileUploader || this.options.operationHandlers) return original.call(this, spec)
    // Settled once, never rejected: a document that failed to load is kept as every request's error, as the
    // validator keeps it.
    const loading: Promise<Loaded> = spec.then(
      (loaded) => {
        const { options } = this
        const responseApiDoc = new SchemaPreprocessor(loaded.apiDoc, this.ajvOpts.preprocessor, options.validateResponses).preProcess().apiDocRes
        const context = new OpenApiContext(loaded, options.ignorePaths, options.ignoreUndocumented, options.useRequestUrl)
        const chain: RequestHandler[] = [this.metadataMiddleware(context, responseApiDoc)]
        if (options.validateSecurity && loaded.apiDoc.components?.securitySchemes) chain.push(this.securityMiddleware(loaded.apiDoc))
        if (options.validateRequests) chain.push(this.requestValidationMiddleware(loaded.apiDoc))
        if (options.validateResponses) chain.push(this.responseValidationMiddleware(responseApiDoc, context.serial))
        return { context, chain }
      },
      (error: unknown) => ({ error }),
    )
    let ready: Loaded | undefined
    let pathParamsInstalled = false
    const run = (loaded: Loaded, req: Request, res: Response, next: NextFunction): void => {
      if ('error' in loaded) return next(loaded.error)
      if (!pathParamsInstalled) {
        this.installPathParams(req.app, loaded.context)
        pathParamsInstalled = true
      }
      const { chain } = loaded
      const step = (i: number): NextFunction =>
        ((error?: unknown) => {
          if (error !== undefined) return next(error)
          if (i === chain.length) return next()
          try {
            chain[i]!(req, res, step(i + 1))
          } catch (thrown) {
            next(thrown)
          }
        }) as NextFunction
      step(0)()
    }
    const validate: RequestHandler = (req, res, next) => {
      if (ready !== undefined) return run(ready, req, res, next)
      // Until the document is loaded (the first requests only), as the validator does: wait, then validate.
      return loading.then((loaded) => {
        ready = loaded
        run(loaded, req, res, next)
      })
    }
    return [validate]
  }
  validatorPrototype.installMiddleware = Object.assign(installMiddleware, { oneStep: true as const })
}

/** Whether the validator now runs as one synchronous middleware (for tests and diagnostics). */
export function validationInOneStep(): boolean {
  return validatorPrototype.installMiddleware.oneStep === true
}

// --- 6. Each operation's schemas compiled without the document's paths when nothing refers into them -------------

type UseAjvCache = ((ajv: unknown, schema: Document, cacheKey: string) => unknown) & { readonly withoutPaths?: true }
const validatorUtil = utilModule as unknown as { useAjvCache: UseAjvCache }
/** The validator's own `useAjvCache` (tests compare against it). */
export const compileWithPaths: UseAjvCache = validatorUtil.useAjvCache

/**
 * The validator compiles each operation's request schemas and each of its responses' schemas as a root of its own
 * that carries the whole document's `paths` and `components` (so that a `$ref` anywhere in the document resolves),
 * and ajv walks every key of a new root for ids and anchors before compiling it: for this contract, the paths are
 * 60 % of the document and made the first request of each operation take 100-400 ms. A `$ref` can only reach the
 * paths by a pointer that starts with `#/paths`; when no `$ref` in the paths or the components does, the root is
 * compiled without them, with the same answers. Whether one does is decided once per document.
 */
function compileWithoutUnreferencedPaths(): void {
  if (validatorUtil.useAjvCache.withoutPaths) return
  const original = compileWithPaths
  // By the paths and then the components object (every root of one document shares both).
  const referredInto = new WeakMap<object, WeakMap<object, boolean>>()
  const useAjvCache = (ajv: unknown, schema: Document, cacheKey: string): unknown => {
    const { paths, ...rest } = schema
    const components = schema['components']
    if (typeof paths !== 'object' || paths === null || typeof components !== 'object' || components === null) return original(ajv, schema, cacheKey)
    const byComponents = referredInto.get(paths) ?? new WeakMap<object, boolean>()
    referredInto.set(paths, byComponents)
    let refers = byComponents.get(components)
    if (refers === undefined) {
      refers = refersInto([paths, components], '#/paths')
      byComponents.set(components, refers)
    }
    return original(ajv, refers ? schema : rest, cacheKey)
  }
  validatorUtil.useAjvCache = Object.assign(useAjvCache, { withoutPaths: true as const })
}

/** Whether any `$ref` under `roots` is `prefix` or a pointer below it. */
export function refersInto(roots: readonly unknown[], prefix: string): boolean {
  const seen = new Set<object>()
  const stack = [...roots]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node !== 'object' || node === null || seen.has(node)) continue
    seen.add(node)
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && (value === prefix || value.startsWith(`${prefix}/`))) return true
      if (typeof value === 'object' && value !== null) stack.push(value)
    }
  }
  return false
}

/** Whether operations' schemas are now compiled without unreferenced paths (for tests and diagnostics). */
export function compilingWithoutPaths(): boolean {
  return validatorUtil.useAjvCache.withoutPaths === true
}

// --- 7. The parameter mutator skipped for a request it would leave as it is ----------------------------------------

/** An operation object of the validator's document, as `req.openapi.schema` holds it. */
interface OperationSchema {
  readonly parameters?: readonly object[]
}
interface MutatorInstance {
  readonly ajv: unknown
  readonly _apiDocs: unknown
  handleBracketNotationQueryFields(query: unknown): unknown
}
type ModifyRequest = ((this: MutatorInstance, req: Request) => void) & { readonly skipsUnchanged?: true }
const mutatorPrototype = (mutatorModule as unknown as { RequestParameterMutator: { prototype: { modifyRequest: ModifyRequest } } }).RequestParameterMutator
  .prototype
/** The validator's own `modifyRequest` (tests compare against it). */
export const modifyRequestAsShipped: ModifyRequest = mutatorPrototype.modifyRequest
const parserUtil = parserUtilModule as unknown as {
  dereferenceParameter(apiDocs: unknown, parameter: object): { readonly content?: unknown } | undefined
  normalizeParameter(ajv: unknown, parameter: object): { readonly schema?: unknown }
}

const SCALAR_TYPES: ReadonlySet<unknown> = new Set(['string', 'integer', 'number', 'boolean'])

/**
 * Whether the validator's parameter mutator leaves a request of this operation as it is when its URL has no query:
 * every parameter is a scalar (no array, object or combination, whose values it splits or parses) with a `schema`,
 * not a `content` (whose values it parses as JSON), wherever it is. Query parameters then have no value to change,
 * and path, header and cookie scalars are never changed. Reads the schemas the way the mutator does.
 */
export function leavesUnchangedWithoutQuery(mutator: MutatorInstance, operation: OperationSchema): boolean {
  return (operation.parameters ?? []).every((declared) => {
    const parameter = parserUtil.dereferenceParameter(mutator._apiDocs, declared)
    if (parameter === undefined || parameter.content !== undefined) return false
    const { schema } = parserUtil.normalizeParameter(mutator.ajv, parameter)
    if (typeof schema !== 'object' || schema === null) return false
    const { type } = schema as { readonly type?: unknown }
    return SCALAR_TYPES.has(type) && !('allOf' in schema) && !('oneOf' in schema) && !('anyOf' in schema)
  })
}

/**
 * The request validator hands every request to a new `RequestParameterMutator`, which parses the URL with the legacy
 * `url.parse`, splits its query, and reads every parameter's schema through ajv, on every request, to reshape the
 * query and headers before validation. For a request without a query, of an operation whose parameters are all
 * scalars ({@link leavesUnchangedWithoutQuery}, decided once per operation), that work changes nothing but `req.query`,
 * which it sets to the request's empty query: here only that step runs. It cost about 6 % of a GET's CPU.
 */
function mutateParametersOnlyWhenTheyCanChange(): void {
  if (mutatorPrototype.modifyRequest.skipsUnchanged) return
  const original = modifyRequestAsShipped
  // By operation object: each loaded document has its own, read with its own validator's ajv.
  const unchangedWithoutQuery = new WeakMap<object, boolean>()
  const modifyRequest = function (this: MutatorInstance, req: Request): void {
    const operation = (req as { openapi?: { schema?: OperationSchema } }).openapi?.schema
    if (operation === undefined || req.originalUrl.includes('?')) return original.call(this, req)
    let unchanged = unchangedWithoutQuery.get(operation)
    if (unchanged === undefined) {
      unchanged = leavesUnchangedWithoutQuery(this, operation)
      unchangedWithoutQuery.set(operation, unchanged)
    }
    if (!unchanged) return original.call(this, req)
    ;(req as { query: unknown }).query = this.handleBracketNotationQueryFields(req.query)
  }
  mutatorPrototype.modifyRequest = Object.assign(modifyRequest, { skipsUnchanged: true as const })
}

/** Whether the parameter mutator is now skipped where it changes nothing (for tests and diagnostics). */
export function mutationSkippedWhenUnchanged(): boolean {
  return mutatorPrototype.modifyRequest.skipsUnchanged === true
}
