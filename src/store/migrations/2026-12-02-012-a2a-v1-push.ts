import type { Kysely } from 'kysely'
import { type Engine, serialPrimaryKey } from '../engine.js'

/**
 * A2A v1.0 push notifications: the configs of each task (per tenant), and the outbox of deliveries. A delivery row
 * is written in the transaction of the change it reports, so a committed change is never without its deliveries;
 * the worker claims due rows (`lease_owner`, `lease_until`; `FOR UPDATE SKIP LOCKED` on PostgreSQL), and records
 * each attempt's outcome and the next attempt's time, so retries survive a restart.
 */
export function a2aV1Push(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('a2a_v1_push_configs')
        .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('a2a_task_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('config_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('url', 'varchar(2048)', (c) => c.notNull())
        .addColumn('token', 'text')
        .addColumn('auth_scheme', 'varchar(100)')
        .addColumn('auth_credentials', 'text')
        .addColumn('created_at', 'double precision', (c) => c.notNull())
        .addPrimaryKeyConstraint('a2a_v1_push_configs_pk', ['tenant_id', 'a2a_task_id', 'config_id'])
        .execute()
      await serialPrimaryKey(engine, db.schema.createTable('a2a_v1_push_deliveries'), 'seq')
        .addColumn('id', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('a2a_task_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('config_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'double precision', (c) => c.notNull())
        .addColumn('lease_owner', 'varchar(64)')
        .addColumn('lease_until', 'double precision')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'double precision', (c) => c.notNull())
        .addColumn('finished_at', 'double precision')
        .execute()
      await db.schema.createIndex('a2a_v1_push_deliveries_due_idx').on('a2a_v1_push_deliveries').columns(['status', 'next_attempt_at']).execute()
      await db.schema
        .createIndex('a2a_v1_push_deliveries_config_idx')
        .on('a2a_v1_push_deliveries')
        .columns(['tenant_id', 'a2a_task_id', 'config_id', 'seq'])
        .execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('a2a_v1_push_deliveries').execute()
      await db.schema.dropTable('a2a_v1_push_configs').execute()
    },
  }
}
