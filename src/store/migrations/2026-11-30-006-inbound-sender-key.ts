import { type Kysely, sql } from 'kysely'
import type { Engine } from '../engine.js'

const OLD_UNIQUE = 'federated_inbound_peer_remote_uq'
const NEW_UNIQUE = 'federated_inbound_sender_remote_uq'
const REBUILT = 'federated_inbound_rebuilt'

/** The columns the init migration gave `federated_inbound`, copied as they are on a rebuild. */
const COLUMNS = sql.raw('id, tenant_id, peer_name, remote_task_id, task_id, a2a_task_id, message, role, created_at')

/** `federated_inbound` as the init migration made it, plus `sender_key` in the idempotency key when asked. */
function createInbound(db: Kysely<unknown>, name: string, withSenderKey: boolean): { execute(): Promise<void> } {
  const table = db.schema
    .createTable(name)
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(200)', (c) => c.notNull())
    .addColumn('peer_name', 'varchar(1000)', (c) => c.notNull())
    .addColumn('remote_task_id', 'varchar(1000)', (c) => c.notNull())
    .addColumn('task_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('a2a_task_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'double precision', (c) => c.notNull())
  if (!withSenderKey) return table.addUniqueConstraint(OLD_UNIQUE, ['tenant_id', 'peer_name', 'remote_task_id'])
  return table
    .addColumn('sender_key', 'varchar(200)', (c) => c.notNull().defaultTo(''))
    .addUniqueConstraint(NEW_UNIQUE, ['tenant_id', 'peer_name', 'sender_key', 'remote_task_id'])
}

/**
 * Inbound delegations are keyed by who vouched for them as well: `sender_key` is the fingerprint of the
 * capability-card key a pinning node verified ('' when the node takes unsigned senders, and for every row made
 * before). The sender name alone is whatever the request claims, so under (tenant, name, remote id) one pinned
 * peer could name itself after another and be answered with, or block, that peer's delegations.
 *
 * PostgreSQL changes the constraint in place. SQLite cannot drop a table constraint, so there the table is rebuilt
 * with the new one (it has no foreign keys and no other index) and the rows copied across.
 */
export function inboundSenderKey(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine === 'postgres') {
        await db.schema
          .alterTable('federated_inbound')
          .addColumn('sender_key', 'varchar(200)', (c) => c.notNull().defaultTo(''))
          .execute()
        await db.schema.alterTable('federated_inbound').dropConstraint(OLD_UNIQUE).execute()
        await db.schema.alterTable('federated_inbound').addUniqueConstraint(NEW_UNIQUE, ['tenant_id', 'peer_name', 'sender_key', 'remote_task_id']).execute()
        return
      }
      await createInbound(db, REBUILT, true).execute()
      await sql`insert into ${sql.table(REBUILT)} (${COLUMNS}, sender_key) select ${COLUMNS}, '' from federated_inbound`.execute(db)
      await db.schema.dropTable('federated_inbound').execute()
      await db.schema.alterTable(REBUILT).renameTo('federated_inbound').execute()
    },
    /**
     * Back to one delegation per (tenant, name, remote id): where several keys share one, the earliest is kept
     * (the others could not have existed before this migration; their linked tasks stay).
     */
    async down(db: Kysely<unknown>): Promise<void> {
      if (engine === 'postgres') {
        await sql`delete from federated_inbound f where exists (select 1 from federated_inbound g where g.tenant_id = f.tenant_id and g.peer_name = f.peer_name and g.remote_task_id = f.remote_task_id and (g.created_at, g.id) < (f.created_at, f.id))`.execute(
          db,
        )
        await db.schema.alterTable('federated_inbound').dropConstraint(NEW_UNIQUE).execute()
        await db.schema.alterTable('federated_inbound').addUniqueConstraint(OLD_UNIQUE, ['tenant_id', 'peer_name', 'remote_task_id']).execute()
        await db.schema.alterTable('federated_inbound').dropColumn('sender_key').execute()
        return
      }
      await createInbound(db, REBUILT, false).execute()
      // `where true` keeps SQLite from reading `on conflict` as part of the select (its documented ambiguity).
      await sql`insert into ${sql.table(REBUILT)} (${COLUMNS}) select ${COLUMNS} from federated_inbound where true order by created_at, id on conflict do nothing`.execute(
        db,
      )
      await db.schema.dropTable('federated_inbound').execute()
      await db.schema.alterTable(REBUILT).renameTo('federated_inbound').execute()
    },
  }
}
