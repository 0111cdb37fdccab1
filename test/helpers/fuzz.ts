/**
 * How many generated cases a property test runs and from which seed: FUZZ_RUNS and FUZZ_SEED override the file's
 * default count and the shared fixed seed, so a failure reproduces and a long run is one variable away.
 */
export function fuzzSettings(defaultRuns: number): { readonly runs: number; readonly seed: number } {
  return { runs: Number(process.env['FUZZ_RUNS'] ?? defaultRuns), seed: Number(process.env['FUZZ_SEED'] ?? 20261130) }
}
