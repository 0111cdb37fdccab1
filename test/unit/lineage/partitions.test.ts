/** Partition names and their order (src/lineage/partitions.ts). */
import { describe, expect, it } from 'vitest'
import { comparePartitions, isPartitionOf, partitionName } from '../../../src/lineage/partitions.js'

describe('partition order', () => {
  it('puts the legacy partition first, then by name, and keeps equal names in their order (a stable sort of lines)', () => {
    const byPartition = comparePartitions('tracker-audit')
    const lines = [
      { chain: 'tracker-audit/default/2', n: 1 },
      { chain: 'tracker-audit', n: 1 },
      { chain: 'tracker-audit/acme/0', n: 1 },
      { chain: 'tracker-audit', n: 2 },
      { chain: 'tracker-audit/default/2', n: 2 },
      { chain: 'tracker-audit', n: 3 },
    ]
    expect([...lines].sort((a, b) => byPartition(a.chain, b.chain)).map((l) => `${l.chain}#${l.n}`)).toEqual([
      'tracker-audit#1',
      'tracker-audit#2',
      'tracker-audit#3',
      'tracker-audit/acme/0#1',
      'tracker-audit/default/2#1',
      'tracker-audit/default/2#2',
    ])
    expect(byPartition('tracker-audit', 'tracker-audit')).toBe(0)
  })

  it('names partitions under the legacy name, the default tenant shard 0 being the legacy chain itself', () => {
    expect(partitionName('tracker-audit', 'default', 0)).toBe('tracker-audit')
    expect(partitionName('tracker-audit', 'a/b', 3)).toBe('tracker-audit/a%2Fb/3')
    expect(isPartitionOf('tracker-audit/a%2Fb/3', 'tracker-audit')).toBe(true)
    expect(isPartitionOf('tracker-auditx', 'tracker-audit')).toBe(false)
  })
})
