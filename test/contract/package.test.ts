import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/vectors.js'
import { OPERATOR_TOKEN, type TestApp, startTestApp } from '../helpers/test-app.js'

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: { ...process.env, ...options.env }, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')

/** A consumer project as a downstream developer would have it: strict NodeNext, library types checked too. */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    types: ['node'],
    outDir: 'out',
  },
}

const CONSUMER = `import { createApiClient, fetchAndVerifyPeerCard, sendAndWait, verifyTaskReceipt, type components } from 'bernstein-a2a/client'

type Task = components['schemas']['Task']

const baseUrl = process.env['BASE_URL'] as string
const client = createApiClient({ baseUrl, token: process.env['TOKEN'] })
const v1 = createApiClient({ baseUrl: baseUrl + '/api/v1', token: process.env['TOKEN'], tenant: 'default' })

const created = await client.POST('/tasks', { body: { title: 'Add a health check', role: 'backend' } })
if (created.error) throw new Error('create failed: ' + created.response.status)
const task: Task = created.data
const fetched = await v1.GET('/tasks/{task_id}', { params: { path: { task_id: task.id } } })
const missing = await client.GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } })

const waited = await sendAndWait(client, { sender: 'peer@globex', message: 'Fix the flaky test' }, {
  initialDelayMs: 20,
  sleep: async () => {
    const next = await client.GET('/tasks/next/{role}', { params: { path: { role: 'backend' } } })
    if (next.data) await client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: next.data.id } }, body: { result_summary: 'done' } })
  },
})
const jwks: unknown = await (await fetch(baseUrl + '/.well-known/agent.json/keys')).json()
const receipt = waited.ok ? await verifyTaskReceipt(waited.value.responseText, { jwks }) : null
const card = await fetchAndVerifyPeerCard(baseUrl, {
  trustedIssuerFingerprints: [process.env['FINGERPRINT'] as string],
  requirements: { maxCostCapUsd: 100, minRedactionTier: 'basic', minSandboxProfile: 'process' },
})
console.log(JSON.stringify({
  created: created.response.status,
  fetchedTitle: fetched.data?.title,
  missing: { status: missing.response.status, detail: missing.error?.detail },
  waited: waited.ok ? waited.value.status : waited.code,
  receipt: receipt?.ok,
  card: card.ok ? card.value.fingerprint : card.code,
}))
`

const WRONG = `import { createApiClient } from 'bernstein-a2a/client'

const client = createApiClient({ baseUrl: 'http://127.0.0.1:8052' })
await client.POST('/a2a/tasks/send', { body: { sender: 'peer', mesage: 'typo in a field name' } })
await client.GET('/a2a/tasks/{a2a_task_id}/history', { params: { path: { a2a_task_id: 'x' } } })
`

describe('the built package, consumed as bernstein-a2a/client', () => {
  let project: string
  let build: Run
  let app: TestApp
  beforeAll(async () => {
    build = await run('npm', ['run', '-s', 'build'], { cwd: repoRoot })
    project = mkdtempSync(join(tmpdir(), 'bernstein-a2a-consumer-'))
    mkdirSync(join(project, 'node_modules', '@types'), { recursive: true })
    // The package as npm would link it; its own dependencies resolve from the repository's node_modules.
    symlinkSync(repoRoot, join(project, 'node_modules', 'bernstein-a2a'), 'dir')
    symlinkSync(join(repoRoot, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'), 'dir')
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ ...TSCONFIG, files: ['consumer.ts'] }))
    writeFileSync(
      join(project, 'tsconfig.wrong.json'),
      JSON.stringify({ ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, noEmit: true }, files: ['wrong.ts'] }),
    )
    writeFileSync(join(project, 'consumer.ts'), CONSUMER)
    writeFileSync(join(project, 'wrong.ts'), WRONG)
    app = await startTestApp()
  }, 300_000)
  afterAll(async () => {
    await app?.close()
    if (project) rmSync(project, { recursive: true, force: true })
  })

  it('builds with declarations (npm run build)', () => {
    expect(build.stderr + build.stdout).toBe('')
    expect(build.code).toBe(0)
  })

  it('compiles a consumer program against the built declarations, and the program runs against a server', async () => {
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project })
    expect(compiled.stdout + compiled.stderr).toBe('')
    expect(compiled.code).toBe(0)
    const { keyFingerprint } = await import('../../src/crypto/fingerprint.js')
    const fingerprint = keyFingerprint(app.keys.capabilityCard.publicKey)
    const ran = await run(process.execPath, ['out/consumer.js'], { cwd: project, env: { BASE_URL: app.url, TOKEN: OPERATOR_TOKEN, FINGERPRINT: fingerprint } })
    expect(ran.stderr).toBe('')
    expect(JSON.parse(ran.stdout)).toEqual({
      created: 201,
      fetchedTitle: 'Add a health check',
      missing: { status: 404, detail: "Task 'ffffffffffff' not found" },
      waited: 'completed',
      receipt: true,
      card: fingerprint,
    })
  }, 120_000)

  it('refuses a wrong body field and an unknown path at compile time', async () => {
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.wrong.json'], { cwd: project })
    expect(compiled.code).not.toBe(0)
    const errors = compiled.stdout.split('\n').filter((l) => l.startsWith('wrong.ts('))
    expect(errors).toHaveLength(2)
    expect(errors[0]).toMatch(
      /^wrong\.ts\(4,\d+\): error TS2561: Object literal may only specify known properties, but 'mesage' does not exist in type .*Did you mean to write 'message'\?/,
    )
    expect(errors[1]).toMatch(/^wrong\.ts\(5,\d+\): error TS2345: Argument of type '"\/a2a\/tasks\/\{a2a_task_id\}\/history"' is not assignable/)
  }, 120_000)
})
