import express, { type Express, type RequestHandler } from 'express'
import * as OpenApiValidator from 'express-openapi-validator'
import type { Registry } from 'prom-client'
import { a2aRoutes } from './a2a/a2a.handlers.js'
import { a2aV1Routes } from './a2a-v1/a2a-v1.handlers.js'
import { renderA2AError } from './a2a-v1/a2a-v1-error-render.js'
import { a2aV1PushRoutes, pushJsonRpcMethods } from './a2a-v1/push/push.handlers.js'
import { lineageRoutes } from './lineage/lineage.handlers.js'
import { AppError } from './errors.js'
import { identityRoutes } from './identity/identity.handlers.js'
import { inboundBodyVerifier, inboundRoutes } from './federation/inbound.handlers.js'
import { healthRoutes } from './health/health.handlers.js'
import { Admission, type AdmissionOptions } from './http/admission.js'
import { authenticate } from './http/auth.js'
import { exactPaths } from './http/exact-path.js'
import { chain } from './http/chain.js'
import { docsAssets, docsRoutes, DOCS_ASSETS } from './http/docs.js'
import { securityHeaders } from './http/security-headers.js'
import { metricsRoutes, PrometheusMetrics } from './http/prometheus-metrics.js'
import { OperationIndex, matchOperation } from './http/operation-index.js'
import { readBodies } from './http/request-body.js'
import { requestLog } from './http/request-log.js'
import { signedAnswers } from './http/signed-answers.js'
import { keepingSignedBytes } from './http/signed-body.js'
import { systemClock } from './runtime.js'
import { peerAnswerSigner } from './federation/peer-signature.js'
import { requestFraming } from './http/request-framing.js'
import { authorize } from './http/authorize.js'
import { rejectLoneSurrogates, requireUtf8Json } from './http/utf8-guard.js'
import { keepingJsonBytes, rejectInexactNumbers, rejectInexactQueryIntegers } from './http/exact-numbers.js'
import { type NetworkOptions, networkGuard } from './http/network.js'
import { type Bucket, type BucketLimiter, rateLimit } from './http/rate-limit.js'
import type { TokenResolver } from './auth/caller.js'
import { loadContract } from './http/openapi-document.js'
import { BODY_LIMIT_BYTES, lastResortErrorHandler, problemHandler } from './http/problem.js'
import type { RouteDefinition } from './http/route.js'
import { operationDispatcher, pairHandlers } from './http/dispatch.js'
import { EventStreams } from './http/sse.js'
import { a2aV1StreamRoutes } from './a2a-v1/streaming.handlers.js'
import { ValidatedBodies } from './http/validated-bodies.js'
import { type Logger, silentLogger } from './logger.js'
import { type ServiceDeps, type Services, createServices } from './services.js'
import { taskRoutes } from './tasks/task.handlers.js'
import { installValidatorPatches, markBundled } from './http/validator-patches.js'

export interface AppDeps extends ServiceDeps {
  /** The node's services (`openNode`), built over the same store; built here from the deps above when absent. */
  readonly services?: Services
  /** Resolves a bearer token to an identity; null disables auth (every request is the operator). */
  readonly resolveToken: TokenResolver | null
  readonly validateResponses?: boolean
  /**
   * Validate `openapi.yaml` itself against the OpenAPI schema when the app is built. Defaults to doing so only when
   * the document was parsed from YAML that differs from the checked pre-parsed copy (`npm run generate`), whose
   * validity the test suite asserts: compiling and running that schema was a tenth of the start-up time.
   */
  readonly validateApiSpec?: boolean
  readonly logger?: Logger
  /** IP allowlist and trusted proxies; none by default. */
  readonly network?: NetworkOptions
  /** Per-bucket limiters (absent bucket = unlimited). */
  readonly rateLimiters?: Readonly<Partial<Record<Bucket, BucketLimiter>>>
  readonly rateLimitLoopback?: boolean
  /** The `auth_failure` bucket: failed authentications per client address (none when absent). */
  readonly authFailureLimiter?: BucketLimiter
  /** Where `GET /metrics` series live (a fresh registry when absent; never prom-client's global one). */
  readonly metricsRegistry?: Registry
  /** Load shedding, the answer deadline and the drain's refusals; none when absent. */
  readonly admission?: AdmissionOptions
}

