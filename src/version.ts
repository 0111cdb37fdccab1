import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

let version: string | undefined

/** The package version (package.json sits one level above this module in both `src/` and `dist/`). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '..', 'package.json'), 'utf8')) as { version: string }).version
  return version
}
