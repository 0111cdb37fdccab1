/**
 * Builds the package into dist/: `tsc -p tsconfig.json` compiles src/client/index.ts and exactly what it imports
 * (src/cards, src/crypto, src/canonical, src/receipts…: one source, shared with the server), with declarations;
 * then the contract's types, generated/openapi.d.ts, which tsc never copies and the declarations import; and the
 * licence. Runs on `npm pack` (prepack) and from the root's `npm run build`.
 *
 * The new dist/ replaces the old one by renames, so that a program compiling against it while a build runs (the
 * root's and the package's tests do) reads a whole build, old or new.
 */
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..')
const root = join(pkg, '..', '..')
const staging = join(pkg, `dist.${process.pid}.partial`)
const retired = join(pkg, `dist.${process.pid}.old`)
const dist = join(pkg, 'dist')

rmSync(staging, { recursive: true, force: true })
const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc')
const compiled = spawnSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.json'), '--outDir', staging], { stdio: 'inherit' })
if (compiled.status !== 0) {
  rmSync(staging, { recursive: true, force: true })
  process.exit(compiled.status ?? 1)
}
mkdirSync(join(staging, 'generated'), { recursive: true })
copyFileSync(join(root, 'generated', 'openapi.d.ts'), join(staging, 'generated', 'openapi.d.ts'))
copyFileSync(join(root, 'LICENSE'), join(staging, 'LICENSE'))

let hadDist = true
try {
  renameSync(dist, retired)
} catch (error) {
  if (error.code !== 'ENOENT') throw error
  hadDist = false
}
renameSync(staging, dist)
if (hadDist) rmSync(retired, { recursive: true, force: true })
