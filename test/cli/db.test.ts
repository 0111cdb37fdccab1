/**
 * `bernstein-a2a db status | migrate` and `serve` with BERNSTEIN_MIGRATE_ON_START, as real processes, on SQLite
 * and (with TEST_DATABASE_URL) on PostgreSQL: exit codes, output, concurrency, and the pool/timeout settings.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { type Socket, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { migrationProvider } from '../../src/store/migrations/index.js'
import { spawnCli, spawnServer } from '../helpers/cli.js'
import { OPERATOR, PG_URL, type Schema, announceSkip, createSchema, http, pgSuiteName } from '../pg/support.js'

announceSkip('test/cli/db.test.ts (PostgreSQL leg)')

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

function run(args: readonly string[], env: Record<string, string>): Promise<Run> {
  const child = spawnCli(args, env)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

/** Tests that start several CLI processes (each a tsx start-up) get room on a busy machine. */
const SPAWNS_TIMEOUT_MS = 120_000

let MIGRATIONS: string[] = []
beforeAll(async () => {
  MIGRATIONS = Object.keys(await migrationProvider('sqlite').getMigrations()).sort()
  expect(MIGRATIONS.length).toBeGreaterThan(0)
})

interface EngineSetup {
  readonly env: Record<string, string>
  /** Names of the migrations recorded as applied, straight from the database. */
  applied(): Promise<string[]>
  dispose(): Promise<void>
}

