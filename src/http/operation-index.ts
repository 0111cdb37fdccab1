import type { RequestHandler, Response } from 'express'
import type { OpenApiDocument } from './openapi-document.js'
import { PathTemplates, decodeParameters, parameterNames } from './path-templates.js'

/** The contract's `/api/v1` mirrors: the same operation under this prefix, served by the same handler. */
export const API_PREFIX = '/api/v1'

/**
 * What a caller must be, beyond a valid token, when the operation is not public (`security: []`):
 * - `any`: any token of a tenant (an agent's or an operator's);
 * - `operator`: an operator token (bound to a tenant or not);
 * - `node-operator`: an operator token not bound to a tenant (the operation is about the whole node);
 * - `metrics-reader`: a `node-operator`, or the metrics token.
 */
export const PERMISSIONS = ['any', 'operator', 'node-operator', 'metrics-reader'] as const
export type Permission = (typeof PERMISSIONS)[number]

export const RATE_LIMIT_BUCKETS = ['default_read', 'default_write'] as const
export type RateLimitBucket = (typeof RATE_LIMIT_BUCKETS)[number]

/** How the request body is read: parsed as JSON, handed over as bytes (hand-validated), or drained unread. */
export const BODY_READINGS = ['json', 'raw', 'none'] as const
export type BodyReading = (typeof BODY_READINGS)[number]

/** helmet's defaults (`api`), or those of the reference page, whose CSP does not upgrade its own http:// assets. */
export const HEADER_SETS = ['api', 'docs-page'] as const
export type HeaderSet = (typeof HEADER_SETS)[number]

/**
 * How errors are written: the node's own `{detail}` bodies, or one of the A2A v1.0 bindings' (a JSON-RPC error
 * response; a `google.rpc.Status` with an ErrorInfo), rendered by `src/a2a-v1`.
 */
export const ERROR_FORMATS = ['detail', 'a2a-jsonrpc', 'a2a-rest'] as const
export type ErrorFormat = (typeof ERROR_FORMATS)[number]

/** Everything the middleware decides by, before the validator and the handler. */
export interface AccessPolicy {
  /** `security: []`: no token needed (an invalid one is ignored). */
  readonly public: boolean
  /** Ignored when public. */
  readonly permission: Permission
  /** Null: not rate-limited. */
  readonly rateLimitBucket: RateLimitBucket | null
  /** Reachable from any address, whatever `BERNSTEIN_ALLOWED_IPS` says. */
  readonly allowlistExempt: boolean
  readonly body: BodyReading
  readonly headers: HeaderSet
  readonly errorFormat: ErrorFormat
  /**
   * `x-waits: true`: the operation waits by design before it answers (a blocking A2A SendMessage), so its answer
   * deadline is the request deadline plus the node's blocking bound (see `Admission.deadline`).
   */
  readonly waits: boolean
  /**
   * `x-no-deadline: true`: the operation's work grows with what is stored (it walks whole chains, page by page),
   * so the request deadline does not cut it; each of its reads is bounded by the database's statement timeout.
   */
  readonly noDeadline: boolean
}

/** One operation of the contract, with its policy (the `x-` extensions of openapi.yaml). */
export interface Operation extends AccessPolicy {
  readonly operationId: string
  /** Upper case: `GET`. */
  readonly method: string
  /** As the contract writes it: `/tasks/{task_id}` or `/api/v1/tasks/{task_id}`. */
  readonly template: string
  readonly pathParameters: readonly string[]
  /** The statuses it documents. */
  readonly statuses: ReadonlySet<number>
}

/** A path of the contract and its operations. */
export interface DocumentedPath {
  readonly template: string
  readonly pathParameters: readonly string[]
  /** By upper-case method. */
  readonly operations: ReadonlyMap<string, Operation>
  /** The methods it documents (what the `Allow` header of a 405 lists: the validator refuses HEAD too). */
  readonly methods: readonly string[]
}

