import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from './package-root.js'

let version: string | undefined

/** The package version, from the package's own `package.json`. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version
  return version
}
