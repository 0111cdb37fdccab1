import { execFileSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { bundleCli, bundlePath } from '../scripts/bundle.js'
import { repoRoot } from './helpers/vectors.js'

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

/**
 * Builds `dist/` (as `npm run build` does: compiled modules, then the single-file bundle) once before the suite when
 * it is older than the sources. Tests that run the CLI as a process spawn the bundle, the entry `bin/` runs.
 */
export default async function setup(): Promise<void> {
  const entry = bundlePath(repoRoot)
  let built = 0
  try {
    built = statSync(entry).mtimeMs
  } catch {
    built = 0
  }
  const sources = Math.max(newestMtime(join(repoRoot, 'src')), newestMtime(join(repoRoot, 'generated')), statSync(join(repoRoot, 'tsconfig.build.json')).mtimeMs, statSync(join(repoRoot, 'scripts', 'bundle.ts')).mtimeMs)
  if (built > sources) return
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repoRoot, stdio: 'inherit' })
  await bundleCli(repoRoot)
}
