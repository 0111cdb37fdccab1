import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'

/**
 * Node's own test for a 100-continue expectation (`continueExpression` in lib/_http_server.js). The same test
 * here, so that what Node has already answered with `100 Continue` is never refused afterwards.
 */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i

/**
 * The two refusals Node's HTTP server would otherwise make itself, with an empty body, before the app sees the
 * request (`createHttpServer` hands these requests over instead), made here in the contract's error shape:
 *
 * - an HTTP/1.1 request without Host: 400, and the connection is closed, as Node does (RFC 9112 §3.2: "A server
 *   MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request message that lacks a Host header
 *   field");
 * - an expectation other than 100-continue: 417, the only one this server meets (RFC 9110 §10.1.1).
 *
 * Only HTTP/1.1, as in Node: HTTP/1.0 has no Host requirement and no expectations (RFC 9110 §10.1.1 has a server
 * ignore even 100-continue in an HTTP/1.0 request).
 */
export function requestFraming(): RequestHandler {
  return (req, _res, next) => {
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      if (req.headers.host === undefined) throw new AppError('invalid_request', 'Missing Host header', { headers: { Connection: 'close' } })
      const expect = req.headers.expect
      if (expect !== undefined && !CONTINUE.test(expect)) throw new AppError('expectation_failed', 'Only the 100-continue expectation is supported')
    }
    next()
  }
}
