import type { Request, RequestHandler } from 'express'
import { routeOf } from './operation-index.js'
import { declaredTooLarge } from './problem.js'

export interface BodyReaders {
  /** Parses a JSON body (`x-body: json`). */
  readonly json: RequestHandler
  /** Reads the bytes for an operation that checks them by hand (`x-body: raw`). */
  readonly raw: RequestHandler
}

/**
 * Reads the request body as the operation says (`x-body`). Operations of methods without content (GET…) read none,
 * and a request the contract has no operation for has its POST body parsed as JSON, as before any operation is
 * known. A body that is not read is drained and discarded before the request goes on: answering while the client is
 * still sending would have the connection reset under the answer. So content in a GET (RFC 9110 gives it no
 * meaning) can neither be refused with a status the operation does not document nor change the answer.
 */
export function readBodies(readers: BodyReaders): RequestHandler {
  return (req, res, next) => {
    const reading = routeOf(res).policy.body
    if (reading !== 'none') {
      const tooLarge = declaredTooLarge(req)
      if (tooLarge !== null) return next(tooLarge)
    }
    if (reading === 'json') return readers.json(req, res, next)
    if (reading === 'raw') return readers.raw(req, res, next)
    return drain(req, next)
  }
}

function drain(req: Request, next: () => void): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0'
  if (!hasBody || req.readableEnded) return next()
  req.once('end', () => next())
  req.resume()
}
