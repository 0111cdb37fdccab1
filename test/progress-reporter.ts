import type { Reporter, TestModule, TestSpecification, Vitest } from 'vitest/node'

/**
 * How far a run has got, for runs without a terminal (CI, a log file): vitest's default reporter prints a line
 * for each file as it finishes, but nothing says how many are left, and a full run takes many minutes. This
 * reporter adds one line after each file: `  [12/93 files, 3m05s]`. vitest.config.ts adds it to the default
 * reporter when stdout is not a terminal (a terminal gets the default reporter's live summary instead); .ci/run
 * names it beside its own reporters.
 */
export default class ProgressReporter implements Reporter {
  #vitest: Vitest | undefined
  #total = 0
  #finished = 0
  #startedAt = 0

  onInit(vitest: Vitest): void {
    this.#vitest = vitest
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.#total = new Set(specifications.map((s) => s.moduleId)).size
    this.#finished = 0
    this.#startedAt = performance.now()
  }

  onTestModuleEnd(_module: TestModule): void {
    this.#finished++
    const seconds = Math.round((performance.now() - this.#startedAt) / 1000)
    const elapsed = `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`
    this.#vitest?.logger.log(`  [${this.#finished}/${this.#total} files, ${elapsed}]`)
  }
}
