import { type Kysely, sql } from 'kysely'
import type { Engine } from '../engine.js'
import { FOLD_COUNTS } from '../row-counts.js'
import { ROW_COUNTS_APPLY_IN_PLACE } from './2026-12-02-007-row-counts.js'

/**
 * PostgreSQL: the counts of migration 007 kept as deltas instead of in place. There, every new task added one to the
 * single `tasks.open` row, whose lock was then held to COMMIT: every write of a task in the cluster queued on
 * it, from its first statement to its last, whatever the chain partitioning (and a transaction that took a chain
 * head first and the counter second could deadlock with one that took them the other way). Now the triggers append
 * a row (`+1`, `-1`) that nothing else locks; readers add the deltas to the counts, and a periodic fold
 * (`Store.foldCounts`) moves them into `row_counts`. SQLite, a single writer, keeps updating in place; its table of
 * deltas exists so that both engines read the counts with the same query, and stays empty.
 */
export function rowCountDeltas(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('row_count_deltas')
        .addColumn('name', 'varchar(64)', (c) => c.notNull())
        .addColumn('delta', 'bigint', (c) => c.notNull())
        .execute()
      if (engine !== 'postgres') return
      // Same signature, so the triggers of migration 007 call it unchanged.
      await sql`create or replace function row_counts_apply(minus text, plus text) returns void language plpgsql as $$
        begin
          if minus is not null then insert into row_count_deltas (name, delta) values (minus, -1); end if;
          if plus is not null then insert into row_count_deltas (name, delta) values (plus, 1); end if;
        end $$`.execute(db)
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (engine === 'postgres') {
        await sql`create or replace ${sql.raw(ROW_COUNTS_APPLY_IN_PLACE)}`.execute(db)
        await sql`${sql.raw(FOLD_COUNTS)}`.execute(db)
      }
      await db.schema.dropTable('row_count_deltas').execute()
    },
  }
}
