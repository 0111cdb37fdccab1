/**
 * PostgreSQL: this process's slot among the replicas of one deployment (one schema of one database), from which
 * each replica takes its home shards (HomeShards in src/lineage/partitions.ts; docs/scaling.md, "Home shards").
 *
 * A slot is a session advisory lock held on a connection of its own, outside the pool, so it is released by
 * PostgreSQL the moment the process or that connection dies: no lease to expire, no row to clean up. Every refresh
 * lists the slots held now; a replica's rank is its slot's place among them. Only a hint for where new ids are drawn:
 * two replicas briefly disagreeing on the count cost round trips, never correctness.
 *
 * @module
 */
import type pg from 'pg'
import type { Connection } from './connect.js'
import { loadPg } from './connect.js'

/** This replica's rank among the live ones, and their number. */
export interface ReplicaRank {
  readonly rank: number
  readonly replicas: number
}

export interface ReplicaSlot {
  /** Takes a slot when it holds none (again after losing its connection) and ranks it; null when PostgreSQL cannot say. */
  refresh(): Promise<ReplicaRank | null>
  /** Releases the slot (closes its connection). */
  close(): Promise<void>
}

/** More replicas than this per deployment share the last slot's fate: none is taken, and every shard is home. */
const MAX_SLOTS = 1024

// The first key of the two-key advisory lock names the deployment (its schema), so that deployments side by side in
// one database (and test runs) count their replicas apart; the second is the slot.
const DEPLOYMENT_KEY = `(hashtext('bernstein-a2a replica ' || current_schema()) & 2147483647)`
const TRY_SLOT = `select pg_try_advisory_lock(${DEPLOYMENT_KEY}, $1::int) as taken`
const LIVE_SLOTS = `select objid::int as slot from pg_locks
  where locktype = 'advisory' and objsubid = 2 and granted
    and database = (select oid from pg_database where datname = current_database())
    and classid = ${DEPLOYMENT_KEY}::oid
  order by objid`

/** A replica slot on the pool's database (the pool's own settings, one connection more); null on SQLite. */
export function replicaSlot(connection: Connection): ReplicaSlot | null {
  if (connection.engine !== 'postgres' || connection.sharedPool === null) return null
  const settings = (connection.sharedPool as pg.Pool).options
  return new PostgresReplicaSlot(() => new (loadPg().Client)({ ...settings, pipeline: false } as pg.ClientConfig))
}

class PostgresReplicaSlot implements ReplicaSlot {
  readonly #newClient: () => pg.Client
  #held: { readonly client: pg.Client; readonly slot: number } | null = null

  constructor(newClient: () => pg.Client) {
    this.#newClient = newClient
  }

  async refresh(): Promise<ReplicaRank | null> {
    // A slot whose connection was lost since (a restart of PostgreSQL, a terminated backend) is taken again at once.
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        this.#held ??= await this.#take()
        if (this.#held === null) return null
        const { rows } = await this.#held.client.query<{ slot: number }>(LIVE_SLOTS)
        const rank = rows.findIndex((row) => Number(row.slot) === this.#held?.slot)
        if (rank < 0) throw new Error('the replica slot is no longer held')
        return { rank, replicas: rows.length }
      } catch {
        await this.close()
      }
    }
    return null
  }

  /** The lowest free slot, held on a new connection; null when all are taken. */
  async #take(): Promise<{ readonly client: pg.Client; readonly slot: number } | null> {
    const client = this.#newClient()
    // A connection lost while idle must not crash the process; the next refresh finds out and takes a slot again.
    client.on('error', () => {
      if (this.#held?.client === client) this.#held = null
    })
    try {
      await client.connect()
      for (let slot = 0; slot < MAX_SLOTS; slot++) {
        const { rows } = await client.query<{ taken: boolean }>(TRY_SLOT, [slot])
        if (rows[0]?.taken === true) return { client, slot }
      }
    } catch (error) {
      await client.end().catch(() => {})
      throw error
    }
    await client.end().catch(() => {})
    return null
  }

  async close(): Promise<void> {
    const held = this.#held
    this.#held = null
    await held?.client.end().catch(() => {})
  }
}
