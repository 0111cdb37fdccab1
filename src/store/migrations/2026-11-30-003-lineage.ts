import type { Kysely } from 'kysely'

/**
 * Append-only chains (the tracker-audit log and the receipt spine). Each line is stored exactly as Bernstein
 * writes it, so export is a byte copy. `(chain, position)` is unique: two writers can never both append
 * position N, so a chain cannot fork even if the head lock were bypassed.
 */
export const lineage = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('chain_heads')
      .addColumn('chain', 'varchar(200)', (c) => c.primaryKey())
      .addColumn('head_hash', 'text', (c) => c.notNull())
      .addColumn('length', 'integer', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('chain_entries')
      .addColumn('chain', 'varchar(200)', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('entry_hash', 'text', (c) => c.notNull())
      .addColumn('ticket_id', 'text')
      .addColumn('tracker_name', 'text')
      .addColumn('line', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('chain_entries_pk', ['chain', 'position'])
      .execute()
    await db.schema.createIndex('chain_entries_ticket_idx').on('chain_entries').columns(['chain', 'ticket_id', 'position']).execute()
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('chain_entries').execute()
    await db.schema.dropTable('chain_heads').execute()
  },
}
