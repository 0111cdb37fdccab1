/**
 * How A2A v1.0 operations answer an error, in the dialect of the binding that received the request (the operation's
 * `x-error-format`): a JSON-RPC error response, or a `google.rpc.Status` with an ErrorInfo. The HTTP layer's error
 * handler calls {@link renderA2AError} with what it made of the error (an {@link AppError} of the one table, or
 * null for the unexpected); A2A's own errors arrive as {@link A2AProtocolError}.
 *
 * @module
 */
import type { AppError, ErrorCode } from '../errors.js'
import { STATUS_OF } from '../http/problem.js'
import { A2A_ERRORS, type A2AErrorKind, A2AProtocolError, errorInfo } from './a2a-v1-errors.js'
import { isJsonRpcEnvelope, jsonRpcIdOf } from './jsonrpc.js'
import { responseContentType } from './media-type.js'

export type A2AErrorFormat = 'a2a-jsonrpc' | 'a2a-rest'

export interface RenderedError {
  readonly status: number
  readonly body: unknown
  readonly contentType: string
  readonly headers: Readonly<Record<string, string>>
  /** The error was not recognised: the caller logs it (its text never reaches the client). */
  readonly unexpected: boolean
}

/** What the request that failed said, as far as rendering needs it. */
export interface FailedRequest {
  /** The parsed body (undefined when none was parsed). */
  readonly body: unknown
  readonly accept: string | undefined
}

/** A refusal of the node's own (before or beside the A2A semantics): its HTTP status, rpc status and reason. */
interface Transport {
  readonly http: number
  readonly status: string
  readonly reason: string
}

/**
 * The `google.rpc` status and ErrorInfo reason of every error code of the one table, for the refusals the protocol
 * names no error for (its HTTP status is the table's, STATUS_OF in http/problem.ts). Total, so that a code added to
 * the table cannot fall through to INTERNAL here: a HEAD on a GET path (405), a path no operation has (404) or a full
 * disk (503) were answered 500 while they were missing.
 */
const RPC_OF: Readonly<Record<ErrorCode, Omit<Transport, 'http'>>> = {
  task_not_found: { status: 'NOT_FOUND', reason: 'TASK_NOT_FOUND' },
  a2a_task_not_found: { status: 'NOT_FOUND', reason: 'TASK_NOT_FOUND' },
  illegal_transition: { status: 'FAILED_PRECONDITION', reason: 'ILLEGAL_TRANSITION' },
  version_conflict: { status: 'ABORTED', reason: 'VERSION_CONFLICT' },
  invalid_request: { status: 'INVALID_ARGUMENT', reason: 'INVALID_REQUEST' },
  rejected: { status: 'FAILED_PRECONDITION', reason: 'REJECTED' },
  delivery_conflict: { status: 'ALREADY_EXISTS', reason: 'DELIVERY_CONFLICT' },
  validation_failed: { status: 'INVALID_ARGUMENT', reason: 'VALIDATION_FAILED' },
  unauthenticated: { status: 'UNAUTHENTICATED', reason: 'UNAUTHENTICATED' },
  forbidden: { status: 'PERMISSION_DENIED', reason: 'PERMISSION_DENIED' },
  rate_limited: { status: 'RESOURCE_EXHAUSTED', reason: 'RATE_LIMITED' },
  payload_too_large: { status: 'INVALID_ARGUMENT', reason: 'PAYLOAD_TOO_LARGE' },
  header_fields_too_large: { status: 'INVALID_ARGUMENT', reason: 'HEADER_FIELDS_TOO_LARGE' },
  request_timeout: { status: 'DEADLINE_EXCEEDED', reason: 'REQUEST_TIMEOUT' },
  unsupported_media_type: { status: 'INVALID_ARGUMENT', reason: 'CONTENT_TYPE_NOT_SUPPORTED' },
  not_found: { status: 'NOT_FOUND', reason: 'NOT_FOUND' },
  method_not_allowed: { status: 'UNIMPLEMENTED', reason: 'METHOD_NOT_ALLOWED' },
  expectation_failed: { status: 'FAILED_PRECONDITION', reason: 'EXPECTATION_FAILED' },
  unavailable: { status: 'UNAVAILABLE', reason: 'UNAVAILABLE' },
  storage_unavailable: { status: 'UNAVAILABLE', reason: 'STORAGE_UNAVAILABLE' },
  internal: { status: 'INTERNAL', reason: 'INTERNAL' },
}

