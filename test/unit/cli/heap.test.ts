import { describe, expect, it } from 'vitest'
import { SERVER_HEAP_GROWING_PERCENT, heapGrowthFlag } from '../../../src/cli/heap.js'

describe('heapGrowthFlag', () => {
  it('bounds heap growth by default', () => {
    // The README's promise: the old generation may grow to twice the live heap (V8 grows it by this percentage).
    expect(SERVER_HEAP_GROWING_PERCENT).toBe(100)
    expect(heapGrowthFlag([])).toBe(`--heap-growing-percent=${SERVER_HEAP_GROWING_PERCENT}`)
    expect(heapGrowthFlag(['--enable-source-maps', '--max-old-space-size=512'])).toBe(`--heap-growing-percent=${SERVER_HEAP_GROWING_PERCENT}`)
  })

  it('leaves an operator’s own choice on the command line alone, in either spelling', () => {
    expect(heapGrowthFlag(['--heap-growing-percent=50'])).toBeNull()
    expect(heapGrowthFlag(['--max-old-space-size=512', '--heap_growing_percent=80'])).toBeNull()
    // A different flag that merely starts the same way is not a choice of this one.
    expect(heapGrowthFlag(['--heap-growing-percentage-of-something=1'])).toBe(`--heap-growing-percent=${SERVER_HEAP_GROWING_PERCENT}`)
  })
})
