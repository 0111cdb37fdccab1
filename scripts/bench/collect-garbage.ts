/**
 * A full garbage collection when the process runs with `--expose-gc` (the baselines do, see systems.ts), so that a
 * baseline whose store was just emptied starts its next run without the old store's heap still to collect.
 */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc
  if (typeof gc === 'function') gc()
}
