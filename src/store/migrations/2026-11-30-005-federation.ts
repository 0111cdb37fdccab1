import type { Kysely } from 'kysely'

/** Outbound delegations to peers: one row per (tenant, peer, local task), so re-running a delegation reuses it. */
export const federation = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('federation_ledger')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
      .addColumn('peer_url', 'varchar(2000)', (c) => c.notNull())
      .addColumn('local_task_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('remote_id', 'varchar(1000)')
      .addColumn('remote_task_id', 'varchar(1000)')
      .addColumn('remote_a2a_task_id', 'varchar(1000)')
      .addColumn('status', 'varchar(32)', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('peer_issuer', 'text')
      .addColumn('peer_fingerprint', 'varchar(200)')
      .addColumn('peer_jwks', 'text')
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('result', 'text')
      .addColumn('created_at', 'double precision', (c) => c.notNull())
      .addColumn('updated_at', 'double precision', (c) => c.notNull())
      .addColumn('next_poll_at', 'double precision')
      .addColumn('polls', 'integer', (c) => c.notNull())
      .addUniqueConstraint('federation_ledger_peer_task_uq', ['tenant_id', 'peer_url', 'local_task_id'])
      .execute()
    await db.schema.createIndex('federation_ledger_poll_idx').on('federation_ledger').columns(['status', 'next_poll_at']).execute()
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('federation_ledger').execute()
  },
}
