import type { Kysely } from 'kysely'

/**
 * The A2A v1.0 stream events of each task (status and artifact updates, as StreamResponse JSON), numbered per task
 * in the order they happened. Every SSE stream, on any replica, reads the same rows in the same order, and a client
 * that reconnects with `Last-Event-ID` is sent the rows after it (within the retention window), after a restart too.
 * Each row also says where the task stood after it (`state`, the artifacts logged so far), so the last row alone
 * tells where the log stands, whatever older rows were pruned.
 */
export const a2aV1StreamEvents = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('a2a_v1_stream_events')
      .addColumn('a2a_task_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('kind', 'varchar(16)', (c) => c.notNull())
      .addColumn('state', 'varchar(64)', (c) => c.notNull())
      .addColumn('artifacts', 'integer', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('created_at', 'double precision', (c) => c.notNull())
      .addPrimaryKeyConstraint('a2a_v1_stream_events_pk', ['a2a_task_id', 'seq'])
      .execute()
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('a2a_v1_stream_events').execute()
  },
}
