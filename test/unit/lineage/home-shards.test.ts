/**
 * Home shards (docs/scaling.md): a replica ranked among others draws new ticket ids only in its share of the shards,
 * the shares of all replicas are disjoint and cover every shard, and the ids stay random 12-hex shortIds.
 */
import { describe, expect, it } from 'vitest'
import { HomeShards, homeIds, shardOf } from '../../../src/lineage/partitions.js'
import { systemIds } from '../../../src/runtime.js'

const homeOf = (shards: number, rank: number, replicas: number): number[] => {
  const home = new HomeShards(shards)
  home.assign(rank, replicas)
  return Array.from({ length: shards }, (_, s) => s).filter((s) => home.owns(s))
}

describe('HomeShards', () => {
  it('owns every shard until it is ranked among several replicas', () => {
    expect(homeOf(64, 0, 1)).toHaveLength(64)
    expect(new HomeShards(8).assignment).toEqual({ rank: 0, replicas: 1 })
    expect(homeOf(1, 2, 3)).toEqual([0])
  })

  it('splits the shards among replicas: disjoint shares that cover all of them, evenly', () => {
    for (const replicas of [2, 3, 5, 64]) {
      const shares = Array.from({ length: replicas }, (_, rank) => homeOf(64, rank, replicas))
      expect(shares.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, s) => s))
      const sizes = shares.map((share) => share.length)
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1)
    }
  })

  it('with more replicas than shards, each replica has exactly one shard, shared with others', () => {
    const shares = Array.from({ length: 10 }, (_, rank) => homeOf(4, rank, 10))
    expect(shares.map((share) => share.length)).toEqual(shares.map(() => 1))
    expect(new Set(shares.flat())).toEqual(new Set([0, 1, 2, 3]))
  })

  it('clamps a rank outside the replicas into them', () => {
    const home = new HomeShards(16)
    home.assign(7, 3)
    expect(home.assignment).toEqual({ rank: 2, replicas: 3 })
    home.assign(-1, 0)
    expect(home.assignment).toEqual({ rank: 0, replicas: 1 })
  })
})

describe('homeIds', () => {
  it('draws ticket ids in the home shards only, still 12 hex digits that never repeat; other ids are untouched', () => {
    const home = new HomeShards(64)
    home.assign(1, 3)
    const ids = homeIds(systemIds, home)
    const drawn = Array.from({ length: 3000 }, () => ids.ticketId())
    for (const id of drawn) expect(id).toMatch(/^[0-9a-f]{12}$/)
    expect(new Set(drawn).size).toBe(drawn.length)
    const shards = new Set(drawn.map((id) => shardOf(id, 64)))
    for (const shard of shards) expect(home.owns(shard)).toBe(true)
    // Every home shard is drawn (21 of them, ~143 draws each): the ids are spread over the whole share.
    expect(shards.size).toBe(21)
    const others = Array.from({ length: 3000 }, () => ids.shortId())
    expect(new Set(others.map((id) => shardOf(id, 64))).size).toBe(64)
  })

  it('follows the assignment as it changes', () => {
    const home = new HomeShards(8)
    const ids = homeIds(systemIds, home)
    home.assign(0, 2)
    for (let i = 0; i < 200; i++) expect(shardOf(ids.ticketId(), 8) % 2).toBe(0)
    home.assign(1, 2)
    for (let i = 0; i < 200; i++) expect(shardOf(ids.ticketId(), 8) % 2).toBe(1)
  })
})
