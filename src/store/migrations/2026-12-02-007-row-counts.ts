import { type Kysely, sql } from 'kysely'
import type { Engine } from '../engine.js'

/** PostgreSQL: the counter rows a change moves, locked in name order, then adjusted (replaced by migration 016). */
export const ROW_COUNTS_APPLY_IN_PLACE = `function row_counts_apply(minus text, plus text) returns void language plpgsql as $$
  begin
    if plus is not null then
      insert into row_counts (name, n) values (plus, 0) on conflict (name) do nothing;
    end if;
    perform 1 from row_counts where name in (minus, plus) order by name for update;
    if minus is not null then update row_counts set n = n - 1 where name = minus; end if;
    if plus is not null then update row_counts set n = n + 1 where name = plus; end if;
  end $$`

/**
 * Counts kept on write: `row_counts(name, n)` holds the number of tasks in each status (`tasks.<status>`) and of
 * known peers (`peers`), maintained by triggers in the same transaction as the rows they count, so no code path
 * can forget them and a rolled-back write never counts. `GET /health` and the `bernstein_tasks` gauge read these
 * few rows instead of counting the tables (a scan whose cost grew with the table: issue 26).
 *
 * PostgreSQL: each trigger locks the counter rows it changes in name order first, so that two transitions moving
 * tasks between the same two statuses in opposite directions queue instead of deadlocking.
 */
export function rowCounts(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('row_counts')
        .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('n', 'bigint', (c) => c.notNull())
        .execute()
      await sql`insert into row_counts (name, n) select 'tasks.' || status, count(*) from tasks group by status`.execute(db)
      await sql`insert into row_counts (name, n) select 'peers', count(*) from peers`.execute(db)
      if (engine === 'sqlite') {
        await sql`create trigger row_counts_task_insert after insert on tasks begin
          insert or ignore into row_counts (name, n) values ('tasks.' || new.status, 0);
          update row_counts set n = n + 1 where name = 'tasks.' || new.status;
        end`.execute(db)
        await sql`create trigger row_counts_task_delete after delete on tasks begin
          update row_counts set n = n - 1 where name = 'tasks.' || old.status;
        end`.execute(db)
        await sql`create trigger row_counts_task_status after update of status on tasks when old.status is not new.status begin
          insert or ignore into row_counts (name, n) values ('tasks.' || new.status, 0);
          update row_counts set n = n - 1 where name = 'tasks.' || old.status;
          update row_counts set n = n + 1 where name = 'tasks.' || new.status;
        end`.execute(db)
        await sql`create trigger row_counts_peer_insert after insert on peers begin
          insert or ignore into row_counts (name, n) values ('peers', 0);
          update row_counts set n = n + 1 where name = 'peers';
        end`.execute(db)
        await sql`create trigger row_counts_peer_delete after delete on peers begin
          update row_counts set n = n - 1 where name = 'peers';
        end`.execute(db)
        return
      }
      // One function for both tables: the counter names a row change moves, locked in order, then adjusted.
      await sql`create ${sql.raw(ROW_COUNTS_APPLY_IN_PLACE)}`.execute(db)
      await sql`create function row_counts_tasks() returns trigger language plpgsql as $$
        begin
          if tg_op = 'INSERT' then perform row_counts_apply(null, 'tasks.' || new.status);
          elsif tg_op = 'DELETE' then perform row_counts_apply('tasks.' || old.status, null);
          elsif old.status is distinct from new.status then perform row_counts_apply('tasks.' || old.status, 'tasks.' || new.status);
          end if;
          return null;
        end $$`.execute(db)
      await sql`create function row_counts_peers() returns trigger language plpgsql as $$
        begin
          if tg_op = 'INSERT' then perform row_counts_apply(null, 'peers');
          else perform row_counts_apply('peers', null);
          end if;
          return null;
        end $$`.execute(db)
      await sql`create trigger row_counts_tasks after insert or delete or update of status on tasks for each row execute function row_counts_tasks()`.execute(
        db,
      )
      await sql`create trigger row_counts_peers after insert or delete on peers for each row execute function row_counts_peers()`.execute(db)
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (engine === 'sqlite') {
        for (const name of ['row_counts_task_insert', 'row_counts_task_delete', 'row_counts_task_status', 'row_counts_peer_insert', 'row_counts_peer_delete']) {
          await sql`drop trigger if exists ${sql.id(name)}`.execute(db)
        }
      } else {
        await sql`drop trigger if exists row_counts_tasks on tasks`.execute(db)
        await sql`drop trigger if exists row_counts_peers on peers`.execute(db)
        await sql`drop function if exists row_counts_tasks()`.execute(db)
        await sql`drop function if exists row_counts_peers()`.execute(db)
        await sql`drop function if exists row_counts_apply(text, text)`.execute(db)
      }
      await db.schema.dropTable('row_counts').execute()
    },
  }
}
