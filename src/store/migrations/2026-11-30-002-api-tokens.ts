import type { Kysely } from 'kysely'

export const apiTokens = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('api_tokens')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull())
      .addColumn('role', 'varchar(16)', (c) => c.notNull())
      .addColumn('tenant_id', 'varchar(200)')
      .addColumn('label', 'text')
      .addColumn('created_at', 'double precision', (c) => c.notNull())
      .addColumn('expires_at', 'double precision')
      .addColumn('revoked_at', 'double precision')
      .execute()
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('api_tokens').execute()
  },
}
