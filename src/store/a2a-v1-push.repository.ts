import type { ClaimedDelivery, DeliveryOutcome, PushConfigRecord, PushDeliveryRecord, PushDeliveryStatus } from '../a2a-v1/push/push-records.js'
import type { A2AV1PushConfigTable, A2AV1PushDeliveryTable } from './database.js'
import { Repository } from './repository.js'

type ConfigRow = A2AV1PushConfigTable
type DeliveryRow = Omit<A2AV1PushDeliveryTable, 'seq'> & { seq: number }

function toConfig(r: ConfigRow): PushConfigRecord {
  return {
    tenantId: r.tenant_id,
    a2aTaskId: r.a2a_task_id,
    configId: r.config_id,
    url: r.url,
    token: r.token,
    authScheme: r.auth_scheme,
    authCredentials: r.auth_credentials,
    createdAt: Number(r.created_at),
  }
}

function toDelivery(r: DeliveryRow): PushDeliveryRecord {
  return {
    seq: Number(r.seq),
    id: r.id,
    tenantId: r.tenant_id,
    a2aTaskId: r.a2a_task_id,
    configId: r.config_id,
    body: r.body,
    status: r.status as PushDeliveryStatus,
    attempts: Number(r.attempts),
    nextAttemptAt: Number(r.next_attempt_at),
    lastError: r.last_error,
    createdAt: Number(r.created_at),
    finishedAt: r.finished_at === null ? null : Number(r.finished_at),
  }
}

/** A2A v1.0 push notifications: the configs of each task and the outbox of their deliveries. */
export class A2AV1PushRepository extends Repository {
  /** Inserts the config, or replaces the one of the task with the same id (its artifact count kept). */
  async upsertConfig(config: PushConfigRecord): Promise<void> {
    const existing = await this.getConfig(config.tenantId, config.a2aTaskId, config.configId)
    const values = { url: config.url, token: config.token, auth_scheme: config.authScheme, auth_credentials: config.authCredentials }
    if (existing) {
      await this.#whereConfig(this.db.updateTable('a2a_v1_push_configs').set(values), config.tenantId, config.a2aTaskId, config.configId).execute()
      return
    }
    await this.db
      .insertInto('a2a_v1_push_configs')
      .values({
        tenant_id: config.tenantId,
        a2a_task_id: config.a2aTaskId,
        config_id: config.configId,
        ...values,
        created_at: config.createdAt,
      })
      .execute()
  }

