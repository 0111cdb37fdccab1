import { expect } from 'vitest'

/**
 * Checks that `ids`, in the order they were drawn, are 12 hex digits from one ascending run (ticketRuns in
 * src/runtime.ts): never repeated, each step 1 to 2^16, allowing one restart, which shows as one step down (a run
 * restarts only when it would leave the 48 bits, a chance the caller states for its draws). Returns the steps up.
 */
export function expectOneRun(ids: readonly string[]): number[] {
  for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}$/)
  expect(new Set(ids).size).toBe(ids.length)
  const values = ids.map((id) => Number.parseInt(id, 16))
  const steps = values.slice(1).map((value, i) => value - (values[i] as number))
  expect(steps.filter((step) => step <= 0).length).toBeLessThanOrEqual(1)
  const climbs = steps.filter((step) => step > 0)
  for (const step of climbs) expect(step).toBeLessThanOrEqual(2 ** 16)
  return climbs
}
