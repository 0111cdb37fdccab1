/**
 * The client package as a peer gets it: `npm pack` in packages/client (which builds it, prepack), the tarball
 * installed from the registry's dependencies into a fresh project, a strict TypeScript program checked against its
 * declarations and run against a live node. What it must not bring: the server's dependencies (database drivers,
 * express, the validator, the logger, metrics) and install scripts.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { OPERATOR_TOKEN, type TestApp, startTestApp } from '../helpers/test-app.js'
import { repoRoot } from '../helpers/vectors.js'

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** npm run by a test inherits npm's own variables (`npm_config_local_prefix` would point npm back at this repository). */
function withoutNpmVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !/^npm_/i.test(key) && key !== 'INIT_CWD'))
}

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: { ...withoutNpmVariables(process.env), ...options.env }, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

const packageDir = join(repoRoot, 'packages', 'client')
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')

/** What a peer's install holds: the client and what it verifies with, nothing of the server. */
const EXPECTED_TREE = [
  '@bernstein-a2a/client',
  'canonicalize',
  'http-message-signatures',
  'jose',
  'lossless-json',
  'openapi-fetch',
  'openapi-typescript-helpers',
  'structured-headers',
]
const SERVER_ONLY = [
  'better-sqlite3',
  'pg',
  'kysely',
  'express',
  'express-openapi-validator',
  'pino',
  'prom-client',
  'helmet',
  'commander',
  'swagger-ui-dist',
  'tsx',
  'yaml',
]

const TSCONFIG = {
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, types: ['node'], outDir: 'out' },
}

const PROGRAM = `import { createApiClient, fetchAndVerifyPeerCard, sendAndWait, verifyTaskReceipt, type A2ATaskStatus, type A2AReceipt } from '@bernstein-a2a/client'

const baseUrl = process.env['BASE_URL'] as string
const receiptKey = process.env['RECEIPT_FINGERPRINT'] as string
const client = createApiClient({ baseUrl, token: process.env['TOKEN'] })

function describe(status: A2ATaskStatus): string {
  switch (status) {
    case 'submitted': case 'working': case 'input-required': case 'auth-required': return 'open'
    case 'completed': case 'failed': case 'canceled': return 'final'
  }
}

const sent = await client.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'Fix the flaky test' } })
const receipt: A2AReceipt | null | undefined = sent.data?.receipt
const sentVerdict = await verifyTaskReceipt(sent, { trustedFingerprints: [receiptKey] })

const waited = await sendAndWait(client, { sender: 'peer@globex', message: 'and wait for it' }, {
  initialDelayMs: 20,
  verify: { trustedFingerprints: [receiptKey] },
  sleep: async () => {
    const next = await client.GET('/tasks/next/{role}', { params: { path: { role: 'backend' } } })
    if (next.data) await client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: next.data.id } }, body: { result_summary: 'done' } })
  },
})
const card = await fetchAndVerifyPeerCard(baseUrl, {
  trustedFingerprints: [process.env['CARD_FINGERPRINT'] as string],
  requireCostCapUsd: 100,
  requireRedactionTier: 'basic',
  requireSandboxProfile: 'process',
})
console.log(JSON.stringify({
  sent: sent.data ? describe(sent.data.status) : sent.response.status,
  receiptKid: receipt?.kid.startsWith('a2a-server-lineage-'),
  sentVerified: sentVerdict.ok,
  waited: waited.ok ? [waited.value.status, waited.value.verification?.ok] : waited.code,
  card: card.ok ? card.value.fingerprint : card.code,
}))
`

const WRONG = `import { createApiClient } from '@bernstein-a2a/client'

const client = createApiClient({ baseUrl: 'http://127.0.0.1:8052' })
const { data } = await client.GET('/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: 'x' } } })
if (data?.status === 'done') console.log('not an A2A status')
console.log(data?.receipt?.entry_hsh)
`

/** Every package under node_modules (nested ones too), with its manifest. */
function installed(nodeModules: string): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>()
  const visit = (dir: string): void => {
    if (!existsSync(dir)) return
    for (const entry of readdirSync(dir)) {
      if (entry.startsWith('.')) continue
      const names = entry.startsWith('@') ? readdirSync(join(dir, entry)).map((n) => `${entry}/${n}`) : [entry]
      for (const name of names) {
        const manifest = JSON.parse(readFileSync(join(dir, name, 'package.json'), 'utf8')) as Record<string, unknown>
        found.set(name, { ...manifest, __dir: join(dir, name) })
        visit(join(dir, name, 'node_modules'))
      }
    }
  }
  visit(nodeModules)
  return found
}

