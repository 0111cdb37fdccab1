/**
 * What every fault scenario shares (scripts/faults.ts runs them from the command line, test/faults/ in the suite):
 * the report a scenario returns, where a `serve` process keeps its state (a data directory, and a private PostgreSQL
 * schema for that engine) with a way to read it behind the server's back, timed HTTP calls that never wait forever,
 * a seeded random source, and readings of a process's memory and descriptors from /proc.
 *
 * @module
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { type ServerProcess, spawnServer } from '../../test/helpers/cli.js'
import { migratedSchema } from '../../test/helpers/pg-schema.js'

export type FaultEngine = 'sqlite' | 'postgres'

/** The operator token of every server a scenario starts. */
export const OPERATOR = 'faults-operator-token-0123456789'

/** What a scenario held and measured, and the invariants it found broken (empty: it passed). */
export interface ScenarioReport {
  readonly scenario: string
  readonly engine: FaultEngine
  /** Figures in the order they are printed: a label and its value. */
  readonly figures: [string, string | number][]
  readonly failures: string[]
}

export function newReport(scenario: string, engine: FaultEngine): ScenarioReport {
  return { scenario, engine, figures: [], failures: [] }
}

/** Adds `message` to the failures unless `condition` holds; returns `condition`. */
export function check(report: ScenarioReport, condition: boolean, message: string): boolean {
  if (!condition) report.failures.push(message)
  return condition
}

/** The report as printed: a title line, one line per figure, one per failure. */
export function formatReport(report: ScenarioReport): string {
  const lines = [`${report.failures.length === 0 ? 'PASS' : 'FAIL'}  ${report.scenario} (${report.engine})`]
  for (const [label, value] of report.figures) lines.push(`      ${label}: ${value}`)
  for (const failure of report.failures) lines.push(`   ✗  ${failure}`)
  return lines.join('\n')
}

/** mulberry32: a small seeded generator, so that a run can be repeated from its printed seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Polls `probe` until it holds; false (never a throw) when `timeoutMs` passes first. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const until = performance.now() + timeoutMs
  for (;;) {
    if (await probe().catch(() => false)) return true
    if (performance.now() > until) return false
    await sleep(everyMs)
  }
}

/** One answer, timed. `status` 0: no HTTP answer at all (refused, reset, the client's own deadline). */
export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly json: unknown
  readonly ms: number
  /** When the request was sent and answered (performance.now()). */
  readonly sentAt: number
  readonly at: number
  readonly error?: string
}

/**
 * One request with the operator token on a connection of its own. Never throws: a request without an answer within
 * `timeoutMs` (default 60 s: far beyond every bound the server sets itself) is status 0 with the error.
 */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  options: { timeoutMs?: number; token?: string | null; headers?: Record<string, string>; raw?: string } = {},
): Promise<Answer> {
  const sentAt = performance.now()
  const headers: Record<string, string> = { connection: 'close', ...options.headers }
  const token = options.token === undefined ? OPERATOR : options.token
  if (token !== null) headers['authorization'] = `Bearer ${token}`
  const payload = options.raw ?? (body === undefined ? undefined : JSON.stringify(body))
  if (payload !== undefined) headers['content-type'] = 'application/json'
  try {
    const res = await fetch(base + path, {
      method,
      headers,
      ...(payload !== undefined && { body: payload }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    })
    const text = await res.text()
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = text
    }
    const at = performance.now()
    return { status: res.status, headers: res.headers, json, ms: at - sentAt, sentAt, at }
  } catch (error) {
    const at = performance.now()
    const cause = (error as { cause?: { code?: string } }).cause?.code
    return { status: 0, headers: new Headers(), json: undefined, ms: at - sentAt, sentAt, at, error: cause ?? (error as Error).name }
  }
}

/** Sends requests over a fixed set of kept-alive connections ({@link connectionPool}). */
export interface ConnectionPool {
  /** As {@link call} (the operator token, JSON), on one of the pool's connections, waiting for a free one if need be. */
  call(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<Answer>
  /** Requests sent and not answered yet, those waiting for a free connection included. */
  readonly pending: number
  close(): void
}

/**
 * At most `connections` kept-alive connections to `base` (node:http, far cheaper per request than `fetch` on a
 * connection of its own: a load generator on the same cores as the node must not be what is measured). A request
 * that finds every connection busy waits in the pool; its time counts from the call, so a node that answers slowly
 * shows in the latencies even when the pool is what it waited for. A connection the node closes (an answer with
 * `Connection: close`) is replaced for the next request.
 */
export function connectionPool(base: string, connections: number): ConnectionPool {
  const agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections })
  const { hostname, port } = new URL(base)
  let pending = 0
  return {
    get pending() {
      return pending
    },
    close: () => agent.destroy(),
    call(method, path, body, timeoutMs = 60_000) {
      const sentAt = performance.now()
      const payload = body === undefined ? undefined : JSON.stringify(body)
      const headers: Record<string, string> = { authorization: `Bearer ${OPERATOR}` }
      if (payload !== undefined) {
        headers['content-type'] = 'application/json'
        headers['content-length'] = String(Buffer.byteLength(payload))
      }
      pending++
      return new Promise<Answer>((resolve) => {
        let settled = false
        let current: ReturnType<typeof request> | undefined
        const settle = (answer: Omit<Answer, 'ms' | 'sentAt' | 'at'>): void => {
          if (settled) return
          settled = true
          pending--
          clearTimeout(timer)
          const at = performance.now()
          resolve({ ...answer, ms: at - sentAt, sentAt, at })
        }
        const attempt = (): void => {
          const req = request({ agent, hostname, port, method, path, headers }, (res) => {
            const chunks: Buffer[] = []
            res.on('data', (chunk: Buffer) => chunks.push(chunk))
            res.on('error', (error: NodeJS.ErrnoException) => settle({ status: 0, headers: new Headers(), json: undefined, error: error.code ?? error.name }))
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8')
              let json: unknown
              try {
                json = JSON.parse(text)
              } catch {
                json = text
              }
              const answerHeaders = new Headers()
              for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') answerHeaders.set(name, value)
              settle({ status: res.statusCode ?? 0, headers: answerHeaders, json })
            })
          })
          req.on('error', (error: NodeJS.ErrnoException) => {
            // The node closed an idle kept-alive connection as this request was written on it: it never read the
            // request (Node's documented race), so sending it again on another connection is safe.
            if (req.reusedSocket && error.code === 'ECONNRESET' && !settled) attempt()
            else settle({ status: 0, headers: new Headers(), json: undefined, error: error.code ?? error.name })
          })
          current = req
          req.end(payload)
        }
        const timer = setTimeout(() => {
          settle({ status: 0, headers: new Headers(), json: undefined, error: 'TimeoutError' })
          current?.destroy()
        }, timeoutMs)
        attempt()
      })
    },
  }
}

