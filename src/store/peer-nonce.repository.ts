import { Repository } from './repository.js'

/** The replay cache of signed peer requests: each (key, nonce) is accepted once while it could still be fresh. */
export class PeerNonceRepository extends Repository {
  /**
   * Records `nonce` for the key unless it is already there; true when it was new. Rows expired by `now` are pruned
   * first, so the table holds at most one acceptance window of nonces per key.
   */
  async recordIfNew(keyFingerprint: string, nonce: string, now: number, expiresAt: number): Promise<boolean> {
    await this.db.deleteFrom('peer_nonces').where('expires_at', '<', now).execute()
    const inserted = await this.db
      .insertInto('peer_nonces')
      .values({ key_fingerprint: keyFingerprint, nonce, seen_at: now, expires_at: expiresAt })
      .onConflict((oc) => oc.columns(['key_fingerprint', 'nonce']).doNothing())
      .executeTakeFirst()
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0
  }

  /** How many nonces are held (for tests and diagnostics). */
  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('peer_nonces')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
}