describe('the client package (@bernstein-a2a/client), packed and installed alone', () => {
  let work: string
  let pack: Run
  let packed: { filename: string; size: number; unpackedSize: number; files: { path: string }[] }
  let install: Run
  let app: TestApp
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'bernstein-a2a-client-package-'))
    pack = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: packageDir })
    packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!
    const project = join(work, 'consumer')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
    install = await run('npm', ['install', '--no-audit', '--no-fund', join(work, packed.filename)], { cwd: project })
    // Type definitions for node, as the consumer's own dev dependency would provide them (after the install, which would prune it).
    mkdirSync(join(project, 'node_modules', '@types'), { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'), 'dir')
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ ...TSCONFIG, files: ['program.ts'] }))
    writeFileSync(
      join(project, 'tsconfig.wrong.json'),
      JSON.stringify({ ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, noEmit: true }, files: ['wrong.ts'] }),
    )
    writeFileSync(join(project, 'program.ts'), PROGRAM)
    writeFileSync(join(project, 'wrong.ts'), WRONG)
    app = await startTestApp()
  }, 600_000)
  afterAll(async () => {
    await app?.close()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  const project = () => join(work, 'consumer')

  it('packs its build (prepack): the compiled client with declarations and the contract types, no sources', () => {
    expect(pack.code, pack.stderr).toBe(0)
    const paths = packed.files.map((f) => f.path)
    for (const file of ['package.json', 'README.md', 'dist/LICENSE', 'dist/src/client/index.js', 'dist/src/client/index.d.ts', 'dist/generated/openapi.d.ts'])
      expect(paths).toContain(file)
    expect(paths.filter((p) => !p.startsWith('dist/') && !['package.json', 'README.md'].includes(p))).toEqual([])
    expect(paths.filter((p) => /\.ts$/.test(p) && !p.endsWith('.d.ts'))).toEqual([])
    // For the report: what a peer downloads.
    console.log(`client tarball: ${packed.filename}, ${packed.size} bytes packed, ${packed.unpackedSize} unpacked, ${paths.length} files`)
  })

  it('imports nothing but its declared dependencies and node: built-ins', () => {
    const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>
      scripts: Record<string, string>
    }
    const allowed = new Set([...Object.keys(manifest.dependencies), ...builtinModules])
    const bare = new Set<string>()
    const dist = join(project(), 'node_modules', '@bernstein-a2a', 'client', 'dist')
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(join(dir, entry.name))
        else if (/\.(js|d\.ts)$/.test(entry.name)) {
          for (const m of readFileSync(join(dir, entry.name), 'utf8').matchAll(/\bfrom\s+'([^'.][^']*)'|\bimport\(\s*'([^'.][^']*)'\s*\)/g))
            bare.add((m[1] ?? m[2])!)
        }
      }
    }
    walk(dist)
    const packageOf = (specifier: string) =>
      specifier.startsWith('node:')
        ? specifier.slice(5)
        : specifier
            .split('/')
            .slice(0, specifier.startsWith('@') ? 2 : 1)
            .join('/')
    expect([...bare].map(packageOf).filter((name) => !allowed.has(name))).toEqual([])
    expect(bare.size).toBeGreaterThan(3)
    // Only a build step before packing; nothing runs on a peer's machine.
    expect(Object.keys(manifest.scripts).filter((s) => /^(pre|post)?install$|^prepare$/.test(s))).toEqual([])
  })

  it('installs from the tarball with only what a peer needs: no server dependency, no install script', () => {
    expect(install.code, install.stderr).toBe(0)
    const tree = installed(join(project(), 'node_modules'))
    tree.delete('@types/node')
    expect([...tree.keys()].sort()).toEqual(EXPECTED_TREE)
    for (const name of SERVER_ONLY) expect(tree.has(name), name).toBe(false)
    for (const [name, manifest] of tree) {
      const scripts = (manifest['scripts'] ?? {}) as Record<string, string>
      expect(
        Object.keys(scripts).filter((s) => ['preinstall', 'install', 'postinstall'].includes(s)),
        name,
      ).toEqual([])
      // npm runs `node-gyp rebuild` for a package with a binding.gyp and no install script of its own.
      expect(existsSync(join(manifest['__dir'] as string, 'binding.gyp')), name).toBe(false)
    }
    const lock = JSON.parse(readFileSync(join(project(), 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> }
    expect(
      Object.entries(lock.packages)
        .filter(([, p]) => p.hasInstallScript)
        .map(([path]) => path),
    ).toEqual([])
    console.log(`client install: ${tree.size} packages (${[...tree.keys()].sort().join(', ')})`)
  })

  it('type-checks a strict program against its declarations, which runs against a live node and verifies its receipts', async () => {
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project() })
    expect(compiled.stdout + compiled.stderr).toBe('')
    expect(compiled.code).toBe(0)
    const env = {
      BASE_URL: app.url,
      TOKEN: OPERATOR_TOKEN,
      RECEIPT_FINGERPRINT: keyFingerprint(app.keys.receipt.publicKey),
      CARD_FINGERPRINT: keyFingerprint(app.keys.capabilityCard.publicKey),
    }
    const ran = await run(process.execPath, ['out/program.js'], { cwd: project(), env })
    expect(ran.stderr).toBe('')
    expect(JSON.parse(ran.stdout)).toEqual({ sent: 'open', receiptKid: true, sentVerified: true, waited: ['completed', true], card: env.CARD_FINGERPRINT })
  }, 120_000)

  it("refuses a status outside the contract's union and a receipt field it does not have, at compile time", async () => {
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.wrong.json'], { cwd: project() })
    expect(compiled.code).not.toBe(0)
    const errors = compiled.stdout.split('\n').filter((l) => l.startsWith('wrong.ts('))
    expect(errors).toHaveLength(2)
    expect(errors[0]).toMatch(
      /^wrong\.ts\(5,\d+\): error TS2367: This comparison appears to be unintentional because the types .* and '"done"' have no overlap/,
    )
    expect(errors[1]).toMatch(/^wrong\.ts\(6,\d+\): error TS2551: Property 'entry_hsh' does not exist on type .*Did you mean 'entry_hash'\?/)
  }, 120_000)

  it('is the module bernstein-a2a/client re-exports', async () => {
    const reexport = (await import(pathToFileURL(join(repoRoot, 'client', 'index.js')).href)) as Record<string, unknown>
    const own = (await import(pathToFileURL(join(packageDir, 'dist', 'src', 'client', 'index.js')).href)) as Record<string, unknown>
    expect(Object.keys(reexport).sort()).toEqual(Object.keys(own).sort())
    for (const name of Object.keys(own)) expect(reexport[name], name).toBe(own[name])
  })
})