/** The value at quantile `q` (0..1) of `values`, NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
}

export const ms = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)} ms` : 'n/a')

/** Resident memory (kB) and open descriptors of a process, read from /proc. */
export function processUsage(pid: number): { rssKb: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
  return { rssKb: Number(rss?.[1] ?? 0), fds: readdirSync(`/proc/${pid}/fd`).length }
}

/**
 * Where one scenario's server keeps its state, and a way to read it behind the server's back. PostgreSQL gets a
 * private schema, migrated here with its name given (the server's migrator, selecting the schema only through the
 * URL's search_path, would see other schemas' bookkeeping); SQLite is the file in the data directory.
 */
export interface Storage {
  readonly engine: FaultEngine
  readonly dataDir: string
  /** DATABASE_URL (PostgreSQL) and BERNSTEIN_DATA_DIR. */
  readonly env: Record<string, string>
  /** The schema (PostgreSQL), for a URL through a proxy. */
  readonly schema: string | null
  /** Rows of a read-only query (no parameters: literals only). */
  query<R>(sql: string): Promise<R[]>
  cleanup(): Promise<void>
}

/** PostgreSQL URL of the faults: TEST_DATABASE_URL. */
export const PG_URL = process.env['TEST_DATABASE_URL'] ?? null

/** `url` with its search_path set to `schema`, and host and port replaced when given (a proxy). */
export function schemaUrl(url: string, schema: string, via?: { host: string; port: number }): string {
  const u = new URL(url)
  u.searchParams.set('options', `-c search_path=${schema}`)
  if (via) {
    u.hostname = via.host
    u.port = String(via.port)
  }
  return u.toString()
}

/** A fresh data directory (in `parent` when given, e.g. a small tmpfs), plus a migrated schema for PostgreSQL. */
export async function createStorage(engine: FaultEngine, parent?: string): Promise<Storage> {
  const dataDir = mkdtempSync(join(parent ?? tmpdir(), 'bernstein-faults-'))
  if (engine === 'sqlite') {
    const file = join(dataDir, 'bernstein-a2a.sqlite')
    return {
      engine,
      dataDir,
      env: { BERNSTEIN_DATA_DIR: dataDir },
      schema: null,
      async query<R>(sql: string): Promise<R[]> {
        const db = new Database(file, { readonly: true, fileMustExist: true })
        try {
          return db.prepare(sql).all() as R[]
        } finally {
          db.close()
        }
      },
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    }
  }
  if (!PG_URL) throw new Error('the postgres engine needs TEST_DATABASE_URL')
  const url = PG_URL
  const schema = await migratedSchema(url, dataDir, 'faults')
  return {
    engine,
    dataDir,
    env: { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: schemaUrl(url, schema) },
    schema,
    async query<R>(sql: string): Promise<R[]> {
      const c = new pg.Client({ connectionString: schemaUrl(url, schema) })
      c.on('error', () => {})
      await c.connect()
      try {
        return (await c.query(sql)).rows as R[]
      } finally {
        await c.end()
      }
    },
    async cleanup() {
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      await c.query(`drop schema if exists ${schema} cascade`)
      await c.end()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * `serve` with the operator token, rate limits off (the scenarios push on purpose; the limiter is not what is
 * tested), the federation follower off, and `env` on top.
 */
export function serve(storage: Storage, env: Record<string, string> = {}): Promise<ServerProcess> {
  return spawnServer({
    ...storage.env,
    BERNSTEIN_AUTH_TOKEN: OPERATOR,
    BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN: '0',
    BERNSTEIN_RATE_LIMIT_READ_PER_MIN: '0',
    ...env,
  })
}

/** Options every scenario takes: the quick mode (CI) or the full one. */
export interface ScenarioOptions {
  readonly quick: boolean
  /** Progress lines while a scenario runs (the script prints them; tests leave them out). */
  readonly log?: (line: string) => void
}
