/**
 * Keeps the build (`dist/`, written by `npm run build`) current in a checkout, so that `npm start` and `npm run cli`
 * run the single-file bundle, which is ready in well under a second, instead of the sources through tsx (10+ s).
 * Plain JavaScript on purpose: it runs before anything is compiled, and loading tsx would cost the time saved.
 *
 * - `bin/bernstein-a2a.js` calls {@link ensureBuilt} when it runs from a checkout (a `src/` beside `dist/`);
 * - `npm install`/`npm ci` run it through the `prepare` script (`node scripts/ensure-built.mjs --prepare`);
 * - test/global-setup.ts calls it once before the suite.
 *
 * The build is current when the bundle is newer than every input (the sources, the generated contract types, the
 * build configuration). Checking takes a few milliseconds. When it is stale, `npm run build` runs with its output
 * on stderr (stdout stays the command's, e.g. `--json`), under a lock so that two starts do not build at once.
 *
 * @module
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The bundle, relative to the package root (scripts/bundle.ts writes it). */
export const BUNDLE_FILE = join('dist', 'bundle', 'bernstein-a2a.mjs')

/** What the build is made from: a change to any of these makes `dist/` stale. */
export const BUILD_INPUTS = ['src', 'generated', 'tsconfig.json', 'tsconfig.build.json', join('scripts', 'bundle.ts'), join('scripts', 'dedupe-packages.ts')]

function newestMtime(path) {
  let stat
  try {
    stat = statSync(path)
  } catch {
    return 0
  }
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = 0
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)))
  return newest
}

/**
 * Whether `dist/` is missing or older than one of {@link BUILD_INPUTS}.
 *
 * @example if (buildIsStale(root)) console.error('run npm run build')
 */
export function buildIsStale(root) {
  let built
  try {
    built = statSync(join(root, BUNDLE_FILE)).mtimeMs
  } catch {
    return true
  }
  return BUILD_INPUTS.some((input) => newestMtime(join(root, input)) >= built)
}

function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

/** Takes `dist/.build-lock` (a directory: creating it is atomic), waiting while a live process holds it. */
function lock(root) {
  const dir = join(root, 'dist', '.build-lock')
  mkdirSync(join(root, 'dist'), { recursive: true })
  for (;;) {
    try {
      mkdirSync(dir)
      writeFileSync(join(dir, 'pid'), String(process.pid))
      return () => rmSync(dir, { recursive: true, force: true })
    } catch (error) {
      if (error.code !== 'EEXIST') throw error
    }
    let holder = Number.NaN
    try {
      holder = Number(readFileSync(join(dir, 'pid'), 'utf8'))
    } catch {
      // Between the holder's mkdir and its pid file: wait.
    }
    // A holder that died mid-build (killed, power cut) leaves the lock behind: take it over.
    if (Number.isInteger(holder) && !alive(holder)) rmSync(dir, { recursive: true, force: true })
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200)
  }
}

/**
 * Builds `dist/` with `npm run build` when it is stale; returns whether it built. Build output goes to stderr.
 *
 * @throws Error when the build fails (its output has been printed above).
 * @example ensureBuilt(root, { reason: 'npm start' })
 */
export function ensureBuilt(root, { reason = 'bernstein-a2a' } = {}) {
  if (!buildIsStale(root)) return false
  const release = lock(root)
  try {
    // Another process may have built while this one waited for the lock.
    if (!buildIsStale(root)) return false
    process.stderr.write(`${reason}: dist/ is missing or older than src/; building it first (npm run build)\n`)
    const npm = process.env.npm_execpath
    const [command, args] = npm?.endsWith('.js') ? [process.execPath, [npm, 'run', '-s', 'build']] : ['npm', ['run', '-s', 'build']]
    const result = spawnSync(command, args, { cwd: root, stdio: ['ignore', 2, 2], shell: process.platform === 'win32' && command === 'npm' })
    if (result.status !== 0) throw new Error(`${reason}: the build failed (npm run build exited with ${result.status ?? result.signal}); fix it, or run the sources with npm run dev`)
    return true
  } finally {
    release()
  }
}

/** Whether the build tools are installed (not under `npm ci --omit=dev`). */
function buildToolsInstalled(root) {
  const require = createRequire(join(root, 'package.json'))
  try {
    for (const name of ['typescript/package.json', 'esbuild/package.json', 'tsx/package.json']) require.resolve(name)
    return true
  } catch {
    return false
  }
}

// `node scripts/ensure-built.mjs [--prepare]`: the `prepare` script. An install without the dev dependencies
// (`npm ci --omit=dev`, a production image that copies dist/ in) cannot build and has nothing to build with.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..')
  if (process.argv.includes('--prepare') && !buildToolsInstalled(root)) {
    process.stderr.write(`bernstein-a2a: dev dependencies not installed, not building dist/${existsSync(join(root, BUNDLE_FILE)) ? '' : ' (there is none: copy one in, or npm ci with them)'}\n`)
  } else {
    try {
      ensureBuilt(root, { reason: 'bernstein-a2a prepare' })
    } catch (error) {
      process.stderr.write(`${error.message}\n`)
      process.exitCode = 1
    }
  }
}
