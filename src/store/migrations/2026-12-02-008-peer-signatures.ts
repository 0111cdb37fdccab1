import type { Kysely } from 'kysely'

/**
 * Proof of possession between peers (RFC 9421 signatures by the capability-card key):
 * - `peer_nonces`, the replay cache: a signed request's (key, nonce) is recorded once, in the database so that every
 *   replica refuses the same nonce; rows outlive the acceptance window (`expires_at`) and are pruned after it.
 * - on the outbound ledger, the trust level a delegation reached (`proven`: the peer answered signed by its pinned
 *   card key; `card-only`: an unsigned peer accepted by the operator's opt-in) and the pinned card key itself, which
 *   the follower verifies the peer's answers against.
 */
export const peerSignatures = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('peer_nonces')
      .addColumn('key_fingerprint', 'varchar(100)', (c) => c.notNull())
      .addColumn('nonce', 'varchar(200)', (c) => c.notNull())
      .addColumn('seen_at', 'double precision', (c) => c.notNull())
      .addColumn('expires_at', 'double precision', (c) => c.notNull())
      .addPrimaryKeyConstraint('peer_nonces_pk', ['key_fingerprint', 'nonce'])
      .execute()
    await db.schema.createIndex('peer_nonces_expires_idx').on('peer_nonces').column('expires_at').execute()
    await db.schema.alterTable('federation_ledger').addColumn('trust_level', 'varchar(32)').execute()
    await db.schema.alterTable('federation_ledger').addColumn('peer_card_key', 'text').execute()
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('federation_ledger').dropColumn('peer_card_key').execute()
    await db.schema.alterTable('federation_ledger').dropColumn('trust_level').execute()
    await db.schema.dropTable('peer_nonces').execute()
  },
}
