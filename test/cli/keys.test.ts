/**
 * `bernstein-a2a keys show`: the fingerprints a peer pins and the kids a verifier looks up are those the running
 * node publishes; it reads the keys and creates none.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCardFile } from '../../src/cards/card-file.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { runCli, spawnServer } from '../helpers/cli.js'

const TOKEN = 'keys-show-token-0123456789abcdef'

interface ShownKey {
  key: string
  fingerprint: string
  kid: string | null
  jwk?: { kty: string; crv: string; x: string; kid: string }
  jwk_thumbprint?: string
  path: string
  used_for: string
}

describe('keys show', { timeout: 120_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'bernstein-a2a-keys-'))
  const env = { BERNSTEIN_DATA_DIR: join(root, 'data'), BERNSTEIN_AUTH_TOKEN: TOKEN }
  let published: { cardFingerprint: string; cardText: string; jwks: { keys: { kid: string; x: string; kty: string; crv: string }[] } }

  beforeAll(async () => {
    const server = await spawnServer(env)
    try {
      const cardText = await (await fetch(`${server.url}/.well-known/a2a-capability-card.json`)).text()
      const jwks = (await (await fetch(`${server.url}/.well-known/agent.json/keys`)).json()) as typeof published.jwks
      published = { cardFingerprint: keyFingerprint(parseCardFile(cardText).card.public_key_pem), cardText, jwks }
    } finally {
      await server.stop()
    }
  }, 60_000)
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('--json: the capability card fingerprint peers pin, and the agent card and receipt kids of the JWKS', async () => {
    const run = await runCli(['--json', 'keys', 'show'], env)
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
    const shown = JSON.parse(run.stdout) as { ok: boolean; keys: ShownKey[] }
    expect(shown.ok).toBe(true)
    expect(shown.keys.map((k) => k.key)).toEqual(['capability-card', 'agent-card', 'receipt'])
    const [card, agentCard, receipt] = shown.keys as [ShownKey, ShownKey, ShownKey]
    expect(card).toMatchObject({ fingerprint: published.cardFingerprint, kid: null, path: join(env.BERNSTEIN_DATA_DIR, 'keys', 'capability-card.pem') })
    expect(published.jwks.keys.map((k) => k.kid)).toEqual([agentCard.kid, receipt.kid])
    const agentJwk = published.jwks.keys[0]!
    const receiptJwk = published.jwks.keys[1]!
    expect(keyFingerprint({ kty: 'OKP', crv: 'Ed25519', x: agentJwk.x })).toBe(agentCard.fingerprint)
    expect(receipt.jwk).toEqual(published.jwks.keys[1])
    const thumbprint = createHash('sha256')
      .update(JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x: receiptJwk.x }))
      .digest('base64url')
    expect(receipt.jwk_thumbprint).toBe(thumbprint)
    for (const key of shown.keys) expect(key.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it('text: one block per key, the fingerprint first', async () => {
    const run = await runCli(['keys', 'show'], env)
    expect(run.code).toBe(0)
    const lines = run.stdout.split('\n')
    expect(lines[0]).toBe(`capability-card: ${published.cardFingerprint}`)
    expect(lines[1]).toContain('peers pin this fingerprint')
    expect(run.stdout).toContain(`  kid: ${published.jwks.keys[0]?.kid}\n`)
    expect(run.stdout).toContain(`  kid: ${published.jwks.keys[1]?.kid}\n`)
    expect(run.stdout).toMatch(/^ {2}jwk thumbprint \(RFC 7638\): [A-Za-z0-9_-]{43}$/m)
  })

  it('on a node that never started: says how to make the keys, exit 1, and creates nothing', async () => {
    const fresh = join(root, 'fresh')
    const text = await runCli(['keys', 'show'], { BERNSTEIN_DATA_DIR: fresh })
    expect(text).toEqual({
      code: 1,
      stdout: '',
      stderr: `✗ no capability-card key at ${join(fresh, 'keys', 'capability-card.pem')}: start the server once (it creates the keys), or run: bernstein-a2a keys rotate\n`,
    })
    const json = await runCli(['--json', 'keys', 'show'], { BERNSTEIN_DATA_DIR: fresh })
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false })
    expect(existsSync(fresh)).toBe(false)
  })
})
