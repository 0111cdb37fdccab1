import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BUNDLE_EXTERNALS } from '../../scripts/bundle.js'
import { packageCopies, packageDirOf } from '../../scripts/dedupe-packages.js'
import { loadContract } from '../../src/http/openapi-document.js'
import { packageRoot } from '../../src/package-root.js'
import { CLI_ENTRY, spawnServer } from '../helpers/cli.js'
import { repoRoot } from '../helpers/vectors.js'

const TOKEN = 'bundle-test-operator-token-0123456789'
const workDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-bundle-'))
afterAll(() => rmSync(workDir, { recursive: true, force: true }))

describe('the single-file bundle (dist/bundle/bernstein-a2a.mjs, built by the global setup)', () => {
  it('finds the package root from the sources, the compiled modules and the bundle alike', () => {
    expect(packageRoot()).toBe(repoRoot.replace(/\/$/, ''))
  })

  it('loads the externals from node_modules instead of copying them in', () => {
    const bundle = readFileSync(CLI_ENTRY[0]!, 'utf8')
    // Booleans, not toContain: a failure must not print three megabytes of bundle.
    for (const name of BUNDLE_EXTERNALS) expect(bundle.includes(`require("${name}")`) || bundle.includes(`from"${name}"`), name).toBe(true)
    // Express's router and the validator load path-to-regexp from node_modules at run time, and share that copy.
    expect(bundle.includes('function pathToRegexp('), 'a bundled copy of path-to-regexp').toBe(false)
  })

  it('holds one copy of each package version', () => {
    const bundle = readFileSync(CLI_ENTRY[0]!, 'utf8')
    // CommonJS modules keep their path as their key in the bundle: `"node_modules/…/index.js"(exports, module) {`.
    const bundledDirs = new Set<string>()
    for (const match of bundle.matchAll(/"(node_modules\/[^"]+)"\(/g)) {
      const dir = packageDirOf(join(repoRoot, match[1]!))
      if (dir !== null) bundledDirs.add(dir)
    }
    expect(bundledDirs.size).toBeGreaterThan(50)
    const copies = packageCopies(join(repoRoot, 'node_modules'))
    const duplicated = [...copies].filter(([, dirs]) => dirs.length > 1 && dirs.some((dir) => bundledDirs.has(dir)))
    // The check means something: node_modules holds several copies of some version that the bundle uses…
    expect(duplicated.length).toBeGreaterThan(0)
    // …and the bundle took exactly one of them, the canonical (shallowest) one.
    for (const [key, dirs] of duplicated)
      expect(
        dirs.filter((dir) => bundledDirs.has(dir)),
        key,
      ).toEqual([dirs[0]])
  })

  it('serves the contract and the package version when started from another working directory', async () => {
    const server = await spawnServer({ BERNSTEIN_DATA_DIR: join(workDir, 'data'), BERNSTEIN_AUTH_TOKEN: TOKEN }, { cwd: workDir })
    try {
      const base = server.url
      const ready = await fetch(`${base}/health/ready`)
      expect(ready.status).toBe(200)
      const contract = await fetch(`${base}/openapi.json`)
      expect(await contract.text()).toBe(loadContract().jsonText)
      const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as { version?: unknown }
      expect(card.version).toBe((JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version)
      // A validated operation end to end: an unknown task is the contract's 404, a malformed id its 400-family error.
      const missing = await fetch(`${base}/tasks/does-not-exist`, { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(missing.status).toBe(404)
    } finally {
      expect((await server.stop('SIGTERM')).code).toBe(0)
    }
  })
})
