import { closeSync, mkdirSync, openSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, type LogEvent, Migrator, PostgresDialect, SqliteDialect, sql, type MigrationResultSet } from 'kysely'
import type pg from 'pg'
import type { Database } from './database.js'
import type { Engine } from './engine.js'
import { migrationProvider } from './migrations/index.js'
import { withStatementCache } from './sqlite-statement-cache.js'
import { guardedPool } from './pg-pool.js'
import { DatabaseUnavailable, asUnavailable } from './unavailable.js'

/** PostgreSQL pool defaults (BERNSTEIN_DB_POOL_SIZE, BERNSTEIN_DB_CONNECT_TIMEOUT_MS, BERNSTEIN_DB_STATEMENT_TIMEOUT_MS). */
export const DEFAULT_POOL_SIZE = 10
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000

export interface DatabaseOptions {
  /** A `postgres://` URL, or null for the embedded SQLite file in `dataDir`. */
  readonly url: string | null
  readonly dataDir: string
  /** SQLite only: `full` fsyncs the WAL on every commit (durable across power loss), `normal` does not. */
  readonly sqliteSynchronous?: 'full' | 'normal'
  /** SQLite only: an explicit file (`:memory:` for throwaway stores). */
  readonly sqliteFile?: string
  /** PostgreSQL only: connections per process (each replica has its own pool). */
  readonly poolSize?: number
  /** PostgreSQL only: how long to wait for a new connection, or for a free one when the pool is busy. */
  readonly connectTimeoutMs?: number
  /** PostgreSQL only: server-side `statement_timeout` (0 disables); the client gives up this plus the connect timeout later. */
  readonly statementTimeoutMs?: number
  /** PostgreSQL only: prepare fixed-shape statements under a name once per connection (default true; see statement-shapes.ts). */
  readonly preparedStatements?: boolean
  /** PostgreSQL schema to use (tests isolate themselves in one). */
  readonly schema?: string
  /** Told the SQL text of every statement run (after it ran, failed ones too): for tests that count statements. */
  readonly onQuery?: (sql: string) => void
}

export interface Connection {
  readonly db: Kysely<Database>
  readonly engine: Engine
  /** The PostgreSQL schema in use, when not the default one. */
  readonly schema?: string
  /**
   * PostgreSQL only: the underlying `pg.Pool`, for libraries that keep shared state in the database (the rate
   * limiter). Opaque on purpose: nothing outside src/store may depend on the driver. Null on SQLite.
   */
  readonly sharedPool: object | null
  close(): Promise<void>
}

/** The configuration fields that choose and tune the database (a subset of `Config`). */
export interface DatabaseSettings {
  readonly databaseUrl: string | null
  readonly dataDir: string
  readonly sqliteSynchronous: 'full' | 'normal'
  readonly dbPoolSize: number
  readonly dbConnectTimeoutMs: number
  readonly dbStatementTimeoutMs: number
  readonly dbPreparedStatements: boolean
}

/** The connection options the server and the CLI derive from the configuration. */
export function databaseOptions(settings: DatabaseSettings): DatabaseOptions {
  return {
    url: settings.databaseUrl,
    dataDir: settings.dataDir,
    sqliteSynchronous: settings.sqliteSynchronous,
    poolSize: settings.dbPoolSize,
    connectTimeoutMs: settings.dbConnectTimeoutMs,
    statementTimeoutMs: settings.dbStatementTimeoutMs,
    preparedStatements: settings.dbPreparedStatements,
  }
}

/**
 * The `pg` driver, loaded on first use: a server on the embedded SQLite default never needs it, and loading it was
 * about 3 % of start-up. (Through `createRequire`, so the bundle loads it from node_modules too.)
 */
let pgDriver: typeof pg | undefined
export const loadPg = (): typeof pg => (pgDriver ??= createRequire(import.meta.url)('pg') as typeof pg)

/** Kysely's `log` option for {@link DatabaseOptions.onQuery}; nothing when unset (no cost on the hot path). */
function queryLog(options: DatabaseOptions): { log?: (event: LogEvent) => void } {
  const onQuery = options.onQuery
  return onQuery ? { log: (event) => onQuery(event.query.sql) } : {}
}

