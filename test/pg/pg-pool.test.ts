/**
 * The guarded pool on a real PostgreSQL: a new connection that loses its server in the turn between pg-pool
 * handing it over and the caller receiving it (seen when backends are terminated under load: the FATAL arrives in
 * the same read as ReadyForQuery) must not crash the process with an unhandled 'error' event.
 */
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { guardedPool } from '../../src/store/pg-pool.js'
import { DatabaseUnavailable } from '../../src/store/unavailable.js'
import { PG_URL, announceSkip, pgSuiteName } from './support.js'

announceSkip('test/pg/pg-pool.test.ts')

/** A client whose server terminates it right after the pool has connected it, before anyone has used it. */
class TerminatedAfterConnect extends pg.Client {
  override connect(): Promise<pg.Client>
  override connect(callback: (error: Error) => void): void
  override connect(callback?: (error: Error) => void): Promise<pg.Client> | undefined {
    if (callback === undefined) return super.connect()
    super.connect((error: Error) => {
      // pg-pool's callback hands the client to the waiting caller and takes its own error listener off.
      callback(error)
      if (!error) this.emit('error', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' }))
    })
    return undefined
  }
}

describe.skipIf(!PG_URL)(pgSuiteName('the guarded PostgreSQL pool'), () => {
  let pool: pg.Pool | undefined
  afterEach(async () => {
    await pool?.end()
    pool = undefined
  })

  it('hands out a connection lost before its first use as broken: its query fails as unavailable and release destroys it', async () => {
    pool = new pg.Pool({ connectionString: PG_URL ?? '', max: 1, Client: TerminatedAfterConnect })
    pool.on('error', () => {})
    const guarded = guardedPool(pool)
    const client = await guarded.connect()
    await expect(client.query('select 1', [])).rejects.toBeInstanceOf(DatabaseUnavailable)
    client.release()
    expect(pool.totalCount).toBe(0)

    // And a connection that keeps its server is handed out healthy and goes back to its pool.
    const healthy = new pg.Pool({ connectionString: PG_URL ?? '', max: 1 })
    try {
      const fine = await guardedPool(healthy).connect()
      expect((await fine.query('select 1 as one', [])).rows).toEqual([{ one: 1 }])
      fine.release()
      expect(healthy.idleCount).toBe(1)
    } finally {
      await healthy.end()
    }
  })
})
