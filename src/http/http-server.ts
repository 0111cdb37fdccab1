import { type IncomingMessage, type Server, ServerResponse, createServer } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { parse as parseLegacyUrl } from 'node:url'
import { answerClientErrors } from './client-errors.js'
import { isLoopback } from './client-ip.js'

/** Connection discipline (docs/reliability.md); each field absent keeps Node's default. */
export interface ConnectionOptions {
  readonly headersTimeoutMs?: number
  readonly requestTimeoutMs?: number
  readonly keepAliveTimeoutMs?: number
  /** 0 or absent: no limit. */
  readonly maxConnections?: number
  /** 0 or absent: no limit. */
  readonly maxConnectionsPerIp?: number
  /** The per-address limit applies to loopback clients too. */
  readonly limitLoopback?: boolean
  /** True once the node drains (SIGTERM): every answer from then on closes its connection. */
  readonly closing?: () => boolean
}

/**
 * How long a connection answered early (a 401 or 413 while its body was still arriving) is still read, and what is
 * read discarded, after the answer and our FIN, before it is destroyed: closing a socket with unread input makes the
 * kernel send a reset, which can make the client lose the answer it was sent. Bounded, so that a client trickling
 * its body holds the connection this long and no longer.
 */
export const LINGER_MS = 2_000

/** How often Node checks the header and request timeouts (its default, 30 s, would let them overrun by as much). */
const TIMEOUT_CHECK_MS = 1_000

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
 * - CONNECT: without a 'connect' listener Node destroys the socket unanswered (see `answerConnect`);
 * - a target Express cannot parse (`GET http://[::1/tasks`): Express answers an HTML page (see
 *   `routeUnparsableTargets`).
 *
 * Requests Node cannot parse at all never become requests: `answerClientErrors` answers them.
 */
export function createHttpServer(options: ConnectionOptions = {}): Server {
  const server = createServer({ requireHostHeader: false, connectionsCheckingInterval: TIMEOUT_CHECK_MS })
  if (options.headersTimeoutMs !== undefined) server.headersTimeout = options.headersTimeoutMs
  if (options.requestTimeoutMs !== undefined) server.requestTimeout = options.requestTimeoutMs
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs
  // Node refuses a connection past this itself, before any JavaScript object is made for it: closed unanswered.
  if (options.maxConnections) server.maxConnections = options.maxConnections
  if (options.maxConnectionsPerIp) limitPerAddress(server, options.maxConnectionsPerIp, options.limitLoopback ?? false)
  closeAfterEarlyAnswers(server, options.closing ?? (() => false))
  routeUnparsableTargets(server)
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

/**
 * An absolute-form target that Express cannot parse (a malformed authority, `http://[::1/tasks`) never reaches a
 * middleware: Express's router hands such a request straight to its final handler, which answers an HTML page with
 * none of the app's headers, unlogged. It names no resource of this server, so it is answered as the asterisk-form
 * target `*`, like an authority-form CONNECT: the app's 404 in the contract's error shape. The test is Express's own
 * (`parseurl` parses a target that does not start with `/` with Node's legacy `url.parse`); origin-form targets, all
 * but a few crafted requests, are not parsed here.
 */
function routeUnparsableTargets(server: Server): void {
  server.prependListener('request', (req: IncomingMessage) => {
    const target = req.url
    if (target === undefined || target.startsWith('/') || target === '*') return
    try {
      parseLegacyUrl(target)
    } catch {
      req.url = '*'
    }
  })
}

/**
 * At most `max` open connections per client address: one more is destroyed at once, unanswered (the cheapest
 * refusal, and the one Node makes past `maxConnections`). Loopback is exempt unless `limitLoopback`, as with the rate
 * limits: a reverse proxy on the same host is one address for every client.
 */
function limitPerAddress(server: Server, max: number, limitLoopback: boolean): void {
  const open = new Map<string, number>()
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    if (address === undefined || (!limitLoopback && isLoopback(address))) return
    const count = open.get(address) ?? 0
    if (count >= max) {
      socket.destroy()
      return
    }
    open.set(address, count + 1)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
  })
}

/**
 * Whether a request still has body bytes to come. A request with an `Expect` header is not counted: its client waits
 * for the answer before it sends (or skips) the body, and the connection stays usable after it, as Node keeps it.
 */
function bodyStillArriving(req: IncomingMessage): boolean {
  if (req.complete || req.headers.expect !== undefined) return false
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0'
}

/**
 * An answer sent while the request's body is still arriving (a 401, 403, 413, 415 or 429 made before or while
 * reading it) closes the connection: Node would otherwise read and discard the rest of the body to keep the
 * connection, for as long as the client takes to send it (a POST declaring 100 000 bytes and sending one every 5 s
 * held its connection for the whole request timeout). So does every answer once the node drains (`closing`). Both
 * answer `Connection: close`; the early ones then linger ({@link LINGER_MS}) rather than reset the client.
 */
function closeAfterEarlyAnswers(server: Server, closing: () => boolean): void {
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const writeHead = res.writeHead
    res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      const early = bodyStillArriving(req)
      if (early || closing()) res.shouldKeepAlive = false
      if (early) lingerOnClose(req.socket)
      return writeHead.apply(this, args)
    } as ServerResponse['writeHead']
  })
}

/**
 * Node ends a connection whose answer said `Connection: close` with `destroySoon` (our FIN, then destroy as soon as
 * it is written); this one instead keeps reading and discarding until the client closes its side or {@link LINGER_MS}
 * pass, whichever comes first.
 */
function lingerOnClose(socket: Socket): void {
  const lingering = socket as Socket & { destroySoon?: () => void }
  lingering.destroySoon = () => endLingering(socket)
}

/**
 * Sends `last` (if any) and our FIN, then reads and discards until the client closes its side, destroying the socket
 * after {@link LINGER_MS} at the latest: a client that stops reading never closes, and a half-closed socket would keep
 * its descriptor and its place under the connection caps.
 */
export function endLingering(socket: Duplex, last?: string): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
  socket.once('end', () => socket.destroy())
  socket.on('error', () => socket.destroy())
  socket.resume()
  if (last === undefined) socket.end()
  else socket.end(last)
}
