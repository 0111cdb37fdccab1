/**
 * `serve` checks what can make it fail before it creates anything: a port in use is reported before the data
 * directory, the operator token, the keys or the database exist; a PostgreSQL database that does not exist is
 * reported with the command that creates it. Bound before the node has opened, it holds the requests that arrive
 * meanwhile and answers them once it is ready.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { type Server, connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI_ENTRY, namedFreePort, runCli } from '../helpers/cli.js'
import { PG_URL, pgSuiteName } from '../pg/support.js'

const TOKEN = 'serve-startup-token-0123456789'
const root = mkdtempSync(join(tmpdir(), 'bernstein-a2a-serve-startup-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** A loopback port held by another listener for the duration of `work`. */
async function withPortTaken<T>(work: (port: number) => Promise<T>): Promise<T> {
  const holder: Server = createServer()
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
  try {
    return await work((holder.address() as { port: number }).port)
  } finally {
    await new Promise<void>((resolve) => holder.close(() => resolve()))
  }
}

describe('serve on a port in use', { timeout: 120_000 }, () => {
  it('says so and which variable to change, exit 1, and has created nothing: no data directory, token, keys or database', async () => {
    await withPortTaken(async (port) => {
      const dataDir = join(root, 'never-created')
      const auditKey = join(root, 'elsewhere', 'audit.key')
      // No BERNSTEIN_AUTH_TOKEN: a start that got further would generate the operator token in the data directory.
      const env = {
        BERNSTEIN_DATA_DIR: dataDir,
        BERNSTEIN_AUDIT_KEY_PATH: auditKey,
        BERNSTEIN_PORT: String(port),
        BERNSTEIN_HOST: '127.0.0.1',
        BERNSTEIN_AUTH_TOKEN: '',
      }
      const text = await runCli(['serve'], env)
      expect(text).toEqual({
        code: 1,
        stdout: '',
        stderr: `bernstein-a2a: 127.0.0.1:${port} is already in use: stop the process listening there, or choose another BERNSTEIN_PORT\n`,
      })
      const json = await runCli(['--json', 'serve'], env)
      expect(json.code).toBe(1)
      expect(JSON.parse(json.stdout)).toEqual({
        ok: false,
        error: `127.0.0.1:${port} is already in use: stop the process listening there, or choose another BERNSTEIN_PORT`,
      })
      expect(existsSync(dataDir)).toBe(false)
      expect(existsSync(join(root, 'elsewhere'))).toBe(false)
    })
  })

  it('a start that fails after binding (pending migrations) frees the port and exits', async () => {
    const dataDir = mkdtempSync(join(root, 'pending-'))
    const port = await namedFreePort()
    const run = await runCli(['serve'], {
      BERNSTEIN_DATA_DIR: dataDir,
      BERNSTEIN_PORT: String(port),
      BERNSTEIN_MIGRATE_ON_START: '0',
      BERNSTEIN_AUTH_TOKEN: TOKEN,
    })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^bernstein-a2a: \d+ database migration\(s\) pending/)
    const free = createServer()
    await new Promise<void>((resolve, reject) => free.once('error', reject).listen(port, '127.0.0.1', resolve))
    await new Promise<void>((resolve) => free.close(() => resolve()))
  })
})

/** Resolves once something accepts TCP connections on the loopback `port`. */
async function accepting(port: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('serve while the node opens', { timeout: 120_000 }, () => {
  it('holds a request that arrives between binding and ready, and answers it once the node is open', async () => {
    const dataDir = mkdtempSync(join(root, 'held-'))
    // Another writer holds the (empty) database: the migrations of `serve`, which run after it bound its port, wait
    // (SQLite busy timeout, 5 s) until the test lets go.
    const holder = new SQLite(join(dataDir, 'bernstein-a2a.sqlite'))
    holder.pragma('journal_mode = WAL')
    holder.exec('BEGIN EXCLUSIVE')
    const port = await namedFreePort()
    const child = spawn(process.execPath, [...CLI_ENTRY, 'serve'], {
      env: {
        ...process.env,
        BERNSTEIN_DATA_DIR: dataDir,
        BERNSTEIN_AUTH_TOKEN: TOKEN,
        BERNSTEIN_PORT: String(port),
        BERNSTEIN_FEDERATION_POLL_MS: '0',
        BERNSTEIN_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    try {
      await accepting(port)
      let answered = false
      const answer = fetch(`http://127.0.0.1:${port}/health/live`).then((response) => {
        answered = true
        return response
      })
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect({ answered, output }).toEqual({ answered: false, output: '' })
      holder.exec('COMMIT')
      const response = await answer
      expect(response.status).toBe(200)
      expect(output).toContain(`bernstein-a2a listening on http://127.0.0.1:${port}`)
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK')
      holder.close()
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    }
  })
})

describe.skipIf(!PG_URL)(pgSuiteName('serve and db commands on a PostgreSQL database that does not exist'), () => {
  it('name the database and the createdb command that makes it (exit 1 / 2 / 2), and create nothing', async () => {
    const missing = `missing_db_${Date.now().toString(36)}`
    const url = new URL(PG_URL ?? '')
    url.pathname = `/${missing}`
    const dataDir = join(root, 'pg-missing')
    const env = { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: url.toString(), BERNSTEIN_AUTH_TOKEN: TOKEN, BERNSTEIN_PORT: '0' }
    const flags = [url.hostname && `-h ${url.hostname}`, url.port && `-p ${url.port}`, url.username && `-U ${decodeURIComponent(url.username)}`]
      .filter(Boolean)
      .join(' ')
    const hint = `database "${missing}" does not exist — create it with: createdb ${flags} ${missing}`
    const [serve, status, migrate] = await Promise.all([runCli(['serve'], env), runCli(['db', 'status'], env), runCli(['--json', 'db', 'migrate'], env)])
    expect(serve).toEqual({ code: 1, stdout: '', stderr: `bernstein-a2a: ${hint}\n` })
    expect(status).toEqual({ code: 2, stdout: '', stderr: `✗ ${hint}\n` })
    expect(migrate.code).toBe(2)
    expect(JSON.parse(migrate.stdout)).toEqual({ ok: false, error: hint })
    expect(existsSync(dataDir)).toBe(false)
    const admin = new pg.Client({ connectionString: PG_URL ?? '' })
    await admin.connect()
    try {
      expect((await admin.query('select 1 from pg_database where datname = $1', [missing])).rows).toEqual([])
    } finally {
      await admin.end()
    }
  }, 120_000)
})
