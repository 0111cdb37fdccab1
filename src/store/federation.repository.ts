import type { Selectable } from 'kysely'
import type { Delegation, DelegationStatus } from '../federation/delegation.js'
import type { FederationLedgerTable } from './database.js'
import { Repository } from './repository.js'

function rowToDelegation(row: Selectable<FederationLedgerTable>): Delegation {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    peerUrl: row.peer_url,
    localTaskId: row.local_task_id,
    remoteId: row.remote_id,
    remoteTaskId: row.remote_task_id,
    remoteA2ATaskId: row.remote_a2a_task_id,
    status: row.status as DelegationStatus,
    attempts: Number(row.attempts),
    lastError: row.last_error,
    peerIssuer: row.peer_issuer,
    peerFingerprint: row.peer_fingerprint,
    peerJwks: row.peer_jwks,
    message: row.message,
    role: row.role,
    result: row.result,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    nextPollAt: row.next_poll_at === null ? null : Number(row.next_poll_at),
    polls: Number(row.polls),
  }
}

function delegationToRow(d: Delegation): Selectable<FederationLedgerTable> {
  return {
    id: d.id,
    tenant_id: d.tenantId,
    peer_url: d.peerUrl,
    local_task_id: d.localTaskId,
    remote_id: d.remoteId,
    remote_task_id: d.remoteTaskId,
    remote_a2a_task_id: d.remoteA2ATaskId,
    status: d.status,
    attempts: d.attempts,
    last_error: d.lastError,
    peer_issuer: d.peerIssuer,
    peer_fingerprint: d.peerFingerprint,
    peer_jwks: d.peerJwks,
    message: d.message,
    role: d.role,
    result: d.result,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    next_poll_at: d.nextPollAt,
    polls: d.polls,
  }
}

export class FederationRepository extends Repository {
  /** Inserts unless (tenant, peer, local task) exists; returns the stored row either way. */
  async insertOrGet(d: Delegation): Promise<Delegation> {
    await this.db
      .insertInto('federation_ledger')
      .values(delegationToRow(d))
      .onConflict((oc) => oc.columns(['tenant_id', 'peer_url', 'local_task_id']).doNothing())
      .execute()
    const row = await this.db
      .selectFrom('federation_ledger')
      .selectAll()
      .where('tenant_id', '=', d.tenantId)
      .where('peer_url', '=', d.peerUrl)
      .where('local_task_id', '=', d.localTaskId)
      .executeTakeFirstOrThrow()
    return rowToDelegation(row)
  }

  async save(d: Delegation): Promise<void> {
    const { id, ...rest } = delegationToRow(d)
    await this.db.updateTable('federation_ledger').set(rest).where('id', '=', id).execute()
  }

  async get(id: string): Promise<Delegation | undefined> {
    const row = await this.db.selectFrom('federation_ledger').selectAll().where('id', '=', id).executeTakeFirst()
    return row && rowToDelegation(row)
  }

  async list(tenantId?: string): Promise<Delegation[]> {
    let q = this.db.selectFrom('federation_ledger').selectAll()
    if (tenantId !== undefined) q = q.where('tenant_id', '=', tenantId)
    const rows = await q.orderBy('created_at', 'asc').execute()
    return rows.map(rowToDelegation)
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
        .where('id', 'in', rows.map((r) => r.id))
        .execute()
    }
    return rows.map(rowToDelegation)
  }
}
