import { type Kysely, sql } from 'kysely'
import type { Database } from './database.js'

/**
 * The counts the database keeps on write (migrations 007 and 016) whose names match `pattern` (a LIKE pattern):
 * `row_counts` plus the deltas not folded into it yet, read in one statement so that a fold running beside it
 * is seen entirely or not at all.
 */
export async function readCounts(db: Kysely<Database>, pattern: string): Promise<Map<string, number>> {
  const { rows } = await sql<{ name: string; n: number | string }>`select name, sum(n) as n from (
      select name, n from row_counts where name like ${pattern}
      union all select name, delta as n from row_count_deltas where name like ${pattern}
    ) counted group by name`.execute(db)
  // sum() of a bigint is a numeric on PostgreSQL and arrives as a string.
  return new Map(rows.map((r) => [r.name, Number(r.n)]))
}

/**
 * PostgreSQL: moves the deltas into the counts, in one statement. Deltas of transactions still open are not seen
 * and wait for the next fold; two replicas folding at once each move only rows the other has not (the second
 * DELETE skips the rows the first removed), so nothing counts twice.
 */
export const FOLD_COUNTS = `with folded as (delete from row_count_deltas returning name, delta),
sums as (select name, sum(delta)::bigint as d from folded group by name)
insert into row_counts (name, n) select name, d from sums
on conflict (name) do update set n = row_counts.n + excluded.n`
