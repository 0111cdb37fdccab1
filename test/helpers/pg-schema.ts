/** PostgreSQL schemas for processes under test; free of vitest, so the fault scripts can use it too. */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { connect, migrateToLatest } from '../../src/store/connect.js'

/**
 * A new schema of `prefix` and random hex in the PostgreSQL database at `url`, migrated to the latest version (a
 * `serve` process selects it through its URL's search_path); returns its name.
 */
export async function migratedSchema(url: string, dataDir: string, prefix: string): Promise<string> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const connection = connect({ url, dataDir, schema, poolSize: 1 })
  const migrated = await migrateToLatest(connection)
  await connection.close()
  if (migrated.error) throw migrated.error
  return schema
}
