import type { Command } from 'commander'

/** True when the global `--json` flag was given (it may stand before or after the subcommand). */
export function wantsJson(command: Command): boolean {
  let current: Command | null = command
  while (current) {
    if (current.opts()['json'] === true) return true
    current = current.parent
  }
  return false
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n')
}

export function printLines(...lines: string[]): void {
  process.stdout.write(lines.join('\n') + '\n')
}

/** Sets the exit code without cutting off pending output (process.exit would). */
export function fail(code = 1): void {
  process.exitCode = code
}

/** The names of the failed checks of a verification, each once, in the order they failed: `--json`'s `failed_checks`. */
export function uniqueChecks(checks: readonly string[]): string[] {
  return [...new Set(checks)]
}

/** The last line of a failed verification in text: which checks failed, by the names `--json` gives them. */
export function failedChecksLine(checks: readonly string[]): string {
  return `  failed checks: ${checks.join(', ')}`
}
