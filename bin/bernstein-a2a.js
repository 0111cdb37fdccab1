#!/usr/bin/env node
// Installed entry point: runs the build (npm run build): its single-file bundle, which starts fastest, else the
// compiled modules; without a build, the TypeScript sources through tsx.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const built = [join(root, 'dist', 'bundle', 'bernstein-a2a.mjs'), join(root, 'dist', 'cli', 'main.js')].find((entry) => existsSync(entry))
if (built !== undefined) {
  await import(pathToFileURL(built).href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import(join(root, 'src', 'cli', 'main.ts'))
}