/** What the contract makes of one request. */
export interface RouteMatch {
  /** The documented path it names, or null. */
  readonly path: DocumentedPath | null
  /** That path's operation for its method (HEAD is answered as GET), or null. */
  readonly operation: Operation | null
  /** The operation's policy, or that of a request the contract has no operation for (see {@link OperationIndex}). */
  readonly policy: AccessPolicy
  /** Decoded path parameters ({} when a value does not decode). */
  readonly params: Readonly<Record<string, string>>
  /** The parameter whose value is not valid percent-encoded UTF-8, if any. */
  readonly undecodableParameter: string | null
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** Methods whose content means something (RFC 9110): only their operations read a body, and must say how. */
const METHODS_WITH_CONTENT: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH'])
const EXTENSIONS = [
  'x-permission',
  'x-rate-limit-bucket',
  'x-allowlist-exempt',
  'x-body',
  'x-security-headers',
  'x-error-format',
  'x-waits',
  'x-no-deadline',
] as const

/** A contract whose operations do not say what the server needs to know about them. */
export class ContractPolicyError extends Error {
  override readonly name = 'ContractPolicyError'
  readonly problems: readonly string[]
  constructor(problems: readonly string[]) {
    super(`openapi.yaml: ${problems.length} problem(s) with the operations' x- extensions (see README, Development):\n- ${problems.join('\n- ')}`)
    this.problems = problems
  }
}

function oneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value)
}

type OperationObject = Readonly<Record<string, unknown>>

/** The policy an operation declares, or what is wrong with its declaration (pushed onto `problems`). */
function declaredPolicy(method: string, operation: OperationObject, problems: string[], where: string): AccessPolicy {
  const security = operation['security']
  const isPublic = Array.isArray(security) && security.length === 0
  const permission = operation['x-permission']
  const bucket = operation['x-rate-limit-bucket']
  const exempt = operation['x-allowlist-exempt']
  const body = operation['x-body']
  const headers = operation['x-security-headers']
  const errorFormat = operation['x-error-format']
  const waits = operation['x-waits']
  const noDeadline = operation['x-no-deadline']
  for (const key of Object.keys(operation)) {
    if (key.startsWith('x-') && !(EXTENSIONS as readonly string[]).includes(key))
      problems.push(`${where}: unknown extension ${key} (known: ${EXTENSIONS.join(', ')})`)
  }
  if (isPublic && permission !== undefined) problems.push(`${where}: x-permission on a public operation (security: []); remove one of them`)
  if (!isPublic && !oneOf(PERMISSIONS, permission))
    problems.push(`${where}: x-permission must be one of ${PERMISSIONS.join(', ')} (got ${JSON.stringify(permission)})`)
  if (bucket !== 'none' && !oneOf(RATE_LIMIT_BUCKETS, bucket))
    problems.push(`${where}: x-rate-limit-bucket must be one of ${RATE_LIMIT_BUCKETS.join(', ')}, none (got ${JSON.stringify(bucket)})`)
  if (exempt !== undefined && typeof exempt !== 'boolean') problems.push(`${where}: x-allowlist-exempt must be true or false (got ${JSON.stringify(exempt)})`)
  if (METHODS_WITH_CONTENT.has(method)) {
    if (!oneOf(BODY_READINGS, body)) problems.push(`${where}: x-body must be one of ${BODY_READINGS.join(', ')} (got ${JSON.stringify(body)})`)
  } else if (body !== undefined) {
    problems.push(`${where}: x-body on a ${method}, whose body is never read; remove it`)
  }
  if (headers !== undefined && !oneOf(HEADER_SETS, headers))
    problems.push(`${where}: x-security-headers must be one of ${HEADER_SETS.join(', ')} (got ${JSON.stringify(headers)})`)
  if (errorFormat !== undefined && !oneOf(ERROR_FORMATS, errorFormat))
    problems.push(`${where}: x-error-format must be one of ${ERROR_FORMATS.join(', ')} (got ${JSON.stringify(errorFormat)})`)
  if (waits !== undefined && typeof waits !== 'boolean') problems.push(`${where}: x-waits must be true or false (got ${JSON.stringify(waits)})`)
  if (noDeadline !== undefined && typeof noDeadline !== 'boolean')
    problems.push(`${where}: x-no-deadline must be true or false (got ${JSON.stringify(noDeadline)})`)
  return Object.freeze({
    public: isPublic,
    permission: oneOf(PERMISSIONS, permission) ? permission : 'node-operator',
    rateLimitBucket: oneOf(RATE_LIMIT_BUCKETS, bucket) ? bucket : null,
    allowlistExempt: exempt === true,
    body: oneOf(BODY_READINGS, body) ? body : 'none',
    headers: oneOf(HEADER_SETS, headers) ? headers : 'api',
    errorFormat: oneOf(ERROR_FORMATS, errorFormat) ? errorFormat : 'detail',
    waits: waits === true,
    noDeadline: noDeadline === true,
  })
}

