import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GENESIS_PREV_HASH, buildTrackerEntry, signTrackerEntry, trackerEntryLine } from '../../../src/lineage/tracker-entry.js'
import type { TrackerEntryInput } from '../../../src/lineage/tracker-entry.js'
import { fuzzSettings } from '../../helpers/fuzz.js'

const { runs: RUNS, seed: SEED } = fuzzSettings(300)
const key = Buffer.from('00112233445566778899aabbccddeeff'.repeat(2), 'ascii')

// Strings that look like the keys being filled in, quotes, backslashes, controls and astral characters.
const tricky = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('"entry_hash":""', '"signature":""', '\\"entry_hash\\":\\"\\"', '"', '\\', '\n\t\u0000', '😀\u00e9', ''),
)
const nullable = fc.option(tricky, { nil: null })

const inputs: fc.Arbitrary<TrackerEntryInput> = fc.record({
  trackerName: tricky,
  ticketId: tricky,
  action: fc.constantFrom('claim', 'comment', 'transition', 'attach', 'fail' as const),
  actor: fc.record({ session_id: tricky, role: tricky, model: tricky }),
  inputPrompt: tricky,
  outputBlob: tricky,
  etagBefore: nullable,
  etagAfter: nullable,
  costUsd: fc.oneof(fc.constantFrom(0, 1e-7, 1e16, 0.1, -0), fc.double({ noNaN: true, noDefaultInfinity: true })),
  tokensIn: fc.oneof(fc.nat(), fc.bigInt({ min: 0n, max: 2n ** 70n })),
  tokensOut: fc.nat(),
  idempotencyKey: nullable,
  lifecycleEventId: nullable,
  failureCategory: nullable,
  failureDetail: nullable,
})

describe('signTrackerEntry', () => {
  it('makes the same entry as buildTrackerEntry, and its line is exactly trackerEntryLine without the newline', () => {
    fc.assert(
      fc.property(inputs, fc.bigInt({ min: 0n, max: 2n ** 63n }), (input, tsNs) => {
        const context = { prevEntryHash: GENESIS_PREV_HASH, key, tsNs, id: '0'.repeat(32) }
        const { entry, line } = signTrackerEntry(input, context)
        expect(entry).toEqual(buildTrackerEntry(input, context))
        expect(line + '\n').toBe(trackerEntryLine(entry))
      }),
      { numRuns: RUNS, seed: SEED },
    )
  })
})
