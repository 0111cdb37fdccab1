import type { ErrorRequestHandler, Request, Response } from 'express'
import { parsePythonJson, pythonJsonDecodeError } from '../canonical/python-json.js'
import { AppError, type ErrorCode, type ValidationIssue } from '../errors.js'
import { asStorageFault } from '../store/storage-fault.js'
import { type ErrorFormat, routeIfMatched, routeOf } from './operation-index.js'

/** The one place where error codes become HTTP statuses. */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  task_not_found: 404,
  a2a_task_not_found: 404,
  not_found: 404,
  illegal_transition: 409,
  version_conflict: 409,
  rejected: 409,
  delivery_conflict: 409,
  invalid_request: 400,
  validation_failed: 422,
  unauthenticated: 401,
  forbidden: 403,
  method_not_allowed: 405,
  expectation_failed: 417,
  payload_too_large: 413,
  header_fields_too_large: 431,
  request_timeout: 408,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
  storage_unavailable: 503,
  internal: 500,
}

export const BODY_LIMIT_BYTES = 1_048_576

/** The `pattern` the contract gives every string that reaches the database (issue 26: one answer on both engines). */
const NUL_FREE_PATTERN = '^[^\\u0000]*$'
const NUL_MESSAGE = 'String must not contain the NUL character (\\u0000)'

/** The one text of every 500: what went wrong goes to the log, never to the client. */
const INTERNAL_DETAIL = 'Internal Server Error'

/** The shape express-openapi-validator's HttpError and body-parser errors share. */
interface HttpLikeError {
  status?: number
  statusCode?: number
  type?: string
  message?: string
  errors?: { path?: string; message?: string; errorCode?: string }[]
  length?: number
  body?: string
  /** Set by http-errors on client errors whose message is safe to show. */
  expose?: boolean
}

const TYPE_OF_AJV: Readonly<Record<string, string>> = {
  required: 'missing',
  type: 'type_error',
  minLength: 'string_too_short',
  maxLength: 'string_too_long',
  minimum: 'greater_than_equal',
  maximum: 'less_than_equal',
  exclusiveMinimum: 'greater_than',
  exclusiveMaximum: 'less_than',
  additionalProperties: 'extra_forbidden',
  enum: 'enum',
  pattern: 'string_pattern_mismatch',
  minItems: 'too_short',
  maxItems: 'too_long',
  maxProperties: 'too_long',
  format: 'value_error',
  anyOf: 'value_error',
  oneOf: 'value_error',
}

const LOCATION_OF: Readonly<Record<string, string>> = { params: 'path', headers: 'header', body: 'body', query: 'query' }

/** A path segment percent-decoded, or as sent when it is not valid percent-encoding (`%FF`, `%`). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** express-openapi-validator item → FastAPI's `{loc, msg, type}` (the seed's HTTPValidationError). */
export function validatorIssue(item: { path?: string; message?: string; errorCode?: string }): ValidationIssue {
  const segments = (item.path ?? '').split('/').filter((s) => s !== '')
  const [first, ...rest] = segments
  const loc: (string | number)[] = [LOCATION_OF[first ?? 'body'] ?? first ?? 'body', ...rest.map((s) => (/^\d+$/.test(s) ? Number(s) : decodeSegment(s)))]
  const rule = (item.errorCode ?? '').split('.')[0] ?? ''
  const type = TYPE_OF_AJV[rule] ?? 'value_error'
  const message = item.message ?? 'Invalid value'
  if (type === 'string_pattern_mismatch' && message.includes(NUL_FREE_PATTERN)) {
    // The contract's pattern for strings that reach the database: said as the PostgreSQL fallback below says it.
    return { loc, msg: NUL_MESSAGE, type: 'value_error' }
  }
  if (type === 'missing') {
    // ajv reports a missing property at its parent's path; FastAPI names the property itself.
    const missing = /required property '([^']+)'/.exec(message)?.[1]
    if (missing !== undefined && loc[loc.length - 1] !== missing) loc.push(missing)
    return { loc, msg: 'Field required', type }
  }
  return { loc, msg: message, type }
}

/**
 * Where JSON parsing failed, as FastAPI reports it (`json.JSONDecodeError.pos`: a code-point offset). V8's own
 * messages often carry no position at all, so the raw body is parsed again with the Python-compatible parser.
 */
function jsonErrorPosition(error: HttpLikeError): number {
  const text = error.body
  if (typeof text === 'string') {
    try {
      parsePythonJson(text)
    } catch (parseError) {
      const { pos } = pythonJsonDecodeError(parseError, text)
      return Array.from(text.slice(0, pos)).length
    }
  }
  return Number(/position (\d+)/.exec(error.message ?? '')?.[1] ?? 0)
}

/** PostgreSQL refuses U+0000 in text: `invalid byte sequence for encoding "UTF8": 0x00` (SQLSTATE 22021). */
function isNulRejection(error: unknown): boolean {
  const e = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown }
  return e.code === '22021' && typeof e.message === 'string' && e.message.includes('0x00')
}

