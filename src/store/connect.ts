import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type MigrationResultSet } from 'kysely'
import pg from 'pg'
import type { Database } from './database.js'
import type { Engine } from './engine.js'
import { migrationProvider } from './migrations/index.js'

export interface DatabaseOptions {
  /** A `postgres://` URL, or null for the embedded SQLite file in `dataDir`. */
  readonly url: string | null
  readonly dataDir: string
  /** SQLite only: `full` fsyncs the WAL on every commit (durable across power loss), `normal` does not. */
  readonly sqliteSynchronous?: 'full' | 'normal'
  /** SQLite only: an explicit file (`:memory:` for throwaway stores). */
  readonly sqliteFile?: string
  readonly poolSize?: number
  readonly connectTimeoutMs?: number
  readonly statementTimeoutMs?: number
  /** PostgreSQL schema to use (tests isolate themselves in one). */
  readonly schema?: string
}

export interface Connection {
  readonly db: Kysely<Database>
  readonly engine: Engine
  /** The PostgreSQL schema in use, when not the default one. */
  readonly schema?: string
  close(): Promise<void>
}

export function connect(options: DatabaseOptions): Connection {
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      statement_timeout: options.statementTimeoutMs ?? 30_000,
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    })
    // An idle client losing its server must not crash the process; the next query reports the failure.
    pool.on('error', () => {})
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    return { db, engine: 'postgres', ...(options.schema && { schema: options.schema }), close: () => db.destroy() }
  }
  let file = options.sqliteFile
  if (file === undefined) {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 })
    file = join(options.dataDir, 'bernstein-a2a.sqlite')
  }
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma(`synchronous = ${options.sqliteSynchronous === 'normal' ? 'NORMAL' : 'FULL'}`)
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('foreign_keys = ON')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) })
  return { db, engine: 'sqlite', close: () => db.destroy() }
}

function migrator(connection: Connection): Migrator {
  // Kysely looks for its bookkeeping tables across all schemas unless told which one; name ours explicitly so
  // one database can hold several isolated deployments (and test runs) side by side.
  return new Migrator({
    db: connection.db,
    provider: migrationProvider(connection.engine),
    ...(connection.schema && { migrationTableSchema: connection.schema }),
  })
}

export async function migrateToLatest(connection: Connection): Promise<MigrationResultSet> {
  return migrator(connection).migrateToLatest()
}

export async function migrationStatus(connection: Connection): Promise<{ name: string; executedAt: Date | null }[]> {
  const all = await migrator(connection).getMigrations()
  return all.map((m) => ({ name: m.name, executedAt: m.executedAt ?? null }))
}
