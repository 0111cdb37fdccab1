import type { Kysely } from 'kysely'
import { type Engine, serialPrimaryKey } from '../engine.js'

export function init(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('tasks')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('priority', 'integer', (c) => c.notNull())
        .addColumn('scope', 'varchar(20)', (c) => c.notNull())
        .addColumn('complexity', 'varchar(20)', (c) => c.notNull())
        .addColumn('estimated_minutes', 'integer', (c) => c.notNull())
        .addColumn('status', 'varchar(32)', (c) => c.notNull())
        .addColumn('task_type', 'varchar(32)', (c) => c.notNull())
        .addColumn('depends_on', 'text', (c) => c.notNull())
        .addColumn('parent_task_id', 'varchar(64)')
        .addColumn('owned_files', 'text', (c) => c.notNull())
        .addColumn('assigned_agent', 'text')
        .addColumn('result_summary', 'text')
        .addColumn('terminal_reason', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'double precision', (c) => c.notNull())
        .addColumn('updated_at', 'double precision', (c) => c.notNull())
        .addColumn('claimed_at', 'double precision')
        .addColumn('completed_at', 'double precision')
        .addColumn('closed_at', 'double precision')
        .addColumn('progress_log', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .execute()
      // Claim-next scans open tasks of one role by priority then age; listing pages by age.
      await db.schema.createIndex('tasks_claim_idx').on('tasks').columns(['tenant_id', 'role', 'status', 'priority', 'created_at']).execute()
      await db.schema.createIndex('tasks_list_idx').on('tasks').columns(['tenant_id', 'created_at', 'id']).execute()
      await db.schema.createIndex('tasks_status_idx').on('tasks').columns(['tenant_id', 'status']).execute()

      await db.schema
        .createTable('a2a_tasks')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('bernstein_task_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('sender', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('created_at', 'double precision', (c) => c.notNull())
        .addColumn('updated_at', 'double precision', (c) => c.notNull())
        .addColumn('receipt', 'text')
        .addColumn('receipt_kind', 'varchar(16)')
        .execute()
      await db.schema.createIndex('a2a_tasks_task_idx').on('a2a_tasks').columns(['bernstein_task_id']).execute()

      await serialPrimaryKey(engine, db.schema.createTable('a2a_artifacts'), 'seq')
        .addColumn('a2a_task_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('content_type', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'double precision', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('a2a_artifacts_task_idx').on('a2a_artifacts').columns(['a2a_task_id', 'seq']).execute()

      await db.schema
        .createTable('a2a_messages')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('sender', 'text', (c) => c.notNull())
        .addColumn('recipient', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('task_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('direction', 'varchar(16)', (c) => c.notNull())
        .addColumn('delivered', 'integer', (c) => c.notNull())
        .addColumn('external_endpoint', 'text')
        .addColumn('created_at', 'double precision', (c) => c.notNull())
        .execute()

      await db.schema
        .createTable('federated_inbound')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('peer_name', 'varchar(1000)', (c) => c.notNull())
        .addColumn('remote_task_id', 'varchar(1000)', (c) => c.notNull())
        .addColumn('task_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('a2a_task_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'double precision', (c) => c.notNull())
        // Idempotency on (peer, remote id) is a constraint, not a read-then-write, so concurrent duplicates
        // (and several replicas) cannot create two tasks.
        .addUniqueConstraint('federated_inbound_peer_remote_uq', ['tenant_id', 'peer_name', 'remote_task_id'])
        .execute()

      await db.schema
        .createTable('peers')
        .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('name', 'varchar(1000)', (c) => c.notNull())
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('capabilities', 'text', (c) => c.notNull())
        .addColumn('status', 'varchar(32)', (c) => c.notNull())
        .addColumn('last_seen', 'double precision', (c) => c.notNull())
        .addPrimaryKeyConstraint('peers_pk', ['tenant_id', 'name'])
        .execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['peers', 'federated_inbound', 'a2a_messages', 'a2a_artifacts', 'a2a_tasks', 'tasks']) {
        await db.schema.dropTable(table).execute()
      }
    },
  }
}
