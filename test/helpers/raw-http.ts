/**
 * HTTP for what the typed client cannot express, at three depths: `httpRequest` (fetch: any method, path, body
 * and headers, the answer as text and JSON), `wireRequest` (node:http: a GET with a body, a chunked body, the
 * header lines as received) and `RawConnection` (a socket written byte for byte, for requests no HTTP client
 * sends).
 *
 * Every request here goes on a connection of its own, closed after the answer. The tests run their server in
 * their own process (test-app.ts), so both ends of a kept-alive connection share one event loop: when a test holds
 * the loop longer than the server's keep-alive timeout (5 s; a synchronous check of a 16 MiB response does), the
 * server's idle timer and the client's both expire during the stall, and once it ends the client may send on the
 * pooled connection before its own timer has run, while the server's timer, run next, destroys the socket with
 * that request unread: ECONNRESET. Without a connection kept between requests there is nothing to reuse.
 */
import http, { type IncomingHttpHeaders } from 'node:http'
import { type Socket, connect } from 'node:net'

/** fetch on a connection of its own (`Connection: close`), for clients of a server in this process; see above. */
export function fetchOnce(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init)
  request.headers.set('connection', 'close')
  return fetch(request)
}

export interface HttpResult {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The body parsed as JSON; undefined when it is not JSON. */
  readonly json: unknown
}

/**
 * One request through fetch. `token` is sent as a bearer token unless `headers` carry an Authorization of their
 * own; a body is labelled JSON unless `headers` say otherwise; `timeoutMs` bounds the whole exchange.
 */
export async function httpRequest(
  baseUrl: string,
  init: { method: string; path: string; body?: string | Buffer; headers?: Record<string, string>; token?: string | null; timeoutMs?: number },
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...init.headers }
  if (init.token !== undefined && init.token !== null) headers['authorization'] ??= `Bearer ${init.token}`
  if (init.body !== undefined) headers['content-type'] ??= 'application/json'
  const res = await fetchOnce(baseUrl + init.path, {
    method: init.method,
    headers,
    ...(init.body !== undefined && { body: init.body }),
    ...(init.timeoutMs !== undefined && { signal: AbortSignal.timeout(init.timeoutMs) }),
  })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

export interface WireResponse {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  /** Header names and values as received, in order: name, value, name, value… */
  readonly rawHeaders: readonly string[]
  readonly text: string
}

/**
 * One request through node:http, for what fetch does not send: `body` is framed by an explicit Content-Length
 * (a GET's included), `chunks` are written one by one without one (Transfer-Encoding: chunked), the headers and
 * the path go out as given. The server may answer (401, 413) and close before it has read a large body: once it
 * has answered, the answer is what counts.
 */
export function wireRequest(
  baseUrl: string,
  init: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; chunks?: readonly Buffer[] },
): Promise<WireResponse> {
  const { hostname, port } = new URL(baseUrl)
  const headers = init.body === undefined ? { ...init.headers } : { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) }
  return new Promise((resolve, reject) => {
    let answered = false
    const req = http.request({ host: hostname, port, method: init.method ?? 'GET', path: init.path, headers, agent: false }, (res) => {
      answered = true
      const parts: Buffer[] = []
      res.on('data', (chunk: Buffer) => parts.push(chunk))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text: Buffer.concat(parts).toString('utf8') }),
      )
      res.on('error', reject)
    })
    req.on('error', (error) => {
      if (!answered) reject(error)
    })
    if (init.chunks === undefined) {
      req.end(init.body)
      return
    }
    const chunks = init.chunks
    void (async () => {
      for (const chunk of chunks) {
        if (req.destroyed) return
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r))
      }
      req.end()
    })().catch(reject)
  })
}

export interface RawResponse {
  readonly statusLine: string
  /** Lower-cased names. */
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
  readonly json: unknown
}

/** One connection, written byte for byte; responses are read in order as they arrive. */
export class RawConnection {
  private buffer = Buffer.alloc(0)
  private waiting: (() => void) | null = null
  /** Resolves when the server has ended the connection. */
  readonly closed: Promise<void>
  private ended = false
  private readonly socket: Socket

  private constructor(socket: Socket) {
    this.socket = socket
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      this.wake()
    })
    this.closed = new Promise((resolve) => {
      socket.on('close', () => {
        this.ended = true
        this.wake()
        resolve()
      })
    })
    socket.on('error', () => {})
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url)
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawConnection(socket)))
      socket.once('error', reject)
    })
  }

  write(bytes: string): void {
    this.socket.write(bytes)
  }

  /** The next complete response (an interim 1xx included); fails if the connection closes first. */
  async response(): Promise<RawResponse> {
    for (;;) {
      const parsed = this.take()
      if (parsed !== null) return parsed
      if (this.ended) throw new Error(`connection closed without a (complete) response; received: ${JSON.stringify(this.buffer.toString('latin1'))}`)
      await new Promise<void>((resolve) => (this.waiting = resolve))
    }
  }

  /** True when the server left the connection open for this long. */
  async stillOpenAfter(ms: number): Promise<boolean> {
    return Promise.race([this.closed.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), ms))])
  }

  destroy(): void {
    this.socket.destroy()
  }

  /** Stops reading: what the server sends (its FIN included) stays unread, and this side never closes by itself. */
  pause(): void {
    this.socket.pause()
  }

  private wake(): void {
    const waiting = this.waiting
    this.waiting = null
    waiting?.()
  }

  private take(): RawResponse | null {
    const end = this.buffer.indexOf('\r\n\r\n')
    if (end < 0) return null
    const [statusLine = '', ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n')
    const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
    let rest = this.buffer.subarray(end + 4)
    let body: Buffer
    if (/^HTTP\/1\.1 1\d\d /.test(statusLine)) {
      body = Buffer.alloc(0)
    } else if (headers.has('content-length')) {
      const length = Number(headers.get('content-length'))
      if (rest.length < length) return null
      body = rest.subarray(0, length)
      rest = rest.subarray(length)
    } else if (headers.get('transfer-encoding') === 'chunked') {
      // Only to show what Node itself sends (an empty chunked body); this server's answers carry a Content-Length.
      const last = rest.indexOf('0\r\n\r\n')
      if (last < 0) return null
      body = Buffer.alloc(0)
      rest = rest.subarray(last + 5)
    } else {
      if (!this.ended) return null
      body = rest
      rest = Buffer.alloc(0)
    }
    this.buffer = rest
    const text = body.toString('utf8')
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { statusLine, headers, body: text, json }
  }
}

/** Sends `bytes` on a fresh connection and reads one response. */
export async function exchange(url: string, bytes: string): Promise<{ connection: RawConnection; res: RawResponse }> {
  const connection = await RawConnection.open(url)
  connection.write(bytes)
  return { connection, res: await connection.response() }
}
