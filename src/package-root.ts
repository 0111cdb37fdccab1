import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGE_NAME = 'bernstein-a2a'

let root: string | undefined

/**
 * The package's root directory (where `package.json` and `openapi.yaml` sit): the nearest ancestor of this module
 * holding bernstein-a2a's own `package.json`. Searched rather than assumed because the same code runs at three
 * depths: the sources (`src/`), the compiled modules (`dist/**`) and the single-file bundle (`dist/bundle/`).
 *
 * @throws Error when no ancestor holds the package manifest (a copied-out file, never an installed package).
 */
export function packageRoot(): string {
  if (root !== undefined) return root
  const start = dirname(fileURLToPath(import.meta.url))
  for (let dir = start; ; dir = dirname(dir)) {
    if (manifestName(join(dir, 'package.json')) === PACKAGE_NAME) return (root = dir)
    if (dirname(dir) === dir) throw new Error(`${PACKAGE_NAME}: no package.json of ${PACKAGE_NAME} above ${start}`)
  }
}

function manifestName(path: string): unknown {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown }).name
  } catch {
    return undefined
  }
}
