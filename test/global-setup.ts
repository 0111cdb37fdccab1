import { execFileSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
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
 * Builds `dist/` once before the suite when it is older than the sources. Tests that run the CLI as a process
 * spawn the compiled entry: starting it costs a fraction of transpiling the sources with tsx each time.
 */
export default function setup(): void {
  const entry = join(repoRoot, 'dist', 'cli', 'main.js')
  let built = 0
  try {
    built = statSync(entry).mtimeMs
  } catch {
    built = 0
  }
  const sources = Math.max(newestMtime(join(repoRoot, 'src')), newestMtime(join(repoRoot, 'generated')), statSync(join(repoRoot, 'tsconfig.build.json')).mtimeMs)
  if (built > sources) return
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repoRoot, stdio: 'inherit' })
}
