/**
 * A2A v1.0 errors: the protocol's own (`TaskNotFoundError`…, spec §1.8 of the reference) and JSON-RPC's standard
 * ones, each with its JSON-RPC code, its HTTP status and `google.rpc` status name (spec 1.0.1), and the
 * `google.rpc.ErrorInfo` reason both bindings carry.
 *
 * @module
 */

export const A2A_ERROR_DOMAIN = 'a2a-protocol.org'
export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo'

interface ErrorSpec {
  /** JSON-RPC error code. */
  readonly code: number
  /** HTTP status on the HTTP+JSON binding (1.0.1). */
  readonly http: number
  /** `google.rpc.Code` name. */
  readonly status: string
  /** ErrorInfo reason (UPPER_SNAKE). */
  readonly reason: string
}

export const A2A_ERRORS = {
  TaskNotFoundError: { code: -32001, http: 404, status: 'NOT_FOUND', reason: 'TASK_NOT_FOUND' },
  TaskNotCancelableError: { code: -32002, http: 400, status: 'FAILED_PRECONDITION', reason: 'TASK_NOT_CANCELABLE' },
  PushNotificationNotSupportedError: { code: -32003, http: 400, status: 'FAILED_PRECONDITION', reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED' },
  UnsupportedOperationError: { code: -32004, http: 400, status: 'FAILED_PRECONDITION', reason: 'UNSUPPORTED_OPERATION' },
  ContentTypeNotSupportedError: { code: -32005, http: 400, status: 'INVALID_ARGUMENT', reason: 'CONTENT_TYPE_NOT_SUPPORTED' },
  InvalidAgentResponseError: { code: -32006, http: 500, status: 'INTERNAL', reason: 'INVALID_AGENT_RESPONSE' },
  ExtendedAgentCardNotConfiguredError: { code: -32007, http: 400, status: 'FAILED_PRECONDITION', reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED' },
  ExtensionSupportRequiredError: { code: -32008, http: 400, status: 'FAILED_PRECONDITION', reason: 'EXTENSION_SUPPORT_REQUIRED' },
  VersionNotSupportedError: { code: -32009, http: 400, status: 'FAILED_PRECONDITION', reason: 'VERSION_NOT_SUPPORTED' },
  // JSON-RPC 2.0's own. On HTTP+JSON a malformed request is INVALID_ARGUMENT with reason INVALID_PARAMS (what the
  // official SDK reads as RequestMalformedError).
  ParseError: { code: -32700, http: 400, status: 'INVALID_ARGUMENT', reason: 'PARSE_ERROR' },
  InvalidRequest: { code: -32600, http: 400, status: 'INVALID_ARGUMENT', reason: 'INVALID_REQUEST' },
  MethodNotFound: { code: -32601, http: 404, status: 'NOT_FOUND', reason: 'METHOD_NOT_FOUND' },
  InvalidParams: { code: -32602, http: 400, status: 'INVALID_ARGUMENT', reason: 'INVALID_PARAMS' },
  InternalError: { code: -32603, http: 500, status: 'INTERNAL', reason: 'INTERNAL' },
} as const satisfies Record<string, ErrorSpec>

export type A2AErrorKind = keyof typeof A2A_ERRORS

/** An A2A protocol error raised by the v1 services and handlers; rendered by the binding that received the request. */
export class A2AProtocolError extends Error {
  override readonly name = 'A2AProtocolError'
  readonly kind: A2AErrorKind
  /** ErrorInfo metadata (string values only, as `google.rpc.ErrorInfo` has). */
  readonly metadata: Readonly<Record<string, string>>

  constructor(kind: A2AErrorKind, message: string, metadata: Readonly<Record<string, string>> = {}) {
    super(message)
    this.kind = kind
    this.metadata = metadata
  }
}

export const taskNotFound = (id: string): A2AProtocolError => new A2AProtocolError('TaskNotFoundError', `Task '${id}' not found`, { taskId: id })

/** A `google.rpc.ErrorInfo` as ProtoJSON `Any`. */
export interface ErrorInfo {
  readonly '@type': typeof ERROR_INFO_TYPE
  readonly reason: string
  readonly domain: string
  readonly metadata?: Readonly<Record<string, string>>
}

export function errorInfo(reason: string, metadata: Readonly<Record<string, string>> = {}): ErrorInfo {
  return {
    '@type': ERROR_INFO_TYPE,
    reason,
    domain: A2A_ERROR_DOMAIN,
    ...(Object.keys(metadata).length > 0 && { metadata: { ...metadata } }),
  }
}
