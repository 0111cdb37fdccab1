import { execFile } from 'node:child_process'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { type RunningPrism, startPrism } from '../helpers/prism.js'
import { OPERATOR_TOKEN, type TestApp, startTestApp } from '../helpers/test-app.js'
import { repoRoot } from '../helpers/vectors.js'

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `npx tsx examples/<name>.ts`, as the README says, with the server's URL and token in the environment. */
function example(name: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', `examples/${name}.ts`],
      { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr })
      },
    )
  })
}

describe('the README examples run', () => {
  let app: TestApp
  let env: Record<string, string>
  beforeAll(async () => {
    app = await startTestApp({ metricsRegistry: new Registry() })
    env = { BERNSTEIN_URL: app.url, BERNSTEIN_TOKEN: OPERATOR_TOKEN }
  })
  afterAll(async () => app.close())

  it('typed-client.ts: create, list, read through /api/v1, a 404 as data', async () => {
    const run = await example('typed-client', env)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(
      /^created task [0-9a-f]{12}: open, version 1\nopen tasks on the first page: [1-5]\nread back through \/api\/v1: Add a health check\nunknown task: 404 Task 'ffffffffffff' not found\n$/,
    )
  })

  it('send-and-wait.ts: the task completes and its receipt verifies', async () => {
    const run = await example('send-and-wait', env)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(
      /^task [0-9a-f]{12} completed after \d+ polls: result\nreceipt verified: key a2a-server-lineage-[0-9a-f]{16}, entry sha256:[0-9a-f]{64}\n$/,
    )
    // Pinned by the receipt key's fingerprint, the client fetches the JWKS itself.
    const pinned = await example('send-and-wait', { ...env, RECEIPT_FINGERPRINT: keyFingerprint(app.keys.receipt.publicKey) })
    expect(pinned.stderr).toBe('')
    expect(pinned.stdout).toMatch(
      /^task [0-9a-f]{12} completed after \d+ polls: result\nreceipt verified: key a2a-server-lineage-[0-9a-f]{16}, entry sha256:[0-9a-f]{64}\n$/,
    )
  })

  it('verify-peer-card.ts: trusted with the pinned fingerprint, refused without', async () => {
    const fingerprint = keyFingerprint(app.keys.capabilityCard.publicKey)
    const trusted = await example('verify-peer-card', { ...env, PEER_FINGERPRINT: fingerprint })
    expect(trusted.code).toBe(0)
    expect(trusted.stdout).toBe(`trusted: test-node (${fingerprint}), cost cap 10 USD, standard redaction, container sandbox\n`)
    const refused = await example('verify-peer-card', env)
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe(`refused: untrusted_issuer: card key fingerprint ${fingerprint} is not in the trusted-issuer set\n`)
  })

  it('request-id.ts: the id is echoed, or made up', async () => {
    const run = await example('request-id', env)
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^status 404, X-Request-Id (example-\d+) \(sent \1\)\nwithout one, the server made one up: [0-9a-f-]{36}\n$/)
  })

  it('metrics.ts: prints the bernstein_* series', async () => {
    const run = await example('metrics', env)
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('bernstein_tasks{status="open"} ')
    expect(run.stdout).toContain('bernstein_chain_length{chain="tracker-audit"} ')
    expect(run.stdout).toMatch(/bernstein_http_requests_total\{operation_id="\w+",method="GET",status="\d+"\} \d+/)
    const refused = await example('metrics', { ...env, BERNSTEIN_TOKEN: 'not-a-token-0123456789' })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('GET /metrics answered 401')
  })

  describe('against the Prism mock (npm run mock)', () => {
    let prism: RunningPrism
    beforeAll(async () => {
      prism = await startPrism('mock')
    }, 90_000)
    afterAll(async () => prism?.stop())

    it('typed-client.ts runs unchanged and gets the documented examples', async () => {
      const run = await example('typed-client', { BERNSTEIN_URL: prism.url, BERNSTEIN_TOKEN: 'any-token' })
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      expect(run.stdout).toContain('read back through /api/v1: [A2A] Fix the flaky login test in auth/login.spec.ts')
    })
  })
})
