import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Migrator } from 'kysely'
import pg from 'pg'
import { afterEach } from 'vitest'
import { type Connection, type DatabaseOptions, connect, migrateToLatest } from '../../src/store/connect.js'
import { migrationProvider } from '../../src/store/migrations/index.js'

export type TestEngine = 'sqlite' | 'postgres'

/** SQLite always; PostgreSQL when TEST_DATABASE_URL is set (CI sets it). */
export function testEngines(): TestEngine[] {
  return process.env['TEST_DATABASE_URL'] ? ['sqlite', 'postgres'] : ['sqlite']
}

export interface TestDatabase {
  readonly options: DatabaseOptions
  readonly dataDir: string
  drop(): Promise<void>
}

/**
 * A fresh database for one test server: a temporary SQLite file, or a private PostgreSQL schema that is
 * dropped afterwards, so runs never see each other's rows.
 */
export async function createTestDatabase(engine: TestEngine): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-test-'))
  if (engine === 'sqlite') {
    return { options: { url: null, dataDir, sqliteSynchronous: 'normal' }, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) }
  }
  const url = process.env['TEST_DATABASE_URL']
  if (!url) throw new Error('TEST_DATABASE_URL is not set')
  const schema = `t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  return {
    options: { url, dataDir, schema, poolSize: 5 },
    dataDir,
    drop: async () => {
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      await c.query(`drop schema if exists ${schema} cascade`)
      await c.end()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

interface MigratedDatabase {
  readonly connection: Connection
  /** Closes the connection, then drops the database. */
  close(): Promise<void>
}

/** A fresh database (see {@link createTestDatabase}) with every migration applied, and a connection to it. */
async function openMigratedDatabase(engine: TestEngine): Promise<MigratedDatabase> {
  const database = await createTestDatabase(engine)
  const connection = connect(database.options)
  const migrated = await migrateToLatest(connection)
  if (migrated.error) {
    await connection.close()
    await database.drop()
    throw migrated.error
  }
  return {
    connection,
    async close() {
      await connection.close()
      await database.drop()
    },
  }
}

/**
 * For a test file: a function that opens a fresh migrated database and returns its connection; every database it
 * opened is closed and dropped after each test.
 */
export function migratedDatabasePerTest(): (engine: TestEngine) => Promise<Connection> {
  const open: MigratedDatabase[] = []
  afterEach(async () => {
    for (const database of open.splice(0)) await database.close()
  })
  return async (engine) => {
    const database = await openMigratedDatabase(engine)
    open.push(database)
    return database.connection
  }
}

/**
 * For a migration's test file: a function that opens a fresh database with no migration applied, and a migrator over
 * it to step through them; every database it opened is closed and dropped after each test.
 */
export function unmigratedDatabasePerTest(): (engine: TestEngine) => Promise<{ connection: Connection; migrator: Migrator }> {
  const open: { connection: Connection; database: TestDatabase }[] = []
  afterEach(async () => {
    for (const { connection, database } of open.splice(0)) {
      await connection.close()
      await database.drop()
    }
  })
  return async (engine) => {
    const database = await createTestDatabase(engine)
    const connection = connect(database.options)
    open.push({ connection, database })
    const migrator = new Migrator({
      db: connection.db,
      provider: migrationProvider(engine),
      ...(connection.schema && { migrationTableSchema: connection.schema }),
    })
    return { connection, migrator }
  }
}