/** Fail-closed: a token not bound to a tenant, limited by its method, from allowed addresses only. */
function closedPolicy(method: string): AccessPolicy {
  return Object.freeze({
    public: false,
    permission: 'node-operator',
    rateLimitBucket: WRITE_METHODS.has(method) ? 'default_write' : 'default_read',
    allowlistExempt: false,
    // As before any operation is known: a POST body is read as JSON, any other is drained.
    body: method === 'POST' ? 'json' : 'none',
    headers: 'api',
    errorFormat: 'detail',
    waits: false,
    noDeadline: false,
  })
}

/** A policy for each kind of method a request may use, so that none is built per request. */
interface ByMethod {
  readonly post: AccessPolicy
  readonly otherWrite: AccessPolicy
  readonly read: AccessPolicy
}
const byMethod = (overrides: Partial<AccessPolicy>): ByMethod => {
  const of = (method: string): AccessPolicy => Object.freeze({ ...closedPolicy(method), ...overrides })
  return { post: of('POST'), otherWrite: of('PUT'), read: of('GET') }
}
const pick = (policies: ByMethod, method: string): AccessPolicy =>
  method === 'POST' ? policies.post : WRITE_METHODS.has(method) ? policies.otherWrite : policies.read

/**
 * Requests for a path the contract does not have are fail-closed, except under two prefixes that are not operations
 * of the contract: the reference page's static files (served from swagger-ui-dist, public like the page), and the
 * discovery namespace (RFC 8615), whose absent documents answer the same 404 to anyone from anywhere, unlimited,
 * like the documents it has.
 */
const UNDOCUMENTED_PATHS: readonly { readonly prefix: string; readonly policies: ByMethod }[] = [
  { prefix: '/docs/', policies: byMethod({ public: true, headers: 'docs-page' }) },
  { prefix: '/.well-known/', policies: byMethod({ public: true, allowlistExempt: true, rateLimitBucket: null }) },
]
const CLOSED = byMethod({})

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({})

interface IndexedPath extends DocumentedPath {
  /** A method it does not document (answered 405 once the checks pass). */
  readonly undocumentedMethod: ByMethod
}

/**
 * Every operation of the contract, built once from the document, with the policy its `x-` extensions declare; and
 * the match of a request to one of them, computed once per request ({@link matchOperation}) and read by every
 * decision after it: the request log and metrics, security headers, the IP allowlist, authentication,
 * authorisation, rate limits, how the body is read, the validator's operation lookup and error rendering.
 *
 * A request the contract has no operation for is fail-closed: it needs a token not bound to a tenant, is limited in
 * the bucket of its method (writes in `default_write`) and is not exempt from the IP allowlist; a POST body is read
 * as JSON, as before any operation is known. A documented path with a method it does not document (405) is public,
 * exempt or unlimited only when every operation of the path is, so that a public path answers its 405 to anyone.
 * Unknown paths under `/docs/` and `/.well-known/` follow {@link UNDOCUMENTED_PATHS}.
 *
 * Building it fails with a {@link ContractPolicyError} listing every operation whose extensions are missing or
 * unknown, so that a server never starts on a contract that does not say who may call what.
 */
export class OperationIndex {
  readonly #paths: PathTemplates<IndexedPath>
  readonly #operations: ReadonlyMap<string, Operation>