const engines: { name: 'sqlite' | 'postgres'; enabled: boolean; setup: () => Promise<EngineSetup> }[] = [
  {
    name: 'sqlite',
    enabled: true,
    async setup() {
      const dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-db-cli-'))
      const { default: SQLite } = await import('better-sqlite3')
      return {
        env: { BERNSTEIN_DATA_DIR: dataDir },
        async applied() {
          const db = new SQLite(join(dataDir, 'bernstein-a2a.sqlite'), { readonly: true })
          try {
            const exists = db.prepare("select 1 from sqlite_master where name = 'kysely_migration'").get()
            return exists ? (db.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map((r) => r.name) : []
          } finally {
            db.close()
          }
        },
        dispose: async () => rmSync(dataDir, { recursive: true, force: true }),
      }
    },
  },
  {
    name: 'postgres',
    enabled: PG_URL !== null,
    async setup() {
      const dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-db-cli-'))
      const schema = await createSchema('cli')
      return {
        env: { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: schema.url() },
        async applied() {
          const exists = await schema.query("select 1 from information_schema.tables where table_schema = current_schema() and table_name = 'kysely_migration'")
          return exists.length ? (await schema.query<{ name: string }>('select name from kysely_migration order by name')).map((r) => r.name) : []
        },
        async dispose() {
          await schema.drop()
          rmSync(dataDir, { recursive: true, force: true })
        },
      }
    },
  },
]

for (const engine of engines) {
  const title = engine.name === 'postgres' ? pgSuiteName('db commands on postgres') : 'db commands on sqlite'
  describe.skipIf(!engine.enabled)(title, () => {
    let setup: EngineSetup | undefined
    afterEach(async () => {
      await setup?.dispose()
      setup = undefined
    })

    it(
      'db status on an empty database: every migration pending, exit 1, nothing created',
      async () => {
        setup = await engine.setup()
        const text = await run(['db', 'status'], setup.env)
        expect(text.code).toBe(1)
        expect(text.stdout).toBe([`engine: ${engine.name}`, ...MIGRATIONS.map((m) => `pending  ${m}`), `${MIGRATIONS.length} pending`, ''].join('\n'))
        const json = await run(['--json', 'db', 'status'], setup.env)
        expect(json.code).toBe(1)
        expect(JSON.parse(json.stdout)).toEqual({
          ok: false,
          error: `${MIGRATIONS.length} migration(s) pending`,
          engine: engine.name,
          pending: MIGRATIONS.length,
          migrations: MIGRATIONS.map((name) => ({ name, executed_at: null })),
        })
        expect(await setup.applied()).toEqual([])
      },
      SPAWNS_TIMEOUT_MS,
    )

    it(
      'serve with BERNSTEIN_MIGRATE_ON_START=0 refuses to start while migrations are pending, and says what to run',
      async () => {
        setup = await engine.setup()
        const refused = await run(['serve'], { ...setup.env, BERNSTEIN_MIGRATE_ON_START: '0', BERNSTEIN_PORT: '0', BERNSTEIN_AUTH_TOKEN: OPERATOR })
        expect(refused.code).toBe(1)
        expect(refused.stdout).not.toContain('listening')
        expect(refused.stderr).toBe(
          `bernstein-a2a: ${MIGRATIONS.length} database migration(s) pending (${MIGRATIONS.join(', ')}) and BERNSTEIN_MIGRATE_ON_START=0: ` +
            'run `bernstein-a2a db migrate` with the same DATABASE_URL first, then start the server\n',
        )
        expect(await setup.applied()).toEqual([])
      },
      SPAWNS_TIMEOUT_MS,
    )

    it(
      'db migrate applies every migration once (exit 0); then status is up to date and migrate is a no-op',
      async () => {
        setup = await engine.setup()
        const migrate = await run(['db', 'migrate'], setup.env)
        expect(migrate).toMatchObject({ code: 0, stdout: `✓ applied ${MIGRATIONS.join(', ')}\n` })
        expect(await setup.applied()).toEqual(MIGRATIONS)

        const status = await run(['db', 'status'], setup.env)
        expect(status).toMatchObject({ code: 0, stdout: [`engine: ${engine.name}`, ...MIGRATIONS.map((m) => `applied  ${m}`), '✓ up to date', ''].join('\n') })
        const json = JSON.parse((await run(['--json', 'db', 'status'], setup.env)).stdout) as {
          pending: number
          migrations: { name: string; executed_at: string }[]
        }
        expect(json.pending).toBe(0)
        for (const m of json.migrations) expect(Date.parse(m.executed_at), m.name).toBeGreaterThan(Date.now() - 10 * 60_000)

        const again = await run(['--json', 'db', 'migrate'], setup.env)
        expect(again.code).toBe(0)
        expect(JSON.parse(again.stdout)).toEqual({ ok: true, engine: engine.name, applied: [], error: null })
        expect(await setup.applied()).toEqual(MIGRATIONS)
      },
      SPAWNS_TIMEOUT_MS,
    )

    it(
      'after db migrate, serve with BERNSTEIN_MIGRATE_ON_START=0 starts, serves and stops cleanly',
      async () => {
        setup = await engine.setup()
        expect((await run(['db', 'migrate'], setup.env)).code).toBe(0)
        const server = await spawnServer({ ...setup.env, BERNSTEIN_MIGRATE_ON_START: '0', BERNSTEIN_AUTH_TOKEN: OPERATOR })
        try {
          expect((await http(server.url, 'GET', '/health/ready')).json).toEqual({ status: 'ready', reason: 'database reachable' })
          expect((await http(server.url, 'POST', '/tasks', { title: 'after an explicit migration' })).status).toBe(201)
        } finally {
          expect(await server.stop()).toEqual({ code: 0, signal: null })
        }
      },
      SPAWNS_TIMEOUT_MS,
    )
  })
}

describe('database settings fail fast', () => {
  it('loadConfig: defaults, accepted values and every rejected value name the variable', () => {
    const defaults = loadConfig({}, '/srv')
    expect([defaults.dbPoolSize, defaults.dbConnectTimeoutMs, defaults.dbStatementTimeoutMs, defaults.migrateOnStart, defaults.dbPreparedStatements]).toEqual([
      10,
      5_000,
      30_000,
      true,
      true,
    ])
    const set = loadConfig(
      {
        BERNSTEIN_DB_POOL_SIZE: '25',
        BERNSTEIN_DB_CONNECT_TIMEOUT_MS: '750',
        BERNSTEIN_DB_STATEMENT_TIMEOUT_MS: '0',
        BERNSTEIN_MIGRATE_ON_START: 'off',
        BERNSTEIN_DB_PREPARED_STATEMENTS: 'off',
      },
      '/srv',
    )
    expect([set.dbPoolSize, set.dbConnectTimeoutMs, set.dbStatementTimeoutMs, set.migrateOnStart, set.dbPreparedStatements]).toEqual([25, 750, 0, false, false])
    const rejected: [string, string, string][] = [
      ['BERNSTEIN_DB_POOL_SIZE', '0', "BERNSTEIN_DB_POOL_SIZE must be a whole number from 1 to 1000, got '0'"],
      ['BERNSTEIN_DB_POOL_SIZE', '1001', "BERNSTEIN_DB_POOL_SIZE must be a whole number from 1 to 1000, got '1001'"],
      ['BERNSTEIN_DB_POOL_SIZE', 'ten', "BERNSTEIN_DB_POOL_SIZE must be a whole number from 1 to 1000, got 'ten'"],
      ['BERNSTEIN_DB_CONNECT_TIMEOUT_MS', '0', "BERNSTEIN_DB_CONNECT_TIMEOUT_MS must be a whole number from 1 to 600000, got '0'"],
      ['BERNSTEIN_DB_CONNECT_TIMEOUT_MS', '1.5', "BERNSTEIN_DB_CONNECT_TIMEOUT_MS must be a whole number from 1 to 600000, got '1.5'"],
      ['BERNSTEIN_DB_STATEMENT_TIMEOUT_MS', '-1', "BERNSTEIN_DB_STATEMENT_TIMEOUT_MS must be a whole number from 0 to 86400000, got '-1'"],
      ['BERNSTEIN_MIGRATE_ON_START', 'later', "BERNSTEIN_MIGRATE_ON_START must be one of 1/true/yes/on or 0/false/no/off, got 'later'"],
      ['BERNSTEIN_DB_PREPARED_STATEMENTS', 'maybe', "BERNSTEIN_DB_PREPARED_STATEMENTS must be one of 1/true/yes/on or 0/false/no/off, got 'maybe'"],
    ]
    for (const [name, value, message] of rejected) {
      expect(() => loadConfig({ [name]: value }, '/srv'), `${name}=${value}`).toThrow(new ConfigError(message))
    }
  })

  it('chain shards: 1 on the embedded SQLite, 128 on PostgreSQL (the default partitioning, docs/scaling.md), either set explicitly', () => {
    const pg = 'postgres://postgres@127.0.0.1:5432/test'
    expect(loadConfig({}, '/srv').chains.shards).toBe(1)
    expect(loadConfig({ DATABASE_URL: pg }, '/srv').chains.shards).toBe(128)
    expect(loadConfig({ DATABASE_URL: pg, BERNSTEIN_CHAIN_SHARDS: '1' }, '/srv').chains.shards).toBe(1)
    expect(loadConfig({ BERNSTEIN_CHAIN_SHARDS: '16' }, '/srv').chains.shards).toBe(16)
    expect(() => loadConfig({ DATABASE_URL: pg, BERNSTEIN_CHAIN_SHARDS: '257' }, '/srv')).toThrow(
      new ConfigError("BERNSTEIN_CHAIN_SHARDS must be a whole number from 1 to 256, got '257'"),
    )
  })

  it(
    'db status and serve stop at once with the message and exit codes 2 and 1',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-db-cli-'))
      try {
        const env = { BERNSTEIN_DATA_DIR: dataDir, BERNSTEIN_DB_POOL_SIZE: '0' }
        const status = await run(['db', 'status'], env)
        expect(status).toMatchObject({ code: 2, stdout: '', stderr: "✗ BERNSTEIN_DB_POOL_SIZE must be a whole number from 1 to 1000, got '0'\n" })
        const json = await run(['--json', 'db', 'migrate'], env)
        expect(json.code).toBe(2)
        expect(JSON.parse(json.stdout)).toEqual({ ok: false, error: "BERNSTEIN_DB_POOL_SIZE must be a whole number from 1 to 1000, got '0'" })
        const serve = await run(['serve'], { ...env, BERNSTEIN_PORT: '0' })
        expect(serve).toMatchObject({ code: 1, stderr: "bernstein-a2a: BERNSTEIN_DB_POOL_SIZE must be a whole number from 1 to 1000, got '0'\n" })
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    },
    SPAWNS_TIMEOUT_MS,
  )
})

describe.skipIf(!PG_URL)(pgSuiteName('db commands on postgres: concurrency and timeouts'), () => {
  let schema: Schema | undefined
  let dataDir: string | undefined
  afterEach(async () => {
    await schema?.drop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    schema = dataDir = undefined
  })

  it(
    'three db migrate at once on an empty schema: all succeed and each migration is applied exactly once',
    async () => {
      schema = await createSchema('cli')
      dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-db-cli-'))
      const env = { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: schema.url() }
      const runs = await Promise.all([0, 1, 2].map(() => run(['--json', 'db', 'migrate'], env)))
      expect(runs.map((r) => r.code)).toEqual([0, 0, 0])
      const applied = runs.flatMap((r) => (JSON.parse(r.stdout) as { applied: { name: string; status: string }[] }).applied)
      expect(applied.every((a) => a.status === 'Success')).toBe(true)
      expect(applied.map((a) => a.name).sort()).toEqual(MIGRATIONS)
      const rows = await schema.query<{ name: string }>('select name from kysely_migration order by name')
      expect(rows.map((r) => r.name)).toEqual(MIGRATIONS)
    },
    SPAWNS_TIMEOUT_MS,
  )

  it(
    'BERNSTEIN_DB_CONNECT_TIMEOUT_MS: against a database that never answers, db status gives up after it (exit 2)',
    async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-db-cli-'))
      // A database that accepts connections and never answers; it tells the test when a client has connected.
      const held = new Set<Socket>()
      let connected = (): void => {}
      const firstConnection = new Promise<void>((resolve) => (connected = resolve))
      const blackhole = createServer((socket) => {
        held.add(socket)
        socket.on('error', () => socket.destroy())
        connected()
      })
      await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve))
      const url = new URL(PG_URL ?? '')
      url.hostname = '127.0.0.1'
      url.port = String((blackhole.address() as { port: number }).port)
      const env = { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: url.toString() }
      // No durations are compared: the setting is shown by which process gives up first. A patient one (the
      // 10-minute maximum) connects first, then a quick one (300 ms) runs to the end and reports the connect timeout
      // while the patient one is still waiting. Were the setting ignored, both would use the same default and the
      // patient one, having connected first, would have given up first.
      const patient = spawnCli(['db', 'status'], { ...env, BERNSTEIN_DB_CONNECT_TIMEOUT_MS: '600000' })
      const patientExit = new Promise<number | null>((resolve) => patient.once('exit', (code) => resolve(code)))
      try {
        await firstConnection
        const quick = await run(['db', 'status'], { ...env, BERNSTEIN_DB_CONNECT_TIMEOUT_MS: '300' })
        expect(quick).toMatchObject({ code: 2, stdout: '', stderr: '✗ database unavailable (connect timeout)\n' })
        expect({ exitCode: patient.exitCode, signalCode: patient.signalCode }).toEqual({ exitCode: null, signalCode: null })
      } finally {
        patient.kill('SIGKILL')
        await patientExit
        for (const socket of held) socket.destroy()
        await new Promise<void>((resolve) => blackhole.close(() => resolve()))
      }
    },
    SPAWNS_TIMEOUT_MS,
  )

  it(
    'serve, db status and db migrate against a port where no database listens: one line with the reason, exit 1 / 2 / 2',
    async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-db-cli-'))
      const closed = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const port = (probe.address() as { port: number }).port
          probe.close(() => resolve(port))
        })
      })
      const url = new URL(PG_URL ?? '')
      url.hostname = '127.0.0.1'
      url.port = String(closed)
      const env = { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: url.toString(), BERNSTEIN_AUTH_TOKEN: OPERATOR, BERNSTEIN_PORT: '0' }
      const [serve, status, migrate] = await Promise.all([run(['serve'], env), run(['db', 'status'], env), run(['db', 'migrate'], env)])
      expect(serve).toMatchObject({
        code: 1,
        stderr: 'bernstein-a2a: database unavailable (connection refused); check DATABASE_URL and that PostgreSQL is up\n',
      })
      expect(serve.stdout).not.toContain('listening')
      for (const r of [status, migrate]) expect(r).toMatchObject({ code: 2, stdout: '', stderr: '✗ database unavailable (connection refused)\n' })
    },
    SPAWNS_TIMEOUT_MS,
  )

  it(
    'a search_path naming no existing schema: serve, db status and db migrate say so (exit 1 / 2 / 2) and create nothing',
    async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-db-cli-'))
      const missing = `missing_${Date.now().toString(36)}`
      const url = new URL(PG_URL ?? '')
      url.searchParams.set('options', `-c search_path=${missing}`)
      const env = { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: url.toString(), BERNSTEIN_AUTH_TOKEN: OPERATOR, BERNSTEIN_PORT: '0' }
      const [serve, status, migrate] = await Promise.all([run(['serve'], env), run(['db', 'status'], env), run(['db', 'migrate'], env)])
      const reason = 'no schema of the search_path exists; create it first (CREATE SCHEMA)'
      expect(serve).toMatchObject({ code: 1, stderr: `bernstein-a2a: database unavailable (${reason}); check DATABASE_URL and that PostgreSQL is up\n` })
      for (const r of [status, migrate]) expect(r).toMatchObject({ code: 2, stdout: '', stderr: `✗ database unavailable (${reason})\n` })
      const admin = new pg.Client({ connectionString: PG_URL ?? '' })
      await admin.connect()
      try {
        const { rows } = await admin.query('select 1 from information_schema.schemata where schema_name = $1', [missing])
        expect(rows).toEqual([])
      } finally {
        await admin.end()
      }
    },
    SPAWNS_TIMEOUT_MS,
  )

  it(
    'BERNSTEIN_DB_STATEMENT_TIMEOUT_MS: a status or migrate stuck behind a lock is cancelled after it (exit 2)',
    async () => {
      schema = await createSchema('cli')
      dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-db-cli-'))
      const env = { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: schema.url() }
      const prepared = await run(['db', 'migrate'], env)
      expect(prepared.code, prepared.stdout + prepared.stderr).toBe(0)
      // Another session holds the migration tables (as a long migration elsewhere would).
      const holder = new pg.Client({ connectionString: schema.url() })
      await holder.connect()
      try {
        await holder.query('begin')
        await holder.query('lock table kysely_migration, kysely_migration_lock in access exclusive mode')
        const [status, migrate] = await Promise.all([
          run(['db', 'status'], { ...env, BERNSTEIN_DB_STATEMENT_TIMEOUT_MS: '800' }),
          run(['db', 'migrate'], { ...env, BERNSTEIN_DB_STATEMENT_TIMEOUT_MS: '800' }),
        ])
        for (const r of [status, migrate]) expect(r).toMatchObject({ code: 2, stdout: '', stderr: '✗ database unavailable (statement timeout)\n' })
      } finally {
        await holder.query('rollback')
        await holder.end()
      }
      expect((await run(['db', 'status'], env)).code).toBe(0)
    },
    SPAWNS_TIMEOUT_MS,
  )
})
