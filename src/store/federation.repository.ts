import type { Selectable } from 'kysely'
import type { Delegation, DelegationStatus, TrustLevel } from '../federation/delegation.js'
import type { FederationLedgerTable } from './database.js'
import { Repository } from './repository.js'
import { integer, member, nullable, rowMapping, sameNames } from './row-mapping.js'

const DELEGATION = rowMapping<Delegation, Selectable<FederationLedgerTable>>()({
  ...sameNames('id', 'tenantId', 'peerUrl', 'localTaskId', 'remoteId', 'remoteTaskId'),
  remoteA2ATaskId: 'remote_a2a_task_id',
  status: member<DelegationStatus>(),
  attempts: integer,
  ...sameNames('lastError', 'peerIssuer', 'peerFingerprint', 'peerJwks', 'message', 'role', 'result'),
  createdAt: integer,
  updatedAt: integer,
  nextPollAt: nullable(integer),
  polls: integer,
  trustLevel: nullable(member<TrustLevel>()),
  peerCardKey: 'peer_card_key',
})

export class FederationRepository extends Repository {
  /** Inserts unless (tenant, peer, local task) exists; returns the stored row either way. */
  async insertOrGet(d: Delegation): Promise<Delegation> {
    await this.db
      .insertInto('federation_ledger')
      .values(DELEGATION.toRow(d))
      .onConflict((oc) => oc.columns(['tenant_id', 'peer_url', 'local_task_id']).doNothing())
      .execute()
    const row = await this.db
      .selectFrom('federation_ledger')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: d.tenantId, peer_url: d.peerUrl, local_task_id: d.localTaskId }))
      .executeTakeFirstOrThrow()
    return DELEGATION.toDomain(row)
  }

  async save(d: Delegation): Promise<void> {
    const { id, ...rest } = DELEGATION.toRow(d)
    await this.db.updateTable('federation_ledger').set(rest).where('id', '=', id).execute()
  }

  async get(id: string): Promise<Delegation | undefined> {
    const row = await this.db.selectFrom('federation_ledger').selectAll().where('id', '=', id).executeTakeFirst()
    return row && DELEGATION.toDomain(row)
  }

  async list(tenantId?: string): Promise<Delegation[]> {
    let q = this.db.selectFrom('federation_ledger').selectAll()
    if (tenantId !== undefined) q = q.where('tenant_id', '=', tenantId)
    const rows = await q.orderBy('created_at', 'asc').execute()
    return rows.map(DELEGATION.toDomain)
  }

  /**
   * Claims the delegations due for a poll: within the caller's transaction their next poll moves to
   * `leaseUntil`, so another replica's follower skips them (`FOR UPDATE SKIP LOCKED` on PostgreSQL) and a
   * follower that dies mid-poll only delays them until the lease ends.
   */
  async claimDue(now: number, leaseUntil: number, limit = 50): Promise<Delegation[]> {
    let q = this.db
      .selectFrom('federation_ledger')
      .selectAll()
      .where('status', 'in', ['accepted', 'in_progress'])
      .where((eb) => eb.or([eb('next_poll_at', 'is', null), eb('next_poll_at', '<=', now)]))
      .orderBy('next_poll_at', 'asc')
      .limit(limit)
    if (this.engine === 'postgres') q = q.forUpdate().skipLocked()
    const rows = await q.execute()
    if (rows.length > 0) {
      await this.db
        .updateTable('federation_ledger')
        .set({ next_poll_at: leaseUntil })
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute()
    }
    return rows.map(DELEGATION.toDomain)
  }
}