  constructor(document: OpenApiDocument) {
    const problems: string[] = []
    const rootSecurity = (document as { security?: unknown }).security
    if (!Array.isArray(rootSecurity) || rootSecurity.length === 0) {
      problems.push('the document has no top-level security requirement: every operation without its own `security` would be public')
    }
    const operations = new Map<string, Operation>()
    const paths: [string, IndexedPath][] = []
    for (const [template, item] of Object.entries(document.paths)) {
      const pathParameters = Object.freeze(parameterNames(template))
      const ofPath = new Map<string, Operation>()
      for (const method of HTTP_METHODS) {
        const operation = item[method] as OperationObject | undefined
        if (operation === undefined) continue
        const verb = method.toUpperCase()
        const operationId = operation['operationId']
        const where = `${verb} ${template}${typeof operationId === 'string' ? ` (${operationId})` : ''}`
        if (typeof operationId !== 'string') {
          problems.push(`${where}: no operationId`)
          continue
        }
        if (operations.has(operationId)) problems.push(`${where}: operationId ${operationId} is used twice`)
        const responses = (operation['responses'] ?? {}) as Readonly<Record<string, unknown>>
        const entry: Operation = Object.freeze({
          ...declaredPolicy(verb, operation, problems, where),
          operationId,
          method: verb,
          template,
          pathParameters,
          statuses: new Set(Object.keys(responses).map(Number)),
        })
        operations.set(operationId, entry)
        ofPath.set(verb, entry)
      }
      paths.push([
        template,
        Object.freeze({
          template,
          pathParameters,
          operations: ofPath,
          methods: Object.freeze([...ofPath.keys()]),
          undocumentedMethod: undocumentedMethodPolicies([...ofPath.values()]),
        }),
      ])
    }
    if (problems.length > 0) throw new ContractPolicyError(problems)
    this.#operations = operations
    this.#paths = new PathTemplates(paths, { caseSensitive: true, trailingSlash: false })
  }

  /** Every operation, in document order. */
  get operations(): readonly Operation[] {
    return [...this.#operations.values()]
  }

  operation(operationId: string): Operation | undefined {
    return this.#operations.get(operationId)
  }

  /** What the contract makes of `method` on `path` (exact, case-sensitive, still percent-encoded). */
  match(method: string, path: string): RouteMatch {
    const found = this.#paths.match(path)
    if (found === null) {
      const rule = UNDOCUMENTED_PATHS.find((r) => path.startsWith(r.prefix))
      return { path: null, operation: null, policy: pick(rule?.policies ?? CLOSED, method), params: NO_PARAMS, undecodableParameter: null }
    }
    const documented = found.value
    const operation = documented.operations.get(method === 'HEAD' ? 'GET' : method) ?? null
    const policy = operation ?? pick(documented.undocumentedMethod, method)
    if (found.raw.length === 0) return { path: documented, operation, policy, params: NO_PARAMS, undecodableParameter: null }
    const decoded = decodeParameters(documented.pathParameters, found.raw)
    return 'params' in decoded
      ? { path: documented, operation, policy, params: decoded.params, undecodableParameter: null }
      : { path: documented, operation, policy, params: NO_PARAMS, undecodableParameter: decoded.undecodable }
  }
}

/** The policy of a method a path does not document: closed, but public, exempt or unlimited where all its operations are. */
function undocumentedMethodPolicies(operations: readonly Operation[]): ByMethod {
  const every = (test: (o: Operation) => boolean): boolean => operations.length > 0 && operations.every(test)
  const isPublic = every((o) => o.public)
  const exempt = every((o) => o.allowlistExempt)
  const unlimited = every((o) => o.rateLimitBucket === null)
  const docsPage = every((o) => o.headers === 'docs-page')
  return byMethod({
    ...(isPublic && { public: true }),
    ...(exempt && { allowlistExempt: true }),
    ...(unlimited && { rateLimitBucket: null }),
    ...(docsPage && { headers: 'docs-page' as const }),
  })
}

const ROUTE = 'route'

/** Matches each request once, first of all, and leaves the match on `res.locals` for everything after. */
export function matchOperation(index: OperationIndex): RequestHandler {
  return (req, res, next) => {
    res.locals[ROUTE] = index.match(req.method, req.path)
    next()
  }
}

/** The match {@link matchOperation} left for this request. */
export function routeOf(res: Response): RouteMatch {
  const route = res.locals[ROUTE] as RouteMatch | undefined
  if (route === undefined) throw new TypeError('no operation match on this request: matchOperation() must be the first middleware')
  return route
}

/** The match, if one was made (for code that also serves requests outside the app, such as the validator's lookup). */
export function routeIfMatched(res: { locals?: Record<string, unknown> } | undefined): RouteMatch | undefined {
  return res?.locals?.[ROUTE] as RouteMatch | undefined
}