export function connect(options: DatabaseOptions): Connection {
  if (options.url) {
    const { Pool } = loadPg()
    const connectTimeout = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
    const statementTimeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS
    const pool = new Pool({
      connectionString: options.url,
      // Parameters in the URL (application_name, options, ...) take precedence over these.
      application_name: 'bernstein-a2a',
      max: options.poolSize ?? DEFAULT_POOL_SIZE,
      connectionTimeoutMillis: connectTimeout,
      keepAlive: true,
      // Statements written together go out in one round trip, each answered in order (a transaction's BEGIN with its
      // first statement, its chain appends with its COMMIT: write-behind.ts). Used one statement at a time, it behaves
      // as a plain client.
      pipeline: true,
      // The server cancels a statement after statement_timeout; query_timeout is the client's own limit for when
      // the answer never comes back (a network that drops packets instead of refusing).
      ...(statementTimeout > 0 ? { statement_timeout: statementTimeout, query_timeout: statementTimeout + connectTimeout } : {}),
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    })
    // An idle client losing its server must not crash the process; the next query reports the failure.
    pool.on('error', () => {})
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: guardedPool(pool, { prepare: options.preparedStatements ?? true }) }),
      ...queryLog(options),
    })
    return { db, engine: 'postgres', ...(options.schema && { schema: options.schema }), sharedPool: pool, close: () => db.destroy() }
  }
  let file = options.sqliteFile
  if (file === undefined) {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 })
    file = join(options.dataDir, 'bernstein-a2a.sqlite')
  }
  // Create the file owner-only before SQLite does (its -wal and -shm files then inherit the same mode).
  if (file !== ':memory:') closeSync(openSync(file, 'a', 0o600))
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma(`synchronous = ${options.sqliteSynchronous === 'normal' ? 'NORMAL' : 'FULL'}`)
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('foreign_keys = ON')
  // Statement journals in memory, not in temporary files: the group commit runs each transaction in a savepoint,
  // and SQLite keeps the pages a savepoint changes in such a journal. On disk that was a file created and unlinked
  // per group and a write per page changed (about 30 system calls per send); in memory it is a copy of each page.
  sqlite.pragma('temp_store = MEMORY')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }), ...queryLog(options) })
  return { db, engine: 'sqlite', sharedPool: null, close: () => db.destroy() }
}

async function migrator(connection: Connection): Promise<Migrator> {
  // Kysely looks for its bookkeeping tables across all schemas unless told which one; name ours explicitly so
  // one database can hold several isolated deployments (and test runs) side by side. Without an explicit schema
  // option that is the session's current schema (search_path, possibly set in DATABASE_URL's `options`).
  let schema = connection.schema
  if (schema === undefined && connection.engine === 'postgres') {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(connection.db)
    schema = rows[0]?.schema ?? undefined
    // No schema of the search_path exists: Kysely would fail on its first table with `relation
    // "kysely_migration_lock" does not exist`, which names neither the cause nor the fix.
    if (schema === undefined) throw new DatabaseUnavailable('no schema of the search_path exists; create it first (CREATE SCHEMA)', null)
  }
  return new Migrator({
    db: connection.db,
    provider: migrationProvider(connection.engine),
    ...(schema && { migrationTableSchema: schema }),
  })
}

/**
 * Applies pending migrations. Safe to run from several processes at once: on PostgreSQL Kysely serialises them
 * with an advisory lock and the later ones find nothing left to do; SQLite serialises writers anyway.
 */
export async function migrateToLatest(connection: Connection): Promise<MigrationResultSet> {
  const result = await (await migrator(connection)).migrateToLatest()
  return result.error === undefined ? result : { ...result, error: asUnavailable(result.error) }
}

export async function migrationStatus(connection: Connection): Promise<{ name: string; executedAt: Date | null }[]> {
  const all = await (await migrator(connection)).getMigrations()
  return all.map((m) => ({ name: m.name, executedAt: m.executedAt ?? null }))
}

/** Names of the migrations not yet applied, in order. */
export async function pendingMigrations(connection: Connection): Promise<string[]> {
  return (await migrationStatus(connection)).filter((m) => m.executedAt === null).map((m) => m.name)
}