export interface App {
  readonly express: Express
  readonly services: Services
  readonly metrics: PrometheusMetrics
  /** JSON bodies the response validator passed (null when responses are not validated). */
  readonly validatedBodies: ValidatedBodies | null
  /** The open Server-Sent Events streams (A2A v1.0 streaming), ended when the node drains. */
  readonly streams: EventStreams
}

/**
 * `x-body: raw` (`/a2a/v0/tasks`, validated by hand with Bernstein's texts): the body reaches the handler unparsed,
 * as the bytes read as UTF-8 whatever charset the request declares, a leading byte order mark dropped (Bernstein's
 * `json.loads` of the body bytes reads them so; the verifier refuses bytes that are not UTF-8).
 */
const RAW_BODY_TEXT = new TextDecoder('utf-8')
const rawBodyParser = express.raw({ type: () => true, limit: BODY_LIMIT_BYTES, verify: inboundBodyVerifier })
const readRawBody: RequestHandler = (req, res, next) =>
  rawBodyParser(req, res, (error?: unknown) => {
    if (error !== undefined) return next(error)
    const request = req as typeof req & { rawBody?: string }
    request.rawBody = Buffer.isBuffer(req.body) ? RAW_BODY_TEXT.decode(req.body) : ''
    req.body = undefined
    next()
  })

/**
 * The media types a JSON body is parsed as: JSON, and A2A v1.0's `application/a2a+json` (its HTTP+JSON binding). An
 * operation refuses a type its request body does not document (415), so the second reaches only the A2A v1 ones.
 */
const JSON_MEDIA_TYPES = ['application/json', 'application/a2a+json']

