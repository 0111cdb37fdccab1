import type { Kysely } from 'kysely'

/**
 * Binds a delegation delivered signed to its sender's key: `signing_key` is the PEM of the capability-card key whose
 * RFC 9421 signature the delivery carried and passed (null for deliveries that were not signed, and for every row
 * made before). Every later request on that delegation's task by a tenant-bound caller (polls, messages, artifacts)
 * must then be signed by this key; see docs/federation.md, "Requests on a delegated task". Those requests look the key
 * up by the task (A2A id for polls, Bernstein id for messages), hence the two indexes.
 */
export const inboundSigningKey = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('federated_inbound').addColumn('signing_key', 'text').execute()
    await db.schema.createIndex('federated_inbound_a2a_task_idx').on('federated_inbound').columns(['tenant_id', 'a2a_task_id']).execute()
    await db.schema.createIndex('federated_inbound_task_idx').on('federated_inbound').columns(['tenant_id', 'task_id']).execute()
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('federated_inbound_task_idx').execute()
    await db.schema.dropIndex('federated_inbound_a2a_task_idx').execute()
    await db.schema.alterTable('federated_inbound').dropColumn('signing_key').execute()
  },
}
