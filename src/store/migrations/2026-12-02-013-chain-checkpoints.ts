import type { Kysely } from 'kysely'

/**
 * Partitioned chains (docs/scaling.md): signed checkpoints of every partition head. The partitions themselves need
 * no new table: each is a chain of its own in `chain_heads` / `chain_entries`, and the chain written before
 * partitioning keeps its name and its rows as the legacy partition, so no history is rewritten.
 */
export const chainCheckpoints = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('chain_checkpoints')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('jws', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('chain_checkpoints_created_idx').on('chain_checkpoints').columns(['created_at', 'id']).execute()
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('chain_checkpoints').execute()
  },
}