/** The request input that carried the NUL character: a path parameter, a query parameter, or a string in the body. */
function nulLocation(req: Request): (string | number)[] {
  const hasNul = (v: unknown): boolean => typeof v === 'string' && v.includes('\u0000')
  const pathParams = (req as Request & { openapi?: { pathParams?: Record<string, unknown> } }).openapi?.pathParams ?? req.params ?? {}
  for (const [name, value] of Object.entries(pathParams)) if (hasNul(value)) return ['path', name]
  for (const [name, value] of Object.entries(req.query ?? {})) if (hasNul(value)) return ['query', name]
  const pending: [unknown, (string | number)[]][] = [[req.body, ['body']]]
  while (pending.length > 0) {
    const [value, loc] = pending.pop() as [unknown, (string | number)[]]
    if (hasNul(value)) return loc
    if (Array.isArray(value)) for (const [i, item] of value.entries()) pending.push([item, [...loc, i]])
    else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) pending.push([v, [...loc, k]])
  }
  return ['body']
}

/**
 * The 413 for a body whose Content-Length already says it is over the cap, before a byte of it is read: body-parser
 * would read the whole declared body first (so a client that sends part of it and waits would wait for its request
 * timeout). Null when the length is not declared, is within the cap, or is of a compressed body (limited decoded).
 */
export function declaredTooLarge(req: Request): AppError | null {
  const contentEncoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase()
  const declared = Number(req.headers['content-length'])
  if (contentEncoding !== 'identity' || !Number.isSafeInteger(declared) || declared <= BODY_LIMIT_BYTES) return null
  return new AppError('payload_too_large', tooLargeDetail(req, {}))
}

/**
 * The 413 text. It quotes a size only when Content-Length declared the body as sent: the size of a chunked body is
 * unknown when reading stops, and a compressed body is limited after decoding, so its Content-Length (the compressed
 * size) says nothing about the limit it broke.
 */
function tooLargeDetail(req: Request, error: HttpLikeError): string {
  const contentEncoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase()
  if (contentEncoding !== 'identity') return `Decoded request body exceeds ${BODY_LIMIT_BYTES}-byte limit`
  const declared = Number(req.headers['content-length'])
  const size = Number.isSafeInteger(declared) && declared > 0 ? declared : error.length
  if (size === undefined) return `Request body exceeds ${BODY_LIMIT_BYTES}-byte limit`
  return `Request body ${size} bytes exceeds ${BODY_LIMIT_BYTES}-byte limit`
}

export const MALFORMED_PATH_MESSAGE = 'Path parameter is not valid percent-encoded UTF-8'

/** express-openapi-validator's refusal of a path it cannot percent-decode (its text: "malformed uri'"). */
function isMalformedPath(errors: readonly { message?: string }[]): boolean {
  return errors.length === 1 && /^malformed uri/i.test(errors[0]?.message ?? '')
}

/**
 * A body the parser refused before validation (an unknown charset or content coding, a body that does not decode
 * or ends early). The response validator does not see such answers, so the error is chosen from what the operation
 * documents: the JSON operations document 415 and 422 (`preferred`), `/a2a/v0/tasks`, which reads its body raw and
 * checks it by hand as Bernstein does, documents 400 (Bernstein's `Invalid JSON body: …`).
 */
function refusedBody(req: Request, res: Response, preferred: 'unsupported_media_type' | 'validation_failed', message: string): AppError {
  const { operation } = routeOf(res)
  const documented = operation !== null && operation.method === req.method && operation.statuses.has(STATUS_OF[preferred])
  if (!documented) return new AppError('invalid_request', `Invalid JSON body: ${message}`)
  if (preferred === 'unsupported_media_type') return new AppError(preferred, message)
  return invalid([{ loc: ['body'], msg: message, type: 'value_error' }])
}

const invalid = (issues: readonly ValidationIssue[]): AppError => new AppError('validation_failed', 'Validation failed', { issues })

function send(res: Response, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.status(status).json(body)
}

/** An error rendered in another dialect than `{detail}` (see `x-error-format`). */
export interface FormattedError {
  readonly status: number
  readonly body: unknown
  readonly contentType: string
  readonly headers: Readonly<Record<string, string>>
  /** Not recognised: logged, as an unexpected error always is. */
  readonly unexpected: boolean
}

/** Renders an error (and what the one table makes of it: an AppError, or null when unrecognised) for an operation. */
export type ErrorRenderer = (
  format: Exclude<ErrorFormat, 'detail'>,
  error: unknown,
  known: AppError | null,
  request: { body: unknown; accept: string | undefined },
) => FormattedError

export interface ProblemOptions {
  readonly log: (error: unknown, context: { method: string; path: string }) => void
  /** Renderers of the operations whose `x-error-format` is not `detail`. */
  readonly formats?: Readonly<Partial<Record<Exclude<ErrorFormat, 'detail'>, ErrorRenderer>>>
}

/**
 * Renders every error as the contract's error body: `{"detail": "..."}`, or the 422 list. Anything not
 * recognised is a 500 with a fixed text; the error itself goes to the log, never to the client.
 */
