import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import { answerClientErrors } from './client-errors.js'

/**
 * The Node HTTP server the app is served on (attach it with `server.on('request', app.express)`): the node's
 * (src/server.ts) and the test servers' alike, so that what Node answers before Express is what the tests see.
 * Node answers a few requests itself before any request listener runs, with an empty body or none at all; here
 * each of them is handed to the app instead, which answers them in the contract's error shape like every other
 * refusal (security headers, `X-Request-Id`, request log and metrics included):
 *
 * - an HTTP/1.1 request without Host: Node's `requireHostHeader` answers an empty 400; off, and `requestFraming`
 *   answers it;
 * - an expectation other than 100-continue: without a 'checkExpectation' listener Node answers an empty 417; the
 *   listener passes the request on, and `requestFraming` answers it. 100-continue keeps Node's default (no
 *   'checkContinue' listener): `100 Continue` at once, then the request.
 *
 * Requests Node cannot parse at all never become requests: `answerClientErrors` answers them.
 */
export function createHttpServer(): Server {
  const server = createServer({ requireHostHeader: false })
  answerClientErrors(server)
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    server.emit('request', req, res)
  })
  return server
}
