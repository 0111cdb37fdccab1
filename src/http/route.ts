import type { IncomingHttpHeaders } from 'node:http'
import type { Request, Response } from 'express'
import type { JsonBody, OperationId, OperationResult, PathParams, QueryParams } from '../contract.js'
import type { Caller } from '../auth/caller.js'
import type { ReceivedRequest } from '../crypto/peer-http-signature.js'
import { signedBodyOf } from './signed-body.js'
import type { EventStreams, StreamReply } from './sse.js'
import type { ValidatedBodies } from './validated-bodies.js'

/** What a handler sees: contract types in, the caller, nothing of Express. */
export interface HttpInput<Id extends OperationId> {
  readonly params: PathParams<Id>
  readonly query: QueryParams<Id>
  readonly body: JsonBody<Id>
  readonly caller: Caller
  readonly headers: IncomingHttpHeaders
  /** The unparsed body, for the one route validated by hand (`/a2a/v0/tasks`). */
  readonly rawBody: string | undefined
  /**
   * The request as received, for checking its RFC 9421 signature: the request line as addressed (method,
   * `scheme://host` and path with query), the header fields (one string each) and the exact body bytes (the raw body,
   * or a signed request's JSON bytes). Built on each call.
   */
  readonly received: () => ReceivedRequest
}

/** A response that is not JSON-serialised by Express: exact bytes (signed documents, YAML). */
export interface RawReply<Status extends number = number> {
  readonly status: Status
  readonly raw: string | Buffer
  readonly contentType: string
  readonly headers?: Readonly<Record<string, string>>
}

/** What a handler answers: a body of its operation, raw bytes, or a Server-Sent Events stream (`text/event-stream`). */
export type Reply<Id extends OperationId> = OperationResult<Id> | RawReply<OperationResult<Id>['status']> | StreamReply

/** What any route's handler answers (each route's own {@link Reply} type, erased for the dispatcher). */
export type AnyReply = RawReply | StreamReply | { readonly status: number; readonly body?: unknown; readonly headers?: Readonly<Record<string, string>> }

export interface RouteDefinition {
  readonly operationId: OperationId
  readonly method: 'get' | 'post' | 'delete'
  /** The contract's path at the root; the same handler also serves it under `/api/v1`. */
  readonly path: string
  /** Reads the request and answers; the dispatcher writes the answer ({@link writeReply}). */
  readonly handle: (req: Request, res: Response) => Promise<AnyReply>
}

/**
 * Declares a route whose handler is typed by the contract's operation: its input and every `{status, body}` it
 * may return are checked by the compiler against `generated/openapi.d.ts`.
 */
/** Request header fields as single strings (repeated ones joined as a list, as HTTP reads them). */
export function fieldsOf(headers: IncomingHttpHeaders): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) fields[name] = Array.isArray(value) ? value.join(', ') : value
  return fields
}

export function route<Id extends OperationId>(
  operationId: Id,
  method: 'get' | 'post' | 'delete',
  path: string,
  handle: (input: HttpInput<NoInfer<Id>>) => Promise<Reply<NoInfer<Id>>>,
): RouteDefinition {
  return {
    operationId,
    method,
    path,
    handle: (req, res) => {
      const rawBody = typeof (req as { rawBody?: unknown }).rawBody === 'string' ? (req as unknown as { rawBody: string }).rawBody : undefined
      return handle({
        params: req.params as PathParams<Id>,
        query: req.query as QueryParams<Id>,
        body: req.body as JsonBody<Id>,
        caller: res.locals['caller'] as Caller,
        headers: req.headers,
        rawBody,
        // Built only when asked (`req.protocol` and the copy of every field are not free): most requests are never
        // checked against a signature.
        received: () => ({
          method: req.method,
          origin: `${req.protocol}://${req.get('host') ?? ''}`,
          path: req.originalUrl,
          headers: fieldsOf(req.headers),
          body: rawBody ?? signedBodyOf(req),
        }),
      })
    },
  }
}

/**
 * Writes a reply. A JSON body goes through `res.json`, where the response validator checks it; with `validated`,
 * bytes identical to a body it passed before for the same operation and status are sent as they are, and bodies
 * it passes now are remembered. `operation` names the matched operation (`GET /a2a/tasks/{a2a_task_id}`). A stream
 * is handed to `streams`, which writes it (no response validation: its events are not one JSON body).
 */
export function writeReply(res: Response, reply: AnyReply, operation: string, validated: ValidatedBodies | null, streams?: EventStreams): void {
  if ('stream' in reply) {
    if (streams === undefined) throw new Error(`${operation} answered a stream, but this app writes none`)
    streams.write(res, reply.stream, operation)
    return
  }
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value)
  res.status(reply.status)
  if ('raw' in reply) {
    res.type(reply.contentType).send(reply.raw)
    return
  }
  if (reply.body === undefined) {
    res.end()
    return
  }
  // Only successes are remembered: errors are rendered by the problem handler, and the validator leaves 5xx alone.
  if (validated === null || reply.status < 200 || reply.status >= 300) {
    res.json(reply.body)
    return
  }
  // The same text `res.json` would send (Express stringifies without replacer or spacing, as configured in app.ts).
  const text = JSON.stringify(reply.body)
  const key = validated.keyOf(operation, reply.status, text)
  if (validated.has(key)) {
    if (!endWithJsonText(res, text)) {
      if (res.get('Content-Type') === undefined) res.set('Content-Type', 'application/json')
      res.send(text)
    }
    return
  }
  res.json(reply.body)
  // The validator runs inside res.json and, when it refuses the body, answers 500 in its place before returning:
  // a response already sent with the intended status is one it passed.
  if (res.headersSent && res.statusCode === reply.status) validated.add(key)
}

/** What Express's `res.json` sets for a JSON body (its `res.set` expands `application/json` to this). */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
/** Response headers that, once set, change what Express's `res.send` writes. */
const HEADERS_EXPRESS_HEEDS = ['Content-Type', 'ETag', 'Last-Modified', 'Transfer-Encoding'] as const

/**
 * Ends `res` with JSON text exactly as `res.send(text)` would after `res.set('Content-Type', 'application/json')`
 * (same headers in the same order, same bytes), when nothing can make Express's answer differ: no conditional
 * request (Express answers `If-None-Match: *` with a 304 even without an ETag), no content type, ETag,
 * Last-Modified or Transfer-Encoding set, and a status that carries a body. Express's general path parses and
 * rebuilds the content type and its charset twice (~20 µs a GET); here they are constants. Returns false, having
 * done nothing, in any other case.
 */
function endWithJsonText(res: Response, text: string): boolean {
  const { headers } = res.req
  if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return false
  for (const name of HEADERS_EXPRESS_HEEDS) if (res.getHeader(name) !== undefined) return false
  if (res.statusCode === 204 || res.statusCode === 205 || res.statusCode === 304) return false
  res.setHeader('Content-Type', JSON_CONTENT_TYPE)
  res.setHeader('Content-Length', Buffer.byteLength(text, 'utf8'))
  if (res.req.method === 'HEAD') res.end()
  else res.end(text, 'utf8')
  return true
}
