import { randomUUID } from 'node:crypto'
import type { RequestHandler } from 'express'
import type { Logger } from '../logger.js'
import type { Caller } from '../auth/caller.js'
import { routeIfMatched } from './operation-index.js'

/** A caller-supplied request id is echoed only when it is short and made of safe characters (no log injection). */
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/

export const REQUEST_ID_HEADER = 'X-Request-Id'

/** The incoming `X-Request-Id` when well formed, else a fresh UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header
  return value !== undefined && REQUEST_ID.test(value) ? value : randomUUID()
}

/** One finished request, as logged and as counted. */
export interface RequestRecord {
  readonly requestId: string
  readonly method: string
  /** The contract's path template (`/tasks/{task_id}`), or null for a path the contract does not have. */
  readonly route: string | null
  readonly operationId: string | null
  readonly status: number
  readonly durationMs: number
  readonly tenant: string | null
}

export interface RequestLogOptions {
  readonly logger: Logger
  /** Called once per finished request (metrics). */
  readonly onFinish?: (record: RequestRecord) => void
}

/**
 * The first middleware: gives every request an id (echoed in `X-Request-Id`, available as `res.locals.requestId`)
 * and writes one structured line when the response is finished. The line names the operation by its template and
 * operationId, never the concrete path (ids stay out of aggregations), and carries no header, token or body.
 */
export function requestLog(options: RequestLogOptions): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint()
    const requestId = requestIdFrom(req.headers['x-request-id'])
    res.locals['requestId'] = requestId
    res.setHeader(REQUEST_ID_HEADER, requestId)
    let done = false
    const finish = (aborted: boolean): void => {
      if (done) return
      done = true
      // The request was matched once, first of all (matchOperation): refusals before the validator are named too.
      const matched = routeIfMatched(res)
      const caller = res.locals['caller'] as Caller | undefined
      const record: RequestRecord = {
        requestId,
        method: req.method,
        route: matched?.path?.template ?? null,
        operationId: matched?.operation?.operationId ?? null,
        status: res.statusCode,
        durationMs: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        tenant: caller?.tenantId ?? null,
      }
      options.onFinish?.(record)
      const line = {
        request_id: record.requestId,
        method: record.method,
        route: record.route,
        operation_id: record.operationId,
        status: record.status,
        duration_ms: record.durationMs,
        tenant: record.tenant,
        ...(aborted && { aborted: true }),
      }
      if (record.status >= 500) options.logger.warn(line, 'request')
      else options.logger.info(line, 'request')
    }
    res.once('finish', () => finish(false))
    res.once('close', () => finish(!res.writableFinished))
    next()
  }
}
