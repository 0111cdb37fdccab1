/**
 * Partitioned chains (docs/scaling.md). The tracker-audit chain and the receipt spine are each split by tenant and,
 * within a tenant, into a fixed number of shards chosen by a hash of the ticket (task) id, so one task's entries
 * always land in one partition. Every partition is a complete Bernstein chain of its own (its own genesis, its own
 * head), stored under its own name in `chain_entries`; the signed checkpoint ties their heads together.
 *
 * The default tenant's shard 0 keeps the name the single chain had before partitioning, so the existing chain is
 * that partition, unchanged, and a node with one tenant and one shard writes exactly what it wrote before.
 *
 * @module
 */

import type { Ids } from '../runtime.js'

/** The tenant whose shard 0 is the pre-partitioning chain. */
export const LEGACY_TENANT = 'default'

/** One chain's partitioning: `shards` partitions per tenant. */
export interface PartitionScheme {
  readonly shards: number
}

/** Partitions of one chain kind share the legacy name as prefix: `<legacy>/<tenant>/<shard>`. */
const SEPARATOR = '/'

// FNV-1a, 32 bits: cheap, stable across processes and versions (a partition's name must never change for a key).
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash
}

/** The shard of a ticket within its tenant (0 when there is one shard). */
export function shardOf(ticketId: string, shards: number): number {
  return shards <= 1 ? 0 : fnv1a(ticketId) % shards
}

/**
 * The partition (its chain name) that a tenant's ticket is appended to. `legacyName` is the chain's name before
 * partitioning (`tracker-audit`, `spine:a2a-inbound-responses`).
 */
export function partitionName(legacyName: string, tenantId: string, shard: number): string {
  if (tenantId === LEGACY_TENANT && shard === 0) return legacyName
  return `${legacyName}${SEPARATOR}${encodeURIComponent(tenantId)}${SEPARATOR}${shard}`
}

/** Whether a stored chain name is `legacyName` itself or one of its partitions. */
export function isPartitionOf(chain: string, legacyName: string): boolean {
  return chain === legacyName || chain.startsWith(legacyName + SEPARATOR)
}

/** The partition of `ticketId` for a tenant under a scheme. */
export function partitionFor(legacyName: string, scheme: PartitionScheme, tenantId: string, ticketId: string): string {
  return partitionName(legacyName, tenantId, shardOf(ticketId, scheme.shards))
}

/** Sorts partition names with the legacy one first, then by name (a stable order for export and verification). */
export function comparePartitions(legacyName: string): (a: string, b: string) => number {
  return (a, b) => (a === b ? 0 : a === legacyName ? -1 : b === legacyName ? 1 : a < b ? -1 : 1)
}

/**
 * The shards this replica draws new ticket ids in (docs/scaling.md, "Home shards"). Replicas sharing one PostgreSQL
 * each take a slot (src/store/replica-slot.ts) and draw the ids of the tasks they create in their own share of the
 * shards, so that each partition is written by one replica and its head stays where that replica left it: its
 * appends then travel with the COMMIT instead of being checked in a round trip of their own. Only a hint: any replica
 * may still append to any partition (a task created elsewhere, changed here), the chains stay correct either way.
 */
export class HomeShards {
  readonly shards: number
  #rank = 0
  #replicas = 1

  constructor(shards: number) {
    this.shards = shards
  }

  /** This replica is `rank` (0-based) of `replicas` live ones; `replicas` ≤ 1 makes every shard home. */
  assign(rank: number, replicas: number): void {
    this.#replicas = Math.max(1, Math.floor(replicas))
    this.#rank = Math.min(Math.max(0, Math.floor(rank)), this.#replicas - 1)
  }

  /** The rank and count last assigned. */
  get assignment(): { readonly rank: number; readonly replicas: number } {
    return { rank: this.#rank, replicas: this.#replicas }
  }

  /**
   * Whether new tickets may be drawn in `shard`: its index modulo the replicas is this one's rank (with more replicas
   * than shards, each shares the one shard its rank falls on).
   */
  owns(shard: number): boolean {
    if (this.#replicas <= 1 || this.shards <= 1) return true
    return this.#replicas <= this.shards ? shard % this.#replicas === this.#rank : shard === this.#rank % this.shards
  }
}

/**
 * `base`, with ticket ids drawn until their shard is home: about shards ÷ home shards draws (3 for 3 replicas), each
 * id still uniformly random among those of its home (log2 of that ratio bits fewer than a shortId: 1.6 for 3).
 */
export function homeIds(base: Ids, home: HomeShards): Ids {
  return {
    shortId: () => base.shortId(),
    ticketId: () => {
      for (;;) {
        const id = base.ticketId()
        if (home.owns(shardOf(id, home.shards))) return id
      }
    },
  }
}
