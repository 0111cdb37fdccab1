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
