import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { type Connection, connect } from '../../../src/store/connect.js'
import { type TestDatabase, createTestDatabase } from '../../helpers/engines.js'

const opened: { connection: Connection; database: TestDatabase }[] = []
afterEach(async () => {
  for (const { connection, database } of opened.splice(0)) {
    await connection.close()
    await database.drop()
  }
})

async function openSqlite(sqliteSynchronous: 'full' | 'normal'): Promise<Connection> {
  const database = await createTestDatabase('sqlite')
  const connection = connect({ ...database.options, sqliteSynchronous })
  opened.push({ connection, database })
  return connection
}

async function pragma(connection: Connection, name: string): Promise<unknown> {
  const { rows } = await sql<Record<string, unknown>>`pragma ${sql.raw(name)}`.execute(connection.db)
  return Object.values(rows[0] ?? {})[0]
}

describe('the embedded SQLite connection', () => {
  // SQLite's numeric answers: synchronous NORMAL = 1, FULL = 2; temp_store MEMORY = 2.
  it.each([
    ['full', 2],
    ['normal', 1],
  ] as const)('runs in WAL mode with synchronous %s, foreign keys on, and statement journals in memory', async (setting, synchronous) => {
    const connection = await openSqlite(setting)
    expect(await pragma(connection, 'journal_mode')).toBe('wal')
    expect(await pragma(connection, 'synchronous')).toBe(synchronous)
    expect(await pragma(connection, 'foreign_keys')).toBe(1)
    expect(await pragma(connection, 'busy_timeout')).toBe(5000)
    expect(await pragma(connection, 'temp_store')).toBe(2)
  })
})