export function problemHandler(options: ProblemOptions): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error)
    try {
      render(error, req, res, options)
    } catch (failure) {
      // Rendering must never fall through to Express's default handler, which answers with an HTML stack trace.
      options.log(failure, logContext(req, res))
      if (!res.headersSent) send(res, STATUS_OF.internal, { detail: INTERNAL_DETAIL })
    }
  }
}

function render(error: unknown, req: Request, res: Response, options: ProblemOptions): void {
  const known = asAppError(error, req, res)
  const format = routeIfMatched(res)?.policy.errorFormat ?? 'detail'
  const renderer = format === 'detail' ? undefined : options.formats?.[format]
  if (format !== 'detail' && renderer !== undefined) {
    const formatted = renderer(format, error, known, { body: req.body, accept: req.headers.accept })
    if (formatted.unexpected || formatted.status >= 500) options.log(error, logContext(req, res))
    for (const [name, value] of Object.entries(formatted.headers)) res.setHeader(name, value)
    res.setHeader('Content-Type', formatted.contentType)
    res.status(formatted.status).json(formatted.body)
    return
  }
  if (known === null) {
    options.log(error, logContext(req, res))
    return send(res, STATUS_OF.internal, { detail: INTERNAL_DETAIL })
  }
  const status = STATUS_OF[known.code]
  if (known.code === 'validation_failed') return send(res, status, { detail: known.issues }, known.headers)
  if (status >= 500) options.log(error, logContext(req, res))
  return send(res, status, { detail: known.message, ...known.extra }, known.headers)
}

/**
 * What an error raised anywhere in the stack stands for, as an error code of the one table (body-parser's and the
 * validator's errors carry HTTP statuses of their own); null when it is not recognised (a 500).
 */
function asAppError(error: unknown, req: Request, res: Response): AppError | null {
  if (error instanceof AppError) return error
  // A storage fault met outside a transaction (a read on a failing disk): the same 503 as inside one.
  const storage = asStorageFault(error)
  if (storage !== undefined) return storage
  if (isNulRejection(error)) {
    // The statement failed inside its transaction, so nothing was written; the input, not the server, is at fault.
    return invalid([{ loc: nulLocation(req), msg: NUL_MESSAGE, type: 'value_error' }])
  }
  const http = (typeof error === 'object' && error !== null ? error : {}) as HttpLikeError
  const status = http.status ?? http.statusCode
  switch (http.type) {
    case 'entity.parse.failed':
      return invalid([{ loc: ['body', jsonErrorPosition(http)], msg: 'JSON decode error', type: 'json_invalid' }])
    case 'entity.too.large':
      return new AppError('payload_too_large', tooLargeDetail(req, http))
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return refusedBody(req, res, 'unsupported_media_type', http.message ?? 'Unsupported Media Type')
    case 'request.aborted':
      return refusedBody(req, res, 'validation_failed', 'Request body ended before its declared length')
    case 'request.size.invalid':
      return refusedBody(req, res, 'validation_failed', 'Request body size does not match Content-Length')
  }
  if (Array.isArray(http.errors) && typeof status === 'number') {
    const isResponseError = http.errors.some((e) => (e.path ?? '').startsWith('/response'))
    if (status === 400 && isMalformedPath(http.errors)) {
      const param = routeOf(res).undecodableParameter
      return invalid([{ loc: param === null ? ['path'] : ['path', param], msg: MALFORMED_PATH_MESSAGE, type: 'value_error' }])
    }
    if (status === 400 && !isResponseError) return invalid(http.errors.map(validatorIssue))
    if (status === 404) return new AppError('not_found', 'Not Found')
    if (status === 405) {
      // The validator refuses every method the contract does not list, HEAD included, so HEAD is not advertised.
      const allow = routeOf(res).path?.methods ?? []
      return new AppError('method_not_allowed', 'Method Not Allowed', { headers: { Allow: allow.join(', ') } })
    }
    if (status === 415) return new AppError('unsupported_media_type', `Unsupported Media Type: ${req.headers['content-type'] ?? 'none'}`)
  }
  // body-parser's other client errors carry no `type`, e.g. a body that does not decode as its Content-Encoding.
  if (status === 400 && http.expose === true) return refusedBody(req, res, 'validation_failed', 'Request body does not decode as its Content-Encoding')
  return null
}

/** What an error log line says of its request: the request id (as in the request log line and `X-Request-Id`) ties the two. */
function logContext(req: Request, res: Response): { method: string; path: string; request_id: unknown } {
  return { method: req.method, path: req.path, request_id: res.locals['requestId'] ?? null }
}

/** Writes the fixed 500 directly (no res.json, so no response validation can intercept it again). */
export function lastResortErrorHandler(logger: { error(obj: unknown, msg?: string): void }): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    logger.error({ err: error, ...logContext(req, res) }, 'error while rendering an error')
    if (res.headersSent) {
      res.destroy()
      return
    }
    res.statusCode = STATUS_OF.internal
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.end(JSON.stringify({ detail: INTERNAL_DETAIL }))
  }
}
