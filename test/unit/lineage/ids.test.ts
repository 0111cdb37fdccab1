import { describe, expect, it } from 'vitest'
import { uuid7Hex } from '../../../src/lineage/tracker-entry.js'
import { randomIds } from '../../../src/runtime.js'

const DRAWS = 20_000

/** How many of the draws have each bit set, per bit position of the hex strings. */
function bitCounts(values: readonly string[]): number[] {
  const bits = (values[0] ?? '').length * 4
  const counts = new Array<number>(bits).fill(0)
  for (const value of values) {
    for (let i = 0; i < value.length; i++) {
      const nibble = parseInt(value[i] as string, 16)
      for (let b = 0; b < 4; b++) if (nibble & (8 >> b)) counts[i * 4 + b]! += 1
    }
  }
  return counts
}

// A fair bit over 20 000 draws lands within ±5 % of half far beyond six standard deviations; a fixed bit at 0 or n.
const isRandomBit = (count: number): boolean => Math.abs(count - DRAWS / 2) < DRAWS * 0.05

describe('randomIds.shortId (Bernstein: uuid4().hex[:12])', () => {
  const ids = Array.from({ length: DRAWS }, () => randomIds.shortId())

  it('is 12 lowercase hex digits, each of its 48 bits random, and does not repeat', () => {
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}$/)
    expect(bitCounts(ids).every(isRandomBit)).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
  })
})

describe('uuid7Hex', () => {
  it('puts the milliseconds in the first 48 bits, then version 7 and the RFC 9562 variant', () => {
    const id = uuid7Hex(1_700_000_000_123.9)
    expect(id).toMatch(/^[0-9a-f]{32}$/)
    expect(id.slice(0, 12)).toBe((1_700_000_000_123).toString(16).padStart(12, '0'))
    expect(id[12]).toBe('7')
    expect('89ab').toContain(id[16])
    expect(uuid7Hex(0).slice(0, 12)).toBe('000000000000')
    expect(uuid7Hex(2 ** 48 - 1).slice(0, 12)).toBe('ffffffffffff')
  })

  it('fills the other 74 bits with randomness: 12 after the version digit, 62 after the variant bits', () => {
    const ids = Array.from({ length: DRAWS }, () => uuid7Hex(1_700_000_000_000))
    const counts = bitCounts(ids)
    const randomPositions = counts.map((_, bit) => bit).filter((bit) => (bit >= 52 && bit < 64) || bit >= 66)
    expect(randomPositions).toHaveLength(74)
    expect(randomPositions.every((bit) => isRandomBit(counts[bit] as number))).toBe(true)
    // Everything else is fixed by the timestamp, the version and the variant.
    expect(counts.filter((_, bit) => !randomPositions.includes(bit)).every((count) => count === 0 || count === DRAWS)).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('refuses a timestamp a 48-bit field cannot hold', () => {
    for (const bad of [-1, 2 ** 48, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => uuid7Hex(bad)).toThrow(RangeError)
  })
})
