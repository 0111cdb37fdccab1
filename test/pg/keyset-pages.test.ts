/**
 * Pages on PostgreSQL read their own rows, not every row before or after them, whatever plan the database picks. On
 * statistics older than the chain, PostgreSQL read every later row for each page of a chain (a bitmap scan and a
 * sort), so a walk over a chain (its verification, its export) grew with its square: 300 000 entries took 50 s. The
 * checkpoints' walk (a node's verification) had the same shape for another reason: its keyset condition was an `or`,
 * which gives the index no place to start; so did a page of `GET /tasks` behind a cursor (every newer task read).
 */
import { type Kysely, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { ChainRepository } from '../../src/store/chain.repository.js'
import { CheckpointRepository } from '../../src/store/checkpoint.repository.js'
import type { Database } from '../../src/store/database.js'
import { Store } from '../../src/store/store.js'
import { TaskRepository } from '../../src/store/task.repository.js'
import type { Task } from '../../src/tasks/task.js'
import { taskFixture } from '../helpers/task-fixture.js'
import { migratedDatabasePerTest } from '../helpers/engines.js'
import { PG_URL, announceSkip, pgSuiteName } from './support.js'

announceSkip('test/pg/keyset-pages.test.ts')

const freshConnection = migratedDatabasePerTest()

const ENTRIES = 2000
const PAGE = 100

/** Rows of `table` this transaction has read so far, by sequential and by index (bitmap included) scans. */
async function rowsRead(trx: Kysely<Database>, table: string): Promise<number> {
  const { rows } = await sql<{ seq: string | null; fetched: string | null }>`
    select seq_tup_read as seq, idx_tup_fetch as fetched from pg_stat_xact_user_tables
    where relname = ${table} and schemaname = current_schema()`.execute(trx)
  return Number(rows[0]?.seq ?? 0) + Number(rows[0]?.fetched ?? 0)
}

const checkpointId = (i: number): string => `cp${i.toString().padStart(5, '0')}`

describe.skipIf(!PG_URL)(pgSuiteName('keyset pages on PostgreSQL'), () => {
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
      return { positions, rows: await rowsRead(trx, 'chain_entries') }
    })
    expect(read.positions).toEqual(Array.from({ length: ENTRIES }, (_, i) => i + 1))
    // Each row once: without the page's upper bound, each page read every row after it (about ENTRIES² / 2 PAGE).
    expect(read.rows).toBe(ENTRIES)
  })

  it('a walk over the checkpoints reads each row once', async () => {
    const connection = await freshConnection('postgres')
    const store = new Store(connection)
    // Pairs share a creation time, so the walk's position is (created_at, id), not created_at alone.
    for (let i = 0; i < ENTRIES; i++) {
      await store.repos.checkpoints.insert({ id: checkpointId(i), createdAt: 1_796_000_000_000 + Math.floor(i / 2), body: `{"i":${i}}`, jws: 'x' })
    }
    await sql`analyze chain_checkpoints`.execute(connection.db)
    const read = await connection.db.transaction().execute(async (trx) => {
      const ids: string[] = []
      for await (const checkpoint of new CheckpointRepository(trx, 'postgres').stream(PAGE)) ids.push(checkpoint.id)
      return { ids, rows: await rowsRead(trx, 'chain_checkpoints') }
    })
    expect(read.ids).toEqual(Array.from({ length: ENTRIES }, (_, i) => checkpointId(i)))
    // Each row once, give or take a page (2 003 here); with the `or` condition, 17 404.
    expect(read.rows).toBeLessThanOrEqual(ENTRIES + PAGE)
  })

  it('a page of tasks behind a cursor reads that page, not every newer task', async () => {
    const connection = await freshConnection('postgres')
    const store = new Store(connection)
    const task = (i: number): Task => {
      // Pairs share a creation time, so the cursor is (created_at, id), not created_at alone.
      const at = 1_796_000_000 + Math.floor(i / 2)
      return taskFixture(`t${i.toString().padStart(5, '0')}`, at, { title: `task ${i}` })
    }
    for (let i = 0; i < ENTRIES; i++) await store.repos.tasks.insert(task(i))
    await sql`analyze tasks`.execute(connection.db)
    // The cursor half-way down: the page holds tasks 999 … 950 (newest first).
    const cursor = task(ENTRIES / 2)
    const read = await connection.db.transaction().execute(async (trx) => {
      const page = await new TaskRepository(trx, 'postgres').list({
        tenantId: 'default',
        limit: PAGE / 2,
        after: { createdAt: cursor.createdAt, id: cursor.id },
      })
      return { ids: page.map((t) => t.id), rows: await rowsRead(trx, 'tasks') }
    })
    expect(read.ids).toEqual(Array.from({ length: PAGE / 2 }, (_, i) => task(ENTRIES / 2 - 1 - i).id))
    // The page's own rows (50 here); with the `or` condition, 1 050: every newer task, then the page.
    expect(read.rows).toBeLessThanOrEqual(PAGE)
  })
})
