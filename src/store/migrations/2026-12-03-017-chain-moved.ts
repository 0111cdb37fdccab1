import { type Kysely, sql } from 'kysely'
import type { Engine } from '../engine.js'

/** The SQLSTATE the function raises: serialization_failure, which the store runs the transaction again for. */
const CHAIN_MOVED_SQLSTATE = '40001'

/**
 * PostgreSQL: `bernstein_chain_moved(chain)`, which fails the statement that calls it. A chain append sent in the
 * same round trip as its COMMIT (chain.repository.ts, APPEND_BEFORE_COMMIT) cannot be built again once its answer
 * arrives: the COMMIT is already on the wire. When the head it was built on turns out stale, the statement calls
 * this function instead, which aborts the transaction (its COMMIT then rolls back) with a serialization failure, and
 * the store runs the transaction again with a fresh head. VOLATILE (the default), so the planner never folds the call.
 * SQLite appends under its own single writer and needs none of it.
 */
export function chainMoved(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine !== 'postgres') return
      await sql`create or replace function bernstein_chain_moved(chain text) returns bigint language plpgsql volatile as $$
        begin
          raise exception using errcode = ${sql.raw(`'${CHAIN_MOVED_SQLSTATE}'`)}, message = 'chain head moved: ' || chain;
        end $$`.execute(db)
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (engine === 'postgres') await sql`drop function if exists bernstein_chain_moved(text)`.execute(db)
    },
  }
}
