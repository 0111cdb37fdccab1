import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { type Connection, connect } from '../../../src/store/connect.js'

const opened: { connection: Connection; dataDir: string }[] = []
afterEach(async () => {
  for (const { connection, dataDir } of opened.splice(0)) {
    await connection.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
})

function openSqlite(sqliteSynchronous: 'full' | 'normal'): Connection {
  const dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-connect-'))
  const connection = connect({ url: null, dataDir, sqliteSynchronous })
  opened.push({ connection, dataDir })
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
    const connection = openSqlite(setting)
    expect(await pragma(connection, 'journal_mode')).toBe('wal')
    expect(await pragma(connection, 'synchronous')).toBe(synchronous)
    expect(await pragma(connection, 'foreign_keys')).toBe(1)
    expect(await pragma(connection, 'busy_timeout')).toBe(5000)
    expect(await pragma(connection, 'temp_store')).toBe(2)
  })
})
