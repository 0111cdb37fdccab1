/**
 * The README's first promise: `npm start` serves on the embedded default, and stopping it stops the server. npm
 * runs the script through `sh -c`, which does not pass SIGTERM on; the script therefore `exec`s node, so that the
 * signal npm forwards reaches the server itself and no orphan keeps the port. It runs the build's bundle (through
 * bin/), which the global setup has made current, so it does not build again.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BUNDLE_FILE, buildIsStale } from '../../scripts/ensure-built.mjs'
import { repoRoot } from '../helpers/vectors.js'

const dirs: string[] = []
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
})

async function answers(url: string): Promise<number | null> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).status
  } catch {
    return null
  }
}

describe('npm start', () => {
  it('serves on SQLite in a fresh data directory, and SIGTERM to npm stops the server (exit 0, port free)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'bernstein-a2a-npm-start-'))
    dirs.push(dataDir)
    const npm = spawn('npm', ['start'], {
      cwd: repoRoot,
      env: { ...process.env, BERNSTEIN_PORT: '0', BERNSTEIN_DATA_DIR: dataDir, BERNSTEIN_FEDERATION_POLL_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    npm.stdout.on('data', (c: Buffer) => (output += c.toString()))
    npm.stderr.on('data', (c: Buffer) => (output += c.toString()))
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)))
    // It listens on loopback, on the port the kernel gives it, and says where; then polls until ready. vitest's
    // timeout bounds a server that never comes up.
    const listening = /bernstein-a2a listening on (http:\/\/127\.0\.0\.1:[1-9]\d*)\n/
    while (!listening.test(output)) {
      if (npm.exitCode !== null) throw new Error(`npm start exited: ${output}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    const url = listening.exec(output)?.[1] ?? ''
    const health = `${url}/health/ready`
    while ((await answers(health)) !== 200) {
      if (npm.exitCode !== null) throw new Error(`npm start exited: ${output}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(output).not.toContain('building it first')
    const res = await fetch(`${url}/health/ready`)
    expect(await res.json()).toEqual({ status: 'ready', reason: 'database reachable' })

    npm.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(output).toContain('shutting down: draining in-flight requests')
    // Nothing is left listening: the server itself received the signal and closed.
    expect(await answers(health)).toBeNull()
  }, 120_000)
})

describe('the build check npm start and npm run cli make (scripts/ensure-built.mjs)', () => {
  it('calls dist/ stale when it is missing or older than any input, current when newer than all', () => {
    const root = mkdtempSync(join(tmpdir(), 'bernstein-a2a-ensure-built-'))
    dirs.push(root)
    const at = (path: string, seconds: number, text = ''): void => {
      mkdirSync(join(root, path, '..'), { recursive: true })
      writeFileSync(join(root, path), text)
      utimesSync(join(root, path), seconds, seconds)
    }
    at('src/cli/main.ts', 1_000)
    at('tsconfig.build.json', 1_000)
    expect(buildIsStale(root)).toBe(true)
    at(BUNDLE_FILE, 2_000)
    expect(buildIsStale(root)).toBe(false)
    at('src/deep/er/module.ts', 3_000)
    expect(buildIsStale(root)).toBe(true)
    at(BUNDLE_FILE, 4_000)
    at('generated/openapi.d.ts', 5_000)
    expect(buildIsStale(root)).toBe(true)
  })
})
