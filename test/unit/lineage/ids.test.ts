import { describe, expect, it } from 'vitest'
import { uuid7Hex } from '../../../src/lineage/tracker-entry.js'
import { systemIds, ticketRuns } from '../../../src/runtime.js'
import { expectOneRun } from '../../helpers/ticket-runs.js'

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

describe('systemIds.shortId (Bernstein: uuid4().hex[:12])', () => {
  const ids = Array.from({ length: DRAWS }, () => systemIds.shortId())

  it('is 12 lowercase hex digits, each of its 48 bits random, and does not repeat', () => {
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}$/)
    expect(bitCounts(ids).every(isRandomBit)).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
  })
})

describe('ticketRuns (ticket ids in ascending runs)', () => {
  it('starts each run at a random 48-bit point: over 20 000 runs every bit of the first ticket is random', () => {
    const firsts = Array.from({ length: DRAWS }, () => ticketRuns()())
    for (const id of firsts) expect(id).toMatch(/^[0-9a-f]{12}$/)
    expect(bitCounts(firsts).every(isRandomBit)).toBe(true)
  })

  it('climbs by random steps of 1 to 2^16, so a run never repeats an id and sorts as it was drawn', () => {
    const next = ticketRuns()
    const values = Array.from({ length: DRAWS }, () => next())
    // 20 000 steps climb about 2^29.3, so a start that close to the top of the 48 bits (a chance of about 2^-19)
    // restarts the run once; expectOneRun allows that one step down rather than flake.
    const climbs = expectOneRun(values)
    expect(Math.min(...climbs)).toBeGreaterThanOrEqual(1)
    // The steps are random, not a counter: their mean is near 2^15 and they take thousands of values.
    const mean = climbs.reduce((a, b) => a + b, 0) / climbs.length
    expect(Math.abs(mean - 2 ** 15)).toBeLessThan(2 ** 15 * 0.05)
    expect(new Set(climbs).size).toBeGreaterThan(10_000)
    if (climbs.length === values.length - 1) expect([...values].sort()).toEqual(values)
  })

  it('starts a fresh run rather than leave the 48 bits', () => {
    const starts = [2 ** 48 - 2, 5]
    const next = ticketRuns(() => starts.shift() ?? 0)
    // The step from 2^48 - 2 is at least 1: either it lands on 2^48 - 1 or it would leave, and the run starts at 5.
    const first = next()
    expect(['ffffffffffff', '000000000005']).toContain(first)
    const after = first === 'ffffffffffff' ? next() : first
    expect(after).toBe('000000000005')
    const later = Number.parseInt(next(), 16)
    expect(later).toBeGreaterThan(5)
    expect(later).toBeLessThanOrEqual(5 + 2 ** 16)
  })

  it('is what the process draws tickets from: one run, shared by every node of the process', () => {
    const a = Number.parseInt(systemIds.ticketId(), 16)
    const b = Number.parseInt(systemIds.ticketId(), 16)
    expect(b).not.toBe(a)
    // Consecutive unless the run restarted between them (a chance of about 2^-33).
    if (b > a) expect(b - a).toBeLessThanOrEqual(2 ** 16)
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