  #whereConfig<Q extends { where: (...args: never[]) => Q }>(query: Q, tenantId: string, a2aTaskId: string, configId: string): Q {
    const q = query as unknown as { where(column: string, op: '=', value: string): typeof q }
    return q.where('tenant_id', '=', tenantId).where('a2a_task_id', '=', a2aTaskId).where('config_id', '=', configId) as unknown as Q
  }

  async getConfig(tenantId: string, a2aTaskId: string, configId: string): Promise<PushConfigRecord | undefined> {
    const row = await this.#whereConfig(this.db.selectFrom('a2a_v1_push_configs').selectAll(), tenantId, a2aTaskId, configId).executeTakeFirst()
    return row ? toConfig(row) : undefined
  }

  /** The task's configs, oldest first. */
  async configsOf(tenantId: string, a2aTaskId: string): Promise<PushConfigRecord[]> {
    const rows = await this.db
      .selectFrom('a2a_v1_push_configs')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('a2a_task_id', '=', a2aTaskId)
      .orderBy('created_at')
      .orderBy('config_id')
      .execute()
    return rows.map(toConfig)
  }

  /** Deletes the config and its deliveries (made or not). True when there was one. */
  async deleteConfig(tenantId: string, a2aTaskId: string, configId: string): Promise<boolean> {
    await this.#whereConfig(this.db.deleteFrom('a2a_v1_push_deliveries'), tenantId, a2aTaskId, configId).execute()
    const result = await this.#whereConfig(this.db.deleteFrom('a2a_v1_push_configs'), tenantId, a2aTaskId, configId).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  async insertDelivery(d: { id: string; tenantId: string; a2aTaskId: string; configId: string; body: string; createdAt: number }): Promise<void> {
    await this.db
      .insertInto('a2a_v1_push_deliveries')
      .values({
        id: d.id,
        tenant_id: d.tenantId,
        a2a_task_id: d.a2aTaskId,
        config_id: d.configId,
        body: d.body,
        status: 'pending',
        attempts: 0,
        next_attempt_at: d.createdAt,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        created_at: d.createdAt,
        finished_at: null,
      })
      .execute()
  }

  /**
   * Claims up to `limit` due deliveries for `owner` until `leaseUntil`: pending, due, not leased by anyone else, and
   * each the oldest pending one of its config (a config's events go out in order, one at a time). On PostgreSQL the
   * candidates are locked `FOR UPDATE SKIP LOCKED`, so replicas claiming at once take different rows; SQLite runs
   * one writing transaction at a time. Call it inside a transaction.
   */
  async claimDue(owner: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedDelivery[]> {
    let candidates = this.db
      .selectFrom('a2a_v1_push_deliveries as d')
      .select('d.seq')
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<=', now)]))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('a2a_v1_push_deliveries as e')
              .select('e.seq')
              .whereRef('e.tenant_id', '=', 'd.tenant_id')
              .whereRef('e.a2a_task_id', '=', 'd.a2a_task_id')
              .whereRef('e.config_id', '=', 'd.config_id')
              .where('e.status', '=', 'pending')
              .whereRef('e.seq', '<', 'd.seq'),
          ),
        ),
      )
      .orderBy('d.seq')
      .limit(limit)
    if (this.engine === 'postgres') candidates = candidates.forUpdate().skipLocked()
    const seqs = (await candidates.execute()).map((r) => Number(r.seq))
    if (seqs.length === 0) return []
    await this.db.updateTable('a2a_v1_push_deliveries').set({ lease_owner: owner, lease_until: leaseUntil }).where('seq', 'in', seqs).execute()
    const rows = await this.db.selectFrom('a2a_v1_push_deliveries').selectAll().where('seq', 'in', seqs).orderBy('seq').execute()
    return rows.map((r) => ({ ...toDelivery(r as DeliveryRow), leaseOwner: owner }))
  }

  /** Records an attempt's outcome, if `owner` still holds the lease. True when recorded. */
  async finishAttempt(seq: number, owner: string, outcome: DeliveryOutcome): Promise<boolean> {
    const base = { lease_owner: null, lease_until: null }
    const update =
      outcome.kind === 'delivered'
        ? { ...base, status: 'delivered', finished_at: outcome.at, last_error: null }
        : outcome.kind === 'failed'
          ? { ...base, status: 'failed', finished_at: outcome.at, last_error: outcome.error.slice(0, 1000) }
          : { ...base, next_attempt_at: outcome.nextAttemptAt, last_error: outcome.error.slice(0, 1000) }
    const result = await this.db
      .updateTable('a2a_v1_push_deliveries')
      .set((eb) => ({ ...update, attempts: eb('attempts', '+', 1) }))
      .where('seq', '=', seq)
      .where('lease_owner', '=', owner)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }

  /** The task's deliveries, oldest first (for tests and operators). */
  async deliveriesOf(tenantId: string, a2aTaskId: string): Promise<PushDeliveryRecord[]> {
    const rows = await this.db
      .selectFrom('a2a_v1_push_deliveries')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('a2a_task_id', '=', a2aTaskId)
      .orderBy('seq')
      .execute()
    return rows.map((r) => toDelivery(r as DeliveryRow))
  }

  /** The earliest time a pending delivery is due (null when none is pending). */
  async nextDueAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom('a2a_v1_push_deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('at'))
      .where('status', '=', 'pending')
      .executeTakeFirst()
    return row?.at === null || row?.at === undefined ? null : Number(row.at)
  }

  /** Deletes deliveries finished (delivered or failed) before `before`; how many. */
  async purgeFinished(before: number): Promise<number> {
    const result = await this.db.deleteFrom('a2a_v1_push_deliveries').where('status', '!=', 'pending').where('finished_at', '<', before).executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
