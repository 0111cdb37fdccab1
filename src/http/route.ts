import type { IncomingHttpHeaders } from 'node:http'
import type { RequestHandler } from 'express'
import type { JsonBody, OperationId, OperationResult, PathParams, QueryParams } from '../contract.js'
import type { Caller } from './caller.js'

/** What a handler sees: contract types in, the caller, nothing of Express. */
export interface HttpInput<Id extends OperationId> {
  readonly params: PathParams<Id>
  readonly query: QueryParams<Id>
  readonly body: JsonBody<Id>
  readonly caller: Caller
  readonly headers: IncomingHttpHeaders
  /** The unparsed body, for the one route validated by hand (`/a2a/v0/tasks`). */
  readonly rawBody: string | undefined
}

/** A response that is not JSON-serialised by Express: exact bytes (signed documents, YAML). */
export interface RawReply<Status extends number = number> {
  readonly status: Status
  readonly raw: string | Buffer
  readonly contentType: string
  readonly headers?: Readonly<Record<string, string>>
}

export type Reply<Id extends OperationId> = OperationResult<Id> | RawReply<OperationResult<Id>['status']>

export interface RouteDefinition {
  readonly operationId: OperationId
  readonly method: 'get' | 'post'
  /** The contract's path at the root; the same handler also serves it under `/api/v1`. */
  readonly path: string
  readonly handler: RequestHandler
}

/**
 * Declares a route whose handler is typed by the contract's operation: its input and every `{status, body}` it
 * may return are checked by the compiler against `generated/openapi.d.ts`.
 */
export function route<Id extends OperationId>(
  operationId: Id,
  method: 'get' | 'post',
  path: string,
  handle: (input: HttpInput<NoInfer<Id>>) => Promise<Reply<NoInfer<Id>>>,
): RouteDefinition {
  const handler: RequestHandler = async (req, res) => {
    const reply = await handle({
      params: req.params as PathParams<Id>,
      query: req.query as QueryParams<Id>,
      body: req.body as JsonBody<Id>,
      caller: res.locals['caller'] as Caller,
      headers: req.headers,
      rawBody: typeof (req as { rawBody?: unknown }).rawBody === 'string' ? (req as unknown as { rawBody: string }).rawBody : undefined,
    })
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value)
    if ('raw' in reply) {
      res.status(reply.status).type(reply.contentType).send(reply.raw)
    } else if (reply.body === undefined) {
      res.status(reply.status).end()
    } else {
      res.status(reply.status).json(reply.body)
    }
  }
  return { operationId, method, path, handler }
}
