import type { Kysely } from 'kysely'

/** Signed documents every replica must serve identically (the node's capability card), issued once and shared. */
export const nodeDocuments = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('node_documents')
      .addColumn('name', 'varchar(200)', (c) => c.primaryKey())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('key_fingerprint', 'varchar(100)', (c) => c.notNull())
      .addColumn('expires_at', 'double precision', (c) => c.notNull())
      .execute()
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('node_documents').execute()
  },
}
