import { type IncomingMessage, type Server, ServerResponse, createServer } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
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
 *   'checkContinue' listener): `100 Continue` at once, then the request;
 * - CONNECT: without a 'connect' listener Node destroys the socket unanswered (see `answerConnect`).
 *
 * Requests Node cannot parse at all never become requests: `answerClientErrors` answers them.
 */
export function createHttpServer(): Server {
  const server = createServer({ requireHostHeader: false })
  answerClientErrors(server)
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    server.emit('request', req, res)
  })
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    answerConnect(server, req, socket as Socket)
  })
  return server
}

/** The response a socket is still writing, if any: Node's own bookkeeping of pipelined responses. */
function pendingResponse(socket: Socket): ServerResponse | null {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? null
}

/**
 * CONNECT asks for a tunnel, which this server never opens; Node hands such a request to 'connect' listeners
 * with the bare socket, the HTTP parser already detached. It is answered as any method the contract does not list:
 * the app sees it as an ordinary request (401 without a token, 404 on an unknown path or an authority-form target,
 * else 405 with `Allow`), and
 * the connection is closed once the answer is written, since nothing after a CONNECT is read as HTTP any more.
 * No answer is 2xx, so the client never takes the connection for an open tunnel (RFC 9110 §9.3.6).
 */
function answerConnect(server: Server, req: IncomingMessage, socket: Socket): void {
  // Node took its own listeners off the socket: without this one, a client resetting the connection would be an
  // uncaught 'error' event.
  socket.on('error', () => socket.destroy())
  // What follows the request on the wire is not read as HTTP: discard it rather than let it pile up.
  socket.resume()
  const answer = (): void => {
    if (socket.destroyed || !socket.writable) return
    const pending = pendingResponse(socket)
    if (pending !== null) {
      // Pipelined behind a response still being written: answer in order, after it. Node's own 'finish' listener,
      // registered first, hands the socket to the next queued response (if any) before this one runs.
      pending.once('finish', answer)
      return
    }
    // The usual target of a CONNECT is authority-form (`example.com:443`, RFC 9112 §3.2.3), which has no path:
    // Express cannot route it and would answer with its own HTML 404 before any middleware ran. It names no
    // resource of this server, so it is answered as the asterisk-form target `*`: like any unknown path.
    if (!(req.url ?? '').includes('/')) req.url = '*'
    const res = new ServerResponse(req)
    // Answered with `Connection: close`.
    res.shouldKeepAlive = false
    res.assignSocket(socket)
    res.once('finish', () => {
      socket.end(() => socket.destroy())
    })
    server.emit('request', req, res)
  }
  answer()
}
