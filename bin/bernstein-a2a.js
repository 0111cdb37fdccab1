#!/usr/bin/env node
// Installed entry point: runs the compiled CLI (npm run build) and falls back to the TypeScript source via tsx.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const compiled = join(root, 'dist', 'cli', 'main.js')
if (existsSync(compiled)) {
  await import(compiled)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import(join(root, 'src', 'cli', 'main.ts'))
}
