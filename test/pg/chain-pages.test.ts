/**
 * A chain's pages on PostgreSQL read their own rows and no others, whatever plan the database picks. On statistics
 * older than the chain, PostgreSQL read every later row for each page (a bitmap scan and a sort), so a walk over a
 * chain (its verification, its export) grew with the chain's square: 300 000 entries took 50 s to verify.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { ChainRepository } from '../../src/store/chain.repository.js'
import { Store } from '../../src/store/store.js'
import { migratedDatabasePerTest } from '../helpers/engines.js'
import { PG_URL, announceSkip, pgSuiteName } from './support.js'

announceSkip('test/pg/chain-pages.test.ts')

const freshConnection = migratedDatabasePerTest()

const ENTRIES = 2000
const PAGE = 100

describe.skipIf(!PG_URL)(pgSuiteName('chain pages on PostgreSQL'), () => {
  it('a walk over a chain reads each row once, even when the ordered index scan is not the plan chosen', async () => {
    const connection = await freshConnection('postgres')
    const store = new Store(connection)
    await store.transaction(async (repos) => {
      let head = await repos.chains.lockHead('long', 'genesis')
      for (let i = 1; i <= ENTRIES; i++) {
        await repos.chains.append('long', head, { entryHash: `h${i}`, ticketId: null, trackerName: null, line: `{"i":${i}}` })
        head = { headHash: `h${i}`, length: i }
      }
    })
    const read = await connection.db.transaction().execute(async (trx) => {
      // The plan of stale statistics, made certain: no plain index scan, so the ordered walk is not available.
      await sql`set local enable_indexscan = off`.execute(trx)
      const positions: number[] = []
      for await (const line of new ChainRepository(trx, 'postgres').stream('long', PAGE)) positions.push(line.position)
      // This transaction's own counters: rows read by sequential and by index (bitmap) scans of the table.
      const { rows } = await sql<{ seq: string | null; fetched: string | null }>`
        select seq_tup_read as seq, idx_tup_fetch as fetched from pg_stat_xact_user_tables
        where relname = 'chain_entries' and schemaname = current_schema()`.execute(trx)
      return { positions, rows: Number(rows[0]?.seq ?? 0) + Number(rows[0]?.fetched ?? 0) }
    })
    expect(read.positions).toEqual(Array.from({ length: ENTRIES }, (_, i) => i + 1))
    // Each row once: without the page's upper bound, each page read every row after it (about ENTRIES² / 2 PAGE).
    expect(read.rows).toBe(ENTRIES)
  })
})
