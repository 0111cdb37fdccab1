#!/usr/bin/env node
// Entry point (`npx bernstein-a2a`, `npm start`, `npm run cli`): runs the build's single-file bundle, which starts
// fastest. In a checkout (src/ beside dist/) the build is brought up to date first when src/ is newer; an installed
// package ships its build. Without any build, the compiled modules, else the TypeScript sources through tsx.
import { existsSync } from 'node:fs'
import module from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

// Node 22.1+ can keep V8's code for the bundle between runs (compiling its 3 MB is a good part of the start-up);
// Node 20 has no such cache, and this is a no-op there.
module.enableCompileCache?.()
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const checkout = join(root, 'scripts', 'ensure-built.mjs')
if (existsSync(join(root, 'src')) && existsSync(checkout)) {
  const { ensureBuilt } = await import(pathToFileURL(checkout).href)
  try {
    ensureBuilt(root, { reason: 'bernstein-a2a' })
  } catch (error) {
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
}
const built = [join(root, 'dist', 'bundle', 'bernstein-a2a.mjs'), join(root, 'dist', 'cli', 'main.js')].find((entry) => existsSync(entry))
if (built !== undefined) {
  await import(pathToFileURL(built).href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import(join(root, 'src', 'cli', 'main.ts'))
}
