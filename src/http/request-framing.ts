import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'

/**
 * Node's own test for a 100-continue expectation (`continueExpression` in lib/_http_server.js). The same test
 * here, so that what Node has already answered with `100 Continue` is never refused afterwards.
 */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i

/** How many of the request's header lines are Host (Node keeps the first in `req.headers`, all in `rawHeaders`). */
function hostLines(rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    if (name.length === 4 && name.toLowerCase() === 'host') count++
  }
  return count
}

/**
 * Refusals of how a request is framed, in the contract's error shape:
 *
 * - an HTTP/1.1 request without Host: 400, and the connection is closed, as Node does (RFC 9112 §3.2: "A server
 *   MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request message that lacks a Host header
 *   field and to any request message that contains more than one Host header field line");
 * - a request with more than one Host line, of any version: the same 400 and close. Node serves it, reading the first
 *   line, where a proxy in front may have read another and routed it elsewhere;
 * - an expectation other than 100-continue: 417, the only one this server meets (RFC 9110 §10.1.1).
 *
 * Node would answer the first and the last itself, with an empty body, before the app sees the request
 * (`createHttpServer` hands them over instead). They are made only for HTTP/1.1, as in Node: HTTP/1.0 has no Host
 * requirement and no expectations (RFC 9110 §10.1.1 has a server ignore even 100-continue in an HTTP/1.0 request).
 */
export function requestFraming(): RequestHandler {
  return (req, _res, next) => {
    if (hostLines(req.rawHeaders) > 1) throw new AppError('invalid_request', 'More than one Host header', { headers: { Connection: 'close' } })
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      if (req.headers.host === undefined) throw new AppError('invalid_request', 'Missing Host header', { headers: { Connection: 'close' } })
      const expect = req.headers.expect
      if (expect !== undefined && !CONTINUE.test(expect)) throw new AppError('expectation_failed', 'Only the 100-continue expectation is supported')
    }
    next()
  }
}
