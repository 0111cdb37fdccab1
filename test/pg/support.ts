/**
 * Shared pieces of the PostgreSQL-only suites: private schemas, an HTTP helper that times every call and never
 * waits forever, and a loopback TCP proxy that can cut the database off. Real `serve` processes: test/helpers/cli.ts.
 */
import { randomBytes } from 'node:crypto'
import { type Server, type Socket, createServer, connect as tcpConnect } from 'node:net'
import pg from 'pg'
import { type HttpResult, httpRequest } from '../helpers/raw-http.js'

/** The database the PostgreSQL legs run against; unset means they are skipped (and say so). */
export const PG_URL = process.env['TEST_DATABASE_URL'] ?? null

/** The name a PostgreSQL-only `describe` gets: its title, or the reason it was skipped. */
export function pgSuiteName(title: string): string {
  return PG_URL ? title : `PostgreSQL leg (skipped: set TEST_DATABASE_URL): ${title}`
}

/** One line on the console when a PostgreSQL-only file has nothing to run. */
export function announceSkip(file: string): void {
  if (!PG_URL) console.log(`[${file}] PostgreSQL leg skipped: set TEST_DATABASE_URL=postgres://user@host:port/db to run it`)
}

export const OPERATOR = 'replica-operator-token-0123456789'

export interface Schema {
  readonly name: string
  /** `DATABASE_URL` pinned to this schema (search_path in `options`), tagged with `application_name`. */
  url(options?: { applicationName?: string; host?: string; port?: number }): string
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>
  drop(): Promise<void>
}

/** A fresh schema in the test database, dropped (with everything in it) by `drop()`. */
export async function createSchema(prefix: string): Promise<Schema> {
  if (!PG_URL) throw new Error('TEST_DATABASE_URL is not set')
  const base = PG_URL
  const name = `${prefix}_${randomBytes(5).toString('hex')}`
  const admin = new pg.Pool({ connectionString: base, max: 2 })
  admin.on('error', () => {})
  await admin.query(`create schema ${name}`)
  return {
    name,
    url(options = {}) {
      const url = new URL(base)
      url.searchParams.set('options', `-c search_path=${name}`)
      if (options.applicationName) url.searchParams.set('application_name', options.applicationName)
      if (options.host) url.hostname = options.host
      if (options.port) url.port = String(options.port)
      return url.toString()
    },
    async query(text, values) {
      const client = await admin.connect()
      try {
        await client.query(`set search_path to ${name}`)
        return (await client.query(text, values)).rows
      } finally {
        client.release()
      }
    },
    async drop() {
      await admin.query(`drop schema if exists ${name} cascade`)
      await admin.end()
    },
  }
}

/** The host and port of TEST_DATABASE_URL (for the proxy to forward to). */
export function pgAddress(): { host: string; port: number } {
  const url = new URL(PG_URL ?? 'postgres://127.0.0.1:5432/')
  return { host: url.hostname || '127.0.0.1', port: Number(url.port || 5432) }
}

export interface TimedResult extends HttpResult {
  readonly ms: number
}

/** One request with the operator token, timed; a request that takes longer than `timeoutMs` fails the test. */
export async function http(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  options: { headers?: Record<string, string>; timeoutMs?: number; raw?: string } = {},
): Promise<TimedResult> {
  const started = performance.now()
  const payload = options.raw ?? (body === undefined ? undefined : JSON.stringify(body))
  const res = await httpRequest(base, {
    method,
    path,
    ...(payload !== undefined && { body: payload }),
    ...(options.headers && { headers: options.headers }),
    token: OPERATOR,
    timeoutMs: options.timeoutMs ?? 30_000,
  })
  return { ...res, ms: performance.now() - started }
}

/** Polls `probe` until it returns true, or fails after `timeoutMs`. */
export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000, everyMs = 100): Promise<number> {
  const started = performance.now()
  for (;;) {
    if (await probe().catch(() => false)) return performance.now() - started
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

export type ProxyMode = 'forward' | 'refuse' | 'blackhole' | 'stall'

/**
 * A loopback TCP proxy in front of PostgreSQL that can simulate outages: `refuse` closes every connection and
 * the listening port (connects fail at once, open connections are reset), `blackhole` accepts connections but never
 * answers (connects and queries hang until the client's own timeouts), `stall` keeps every connection open and
 * accepts new ones but lets no byte through in either direction (a network path that stops: the database never sees
 * the query, so its statement timeout cannot fire), `forward` passes bytes through. From `stall`, `forward` delivers
 * what was held, in order, on the same connections (the path recovers); every other change starts afresh.
 */
export class TcpProxy {
  readonly #target: { host: string; port: number }
  #server: Server | null = null
  readonly #sockets = new Set<Socket>()
  #port = 0
  #mode: ProxyMode = 'refuse'
  /** Writes held back while stalled, in arrival order. */
  #held: (() => void)[] = []

  constructor(target: { host: string; port: number }) {
    this.#target = target
  }

  get port(): number {
    return this.#port
  }

  get mode(): ProxyMode {
    return this.#mode
  }

  async set(mode: ProxyMode): Promise<void> {
    const relaying = (m: ProxyMode): boolean => m === 'forward' || m === 'stall'
    if (this.#server && relaying(this.#mode) && relaying(mode)) {
      this.#mode = mode
      if (mode === 'forward') for (const write of this.#held.splice(0)) write()
      return
    }
    await this.#close()
    this.#mode = mode
    if (mode === 'refuse') return
    const server = createServer((client) => {
      this.#track(client)
      if (mode === 'blackhole') return
      const upstream = tcpConnect(this.#target.port, this.#target.host)
      this.#track(upstream)
      const relay = (from: Socket, to: Socket): void => {
        from.on('data', (chunk: Buffer) => {
          if (this.#mode === 'stall') this.#held.push(() => to.write(chunk))
          else to.write(chunk)
        })
      }
      relay(client, upstream)
      relay(upstream, client)
      // Either side closing closes the other, as a dead network path would.
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.#port, '127.0.0.1', () => resolve())
    })
    const address = server.address()
    if (typeof address === 'object' && address) this.#port = address.port
    this.#server = server
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket)
    socket.on('error', () => socket.destroy())
    socket.on('close', () => this.#sockets.delete(socket))
  }

  async #close(): Promise<void> {
    const server = this.#server
    this.#server = null
    this.#held = []
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  async close(): Promise<void> {
    await this.set('refuse')
  }
}