/** Builds the Express application without listening: the caller decides where (tests use port 0). */
export function createApp(deps: AppDeps): App {
  const contract = loadContract()
  // Everything the middleware decides by comes from the contract, checked here: a missing or unknown policy
  // extension, or a handler that does not pair with an operation, stops the start.
  const operations = new OperationIndex(contract.document)
  installValidatorPatches()
  const logger = deps.logger ?? silentLogger
  const metrics = new PrometheusMetrics(deps.metricsRegistry ?? PrometheusMetrics.newRegistry())
  metrics.observeStore(deps.store)
  const admission = new Admission(deps.admission ?? { maxWritesInFlight: 0, requestDeadlineMs: 0 })
  metrics.observeWritesInFlight(() => admission.writesInFlight)
  const services = deps.services ?? createServices({ ...deps, metrics: deps.metrics ?? metrics })
  const { tasks, a2a, inbound, health, lineage } = services
  const routes: RouteDefinition[] = [
    ...healthRoutes(health, contract),
    ...taskRoutes(tasks),
    ...a2aRoutes(a2a),
    ...a2aV1Routes(services.a2aV1, services.a2aV1Streams, pushJsonRpcMethods(services.a2aV1PushConfigs)),
    ...a2aV1StreamRoutes(services.a2aV1Streams),
    ...a2aV1PushRoutes(services.a2aV1PushConfigs),
    ...inboundRoutes(inbound),
    ...lineageRoutes(lineage),
    ...identityRoutes(deps.identity),
    ...docsRoutes(),
    ...metricsRoutes(metrics),
  ]
  const validatedBodies = deps.validateResponses === false ? null : new ValidatedBodies()
  const handlers = pairHandlers(operations, routes, validatedBodies)

  const app = express()
  app.disable('x-powered-by')
  // No automatic ETag on every body: hashing each response cost ~12 µs per request, and Express would then answer
  // If-None-Match with 304s the contract does not document. The operations that document an ETag set their own.
  app.set('etag', false)
  app.set('trust proxy', false)
  // Paths match exactly, as the contract writes them: the validator routes by these settings (and `exactPaths`
  // below refuses trailing slashes), and authentication and authorisation decide by the same exact path.
  // Case-insensitive or slash-tolerant routing would let `/A2A/tasks/send` reach an operation that an agent token
  // is refused at `/a2a/tasks/send`.
  app.set('case sensitive routing', true)
  app.set('strict routing', true)
  // The request path, in this order, as two middlewares of the router instead of some twenty (`chain`): the
  // router's work between layers cost more than most of them; the static files of the reference sit between the two.
  app.use(
    chain([
      // The one match of the request to the contract, before anything decides by it.
      matchOperation(operations),
      // First, so that every response carries X-Request-Id and every request is logged and counted, refusals included.
      requestLog({ logger, onFinish: (record) => metrics.observeRequest(record) }),
      // An answer to a peer's signed request is signed with the card key, whatever answers it (refusals included).
      signedAnswers(peerAnswerSigner(deps.identity, deps.clock ?? systemClock, deps.peerSignatures?.targetBase ?? null)),
      securityHeaders(),
      // Before anything decides by the request: these are refusals Node itself would make before any application code.
      requestFraming(),
      // Order matters: the network and the credential are checked before anything about limits or bodies is revealed.
      networkGuard(deps.network ?? { allowedIps: [], trustedProxyIps: [] }),
      exactPaths(),
      authenticate({
        resolveToken: deps.resolveToken,
        ...(deps.authFailureLimiter && { failures: { limiter: deps.authFailureLimiter, limitLoopback: deps.rateLimitLoopback ?? false, logger } }),
      }),
      authorize(),
      rateLimit({ limiters: deps.rateLimiters ?? {}, limitLoopback: deps.rateLimitLoopback ?? false, logger }),
      // Cheap refusals under load or while draining, before any body is read or the database is asked.
      admission.admit(),
    ]),
  )
  // Static files of the API reference: public, and not operations of the contract, so served before the validator.
  app.use(DOCS_ASSETS, docsAssets())
  const problems = problemHandler({
    log: (error, context) => logger.error({ err: error, ...context }, 'request failed'),
    // The A2A v1.0 operations answer errors in their binding's dialect (their x-error-format).
    formats: { 'a2a-jsonrpc': renderA2AError, 'a2a-rest': renderA2AError },
  })
  const streams = new EventStreams(logger)
  app.use(
    chain([
      readBodies({
        json: express.json({ type: JSON_MEDIA_TYPES, limit: BODY_LIMIT_BYTES, strict: false, verify: keepingSignedBytes(keepingJsonBytes(requireUtf8Json)) }),
        raw: readRawBody,
      }),
      rejectLoneSurrogates(),
      // JSON.parse rounds big integers and overflows to Infinity without a word; a body it changed is refused here.
      rejectInexactNumbers(),
      ...OpenApiValidator.middleware({
        // The checked copy of the shipped contract is a fixed point of the validator's bundling (the test suite bundles
        // it and compares); a document parsed from YAML that differs is bundled as usual.
        apiSpec: (contract.fromCheckedCopy ? markBundled(contract.validatorDocument) : contract.validatorDocument) as never,
        validateApiSpec: deps.validateApiSpec ?? !contract.fromCheckedCopy,
        // Unknown query parameters are ignored, as FastAPI does (cache busters, tracing tags).
        validateRequests: { allErrors: true, allowUnknownQueryParameters: true },
        // No coercion, removal or serialisation in response validation: it never changes a body, which the memo of
        // validated bodies (ValidatedBodies) relies on to know that the bytes sent are the bytes it checked.
        validateResponses: deps.validateResponses === false ? false : { allErrors: true },
        validateSecurity: false,
        // The contract has no multipart operation: no upload parser (a multipart body still gets the contract's 415).
        fileUploader: false,
        ignoreUndocumented: false,
      }),
      // After the validator, which coerces query integers to numbers without checking that they stayed exact.
      rejectInexactQueryIntegers(),
      admission.deadline(problems),
      operationDispatcher(handlers, streams),
    ]),
  )
  app.use(() => {
    throw new AppError('not_found', 'Not Found')
  })
  app.use(problems)
  // Last resort: an error raised while rendering an error (e.g. the response validator refusing an error body)
  // must still end as the contract's 500, never as Express's HTML page with a stack trace.
  app.use(lastResortErrorHandler(logger))
  return { express: app, services, metrics, validatedBodies, streams }
}
