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
  return (a, b) => (a === legacyName ? -1 : b === legacyName ? 1 : a < b ? -1 : a > b ? 1 : 0)
}
