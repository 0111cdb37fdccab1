import type { Kysely } from 'kysely'
import { type Engine, serialPrimaryKey } from '../engine.js'

/**
 * What A2A v1.0 adds to an A2A task: its `contextId` (stored, so ListTasks can filter by it and a continuation can
 * be checked against it) and its history (every message sent into the task, as the client sent it). The task
 * itself stays the row of `a2a_tasks` that `/a2a/tasks/send` creates; tasks created that way have no row here.
 */
export function a2aV1(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('a2a_v1_tasks')
        .addColumn('a2a_task_id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('context_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('created_at', 'double precision', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('a2a_v1_tasks_context_idx').on('a2a_v1_tasks').columns(['tenant_id', 'context_id']).execute()
      await serialPrimaryKey(engine, db.schema.createTable('a2a_v1_messages'), 'seq')
        .addColumn('a2a_task_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('message_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('role', 'varchar(32)', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'double precision', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('a2a_v1_messages_task_idx').on('a2a_v1_messages').columns(['a2a_task_id', 'seq']).execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('a2a_v1_messages').execute()
      await db.schema.dropTable('a2a_v1_tasks').execute()
    },
  }
}