const transportOf = (code: ErrorCode): Transport => ({ http: STATUS_OF[code], ...RPC_OF[code] })

/** JSON-RPC 2.0's "server error" code, for refusals the protocol has no code of its own for. */
const JSON_RPC_SERVER_ERROR = -32000
const INTERNAL_MESSAGE = 'Internal error'

/** The A2A kind an error of the one table stands for, when it is one the protocol names. */
function kindOf(known: AppError, format: A2AErrorFormat, body: unknown): A2AErrorKind | null {
  switch (known.code) {
    case 'a2a_task_not_found':
    case 'task_not_found':
      return 'TaskNotFoundError'
    case 'unsupported_media_type':
      return 'ContentTypeNotSupportedError'
    case 'validation_failed':
      if (known.issues.some((issue) => issue.type === 'json_invalid')) return format === 'a2a-jsonrpc' ? 'ParseError' : 'InvalidParams'
      // The contract checks the envelope and the method's params together; which one failed decides the code.
      if (format === 'a2a-jsonrpc' && !isJsonRpcEnvelope(body)) return 'InvalidRequest'
      return 'InvalidParams'
    case 'invalid_request':
    case 'illegal_transition':
    case 'version_conflict':
    case 'rejected':
    case 'delivery_conflict':
      return 'InvalidParams'
    case 'not_found':
    case 'method_not_allowed':
      return format === 'a2a-jsonrpc' ? 'MethodNotFound' : null
    default:
      return null
  }
}

function messageOf(known: AppError): string {
  if (known.code !== 'validation_failed' || known.issues.length === 0) return known.message
  return known.issues.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; ')
}

/** Renders `error` (what the handler made of it: `known`, or null when unrecognised) in the binding's dialect. */
export function renderA2AError(format: A2AErrorFormat, error: unknown, known: AppError | null, request: FailedRequest): RenderedError {
  let kind: A2AErrorKind | null = null
  let transport: Transport | null = null
  let message = INTERNAL_MESSAGE
  let metadata: Record<string, string> = {}
  let headers: Readonly<Record<string, string>> = {}
  let unexpected = false
  if (error instanceof A2AProtocolError) {
    kind = error.kind
    message = error.message
    metadata = { ...error.metadata }
  } else if (known === null) {
    kind = 'InternalError'
    unexpected = true
  } else {
    headers = known.headers
    for (const [key, value] of Object.entries(known.extra)) if (typeof value === 'string' || typeof value === 'number') metadata[key] = String(value)
    kind = kindOf(known, format, request.body)
    if (kind === null) transport = transportOf(known.code)
    message = kind === 'InternalError' || transport?.http === 500 ? INTERNAL_MESSAGE : messageOf(known)
  }
  if (format === 'a2a-jsonrpc') {
    const id = kind === 'ParseError' ? null : jsonRpcIdOf(request.body)
    const code = kind === null ? JSON_RPC_SERVER_ERROR : A2A_ERRORS[kind].code
    const reason = kind === null ? transport!.reason : A2A_ERRORS[kind].reason
    // Answers about the request are JSON-RPC responses (HTTP 200); refusals of the transport keep their status.
    const status = kind === null ? transport!.http : 200
    return {
      status,
      body: { jsonrpc: '2.0', id, error: { code, message, data: [errorInfo(reason, metadata)] } },
      contentType: 'application/json',
      headers,
      unexpected,
    }
  }
  const spec = kind === null ? transport! : A2A_ERRORS[kind]
  return {
    status: spec.http,
    body: { error: { code: spec.http, status: spec.status, message, details: [errorInfo(spec.reason, metadata)] } },
    contentType: responseContentType(request.accept),
    headers,
    unexpected,
  }
}
