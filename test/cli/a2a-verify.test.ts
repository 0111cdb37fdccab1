import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto'
import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { vectorJson, vectorPath, vectorText } from '../helpers/vectors.js'
import { type CliRun, runCli } from '../helpers/cli.js'
import { parsePythonJson } from '../../src/canonical/python-json.js'
import { parseReceipt, receiptBindingDigest } from '../../src/receipts/receipt.js'

/** Runs the real CLI process from the repository root. */
const cli = (...args: string[]): Promise<CliRun> => runCli(args, { NO_COLOR: '1' })

interface VerifyCase {
  ok: boolean
  errors: string[]
  verified_key_id: string | null
}
const cases = vectorJson<{ verify_task_receipt: Record<string, VerifyCase> }>('a2a_receipt', 'receipt.meta.json').verify_task_receipt

const RECEIPT = vectorPath('a2a_receipt', 'receipt.json')
const WIRE = vectorPath('a2a_receipt', 'response_wire.json')
const ENTRY = 'sha256:cce1329b9fb10adb99edcfc1ac4d88fd3edfbe0d138fb19cadaff543da12506a'
const CONTENT = 'sha256:2ed07ef77ef1e15b73d8fdec1bb70ea65fb50e431b7c8f3d94c3e42c69e11482'
/** The warning of a receipt accepted on its own key (`--trust-on-first-use`), worded as for a card (src/cli/trust.ts). */
const WARNING =
  'the key is not pinned (trust-on-first-use): the receipt was verified against its own key only; pin it with --trusted-jwk or --jwks-url from now on'
const embeddedJwk = (JSON.parse(vectorText('a2a_receipt', 'receipt.json')) as { head_signature: { public_key_jwk: Record<string, string> } }).head_signature
  .public_key_jwk

function jwkFromSeed(seedByte: number, kid: string): Record<string, string> {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.alloc(32, seedByte)])
  const publicJwk = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' })
  return { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', x: String(publicJwk.x), kid }
}

let dir: string
let server: Server
let baseUrl: string
const jwksBodies: Record<string, unknown> = {}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bernstein-a2a-verify-cli-'))
  server = createServer((req, res) => {
    const body = jwksBodies[req.url ?? '']
    if (body === undefined) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await rm(dir, { recursive: true, force: true })
})

async function file(name: string, content: string): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, content)
  return path
}

describe('a2a verify', { timeout: 120_000 }, () => {
  it('accepts the raw wire body (receipt key dropped) with --trust-on-first-use, and says the key is not pinned', async () => {
    const run = await cli('a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--trust-on-first-use')
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(
      [
        `✓ A2A receipt ${RECEIPT} is valid`,
        '  task: 5f2c9a1b7e3d  kid: a2a-server-lineage-1',
        `  entry: ${ENTRY}`,
        '  trust: first-use',
        `  warning: ${WARNING}`,
        '',
      ].join('\n'),
    )
  })

  it('--json on success, with the canonical response file as input', async () => {
    const run = await cli(
      '--json',
      'a2a',
      'verify',
      '--receipt',
      RECEIPT,
      '--response',
      vectorPath('a2a_receipt', 'response.canonical.json'),
      '--trust-on-first-use',
    )
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      ok: true,
      task_id: '5f2c9a1b7e3d',
      entry_hash: ENTRY,
      content_hash: CONTENT,
      kid: 'a2a-server-lineage-1',
      verified_key_id: cases['response_dict_ok']?.verified_key_id,
      key_pinned: false,
      trust: 'first-use',
      warning: WARNING,
    })
  })

  it('a one-byte tamper fails with exit 1 and Bernstein’s text (its unpinned verdict: --trust-on-first-use), naming the check', async () => {
    const tampered = vectorPath('a2a_receipt', 'response.canonical.tampered.json')
    const [text, json] = await Promise.all([
      cli('a2a', 'verify', '--receipt', RECEIPT, '--response', tampered, '--trust-on-first-use'),
      cli('--json', 'a2a', 'verify', '--receipt', RECEIPT, '--response', tampered, '--trust-on-first-use'),
    ])
    const expected = cases['one_byte_tampered_bytes']?.errors ?? []
    expect(text.code).toBe(1)
    expect(text.stdout).toBe(`✗ A2A receipt ${RECEIPT} is NOT valid:\n${expected.map((e) => `  - ${e}\n`).join('')}  failed checks: content_hash\n`)
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, entry_hash: ENTRY, failures: expected, failed_checks: ['content_hash'] })
  })

  it('--trusted-jwk pins the key: the right one passes without warning, another one fails', async () => {
    const good = await file('good.jwk.json', JSON.stringify(embeddedJwk))
    const bad = await file('bad.jwk.json', JSON.stringify(jwkFromSeed(0x43, 'a2a-server-lineage-1')))
    const [pinned, wrong] = await Promise.all([
      cli('--json', 'a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--trusted-jwk', good),
      cli('--json', 'a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--trusted-jwk', bad),
    ])
    expect(pinned.code).toBe(0)
    const ok = JSON.parse(pinned.stdout) as Record<string, unknown>
    expect(ok).toMatchObject({ ok: true, key_pinned: true, trust: 'pinned' })
    expect(ok).not.toHaveProperty('warning')
    expect(wrong.code).toBe(1)
    expect(JSON.parse(wrong.stdout)).toEqual({
      ok: false,
      entry_hash: ENTRY,
      failures: cases['pinned_wrong_jwk(seed 0x43*32)']?.errors,
      failed_checks: ['trusted_issuer'],
    })
  })

  it('--jwks-url pins the key whose kid is the receipt’s kid', async () => {
    jwksBodies['/good.json'] = { keys: [jwkFromSeed(0x11, 'other-kid'), embeddedJwk] }
    jwksBodies['/wrong.json'] = { keys: [jwkFromSeed(0x43, 'a2a-server-lineage-1')] }
    jwksBodies['/none.json'] = { keys: [jwkFromSeed(0x11, 'other-kid')] }
    const [good, wrong, none, missing] = await Promise.all([
      cli('--json', 'a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--jwks-url', `${baseUrl}/good.json`),
      cli('--json', 'a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--jwks-url', `${baseUrl}/wrong.json`),
      cli('a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--jwks-url', `${baseUrl}/none.json`),
      cli('a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--jwks-url', `${baseUrl}/absent.json`),
    ])
    expect(good.code).toBe(0)
    expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, key_pinned: true, trust: 'pinned' })
    expect(wrong.code).toBe(1)
    expect(JSON.parse(wrong.stdout)).toMatchObject({ ok: false, failures: cases['pinned_wrong_jwk(seed 0x43*32)']?.errors })
    expect(none).toMatchObject({ code: 1, stdout: `✗ no key with kid 'a2a-server-lineage-1' in the JWKS at ${baseUrl}/none.json\n` })
    expect(missing).toMatchObject({ code: 1, stdout: `✗ could not fetch JWKS from ${baseUrl}/absent.json: HTTP 404\n` })
  })

  it('a stripped signature and an inconsistent kid fail', async () => {
    const receipt = JSON.parse(vectorText('a2a_receipt', 'receipt.json')) as Record<string, unknown> & {
      head_signature: Record<string, unknown>
    }
    const stripped = await file('stripped.json', JSON.stringify({ ...receipt, head_signature: {} }))
    const renamed = await file('renamed.json', JSON.stringify({ ...receipt, head_signature: { ...receipt.head_signature, key_id: 'other-key' } }))
    const [a, b] = await Promise.all([
      cli('--json', 'a2a', 'verify', '--receipt', stripped, '--response', WIRE, '--trust-on-first-use'),
      cli('--json', 'a2a', 'verify', '--receipt', renamed, '--response', WIRE, '--trust-on-first-use'),
    ])
    expect(a.code).toBe(1)
    expect(JSON.parse(a.stdout)).toEqual({ ok: false, entry_hash: ENTRY, failures: cases['head_signature_stripped']?.errors, failed_checks: ['signature'] })
    expect(b.code).toBe(1)
    expect(JSON.parse(b.stdout)).toEqual({
      ok: false,
      entry_hash: ENTRY,
      failures: ['kid mismatch: receipt kid a2a-server-lineage-1, key_id other-key, jwk kid a2a-server-lineage-1'],
      failed_checks: ['kid'],
    })
  })

  it('parse errors exit 1 with "could not parse …"; a missing file is a usage error (exit 2)', async () => {
    const garbage = await file('garbage.json', 'not json')
    const noKid = await file('nokid.json', JSON.stringify({ ...JSON.parse(vectorText('a2a_receipt', 'receipt.json')), kid: '' }))
    const [a, b, c, d] = await Promise.all([
      cli('a2a', 'verify', '--receipt', garbage, '--response', WIRE),
      cli('--json', 'a2a', 'verify', '--receipt', noKid, '--response', WIRE),
      cli('a2a', 'verify', '--receipt', RECEIPT, '--response', garbage),
      cli('a2a', 'verify', '--receipt', join(dir, 'absent.json'), '--response', WIRE),
    ])
    expect(a).toMatchObject({ code: 1, stdout: '✗ could not parse receipt: Expecting value: line 1 column 1 (char 0)\n' })
    expect(b.code).toBe(1)
    expect(JSON.parse(b.stdout)).toEqual({ ok: false, error: "could not parse receipt: A2A receipt 'kid' must be a non-empty string" })
    expect(c).toMatchObject({ code: 1, stdout: '✗ could not parse response: Expecting value: line 1 column 1 (char 0)\n' })
    expect(d.code).toBe(2)
    expect(d.stderr).toContain(`Error: Invalid value for '--receipt': File '${join(dir, 'absent.json')}' does not exist.`)
  })
})

/** The vector receipt re-signed by a random key, with that key embedded: a forgery only a pinned key tells apart. */
async function forgedReceipt(): Promise<string> {
  const value = parsePythonJson(vectorText('a2a_receipt', 'receipt.json'))
  const parsed = parseReceipt(value)
  if (!parsed.ok) throw new Error(parsed.detail)
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const signature = sign(null, Buffer.from(receiptBindingDigest(parsed.value), 'hex'), privateKey).toString('base64')
  const jwk = { kty: 'OKP', crv: 'Ed25519', x: String(publicKey.export({ format: 'jwk' }).x), kid: parsed.value.kid }
  const forged = { ...(JSON.parse(vectorText('a2a_receipt', 'receipt.json')) as Record<string, unknown>) }
  forged['head_signature'] = { ...(forged['head_signature'] as Record<string, unknown>), public_key_jwk: jwk, signature_b64: signature }
  return file('forged.json', JSON.stringify(forged))
}

describe('a2a verify fails closed without a pinned key (issue 24)', { timeout: 120_000 }, () => {
  it('a receipt signed by a random key: refused without a pin, naming the check; refused by the right pin; accepted only as first use', async () => {
    const forged = await forgedReceipt()
    const good = await file('pin.jwk.json', JSON.stringify(embeddedJwk))
    const [text, json, pinned, tofu, tofuText] = await Promise.all([
      cli('a2a', 'verify', '--receipt', forged, '--response', WIRE),
      cli('--json', 'a2a', 'verify', '--receipt', forged, '--response', WIRE),
      cli('--json', 'a2a', 'verify', '--receipt', forged, '--response', WIRE, '--trusted-jwk', good),
      cli('--json', 'a2a', 'verify', '--receipt', forged, '--response', WIRE, '--trust-on-first-use'),
      cli('a2a', 'verify', '--receipt', forged, '--response', WIRE, '--trust-on-first-use'),
    ])
    // It was "✓ valid", exit 0.
    expect(text.code).toBe(1)
    expect(text.stdout).toMatch(
      /^✗ A2A receipt .* is NOT valid:\n {2}- no pinned key: pin the signer's key with --trusted-jwk or --jwks-url, or accept this receipt's own key \(kid a2a-server-lineage-1, fingerprint sha256:[0-9a-f]{64}\) with --trust-on-first-use\n {2}failed checks: trusted_issuer\n$/,
    )
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      entry_hash: ENTRY,
      failures: [expect.stringMatching(/^no pinned key: /)],
      failed_checks: ['trusted_issuer'],
    })
    // The operator's key pinned: the forgery is refused for its key, whatever its signature.
    expect(pinned.code).toBe(1)
    expect(JSON.parse(pinned.stdout)).toEqual({
      ok: false,
      entry_hash: ENTRY,
      failures: ['head_signature: head_signature.public_key_jwk does not match the trusted JWK (verifier was given an explicit trusted key)'],
      failed_checks: ['trusted_issuer'],
    })
    // Trust on first use, asked for: accepted, and marked as such.
    expect(tofu.code).toBe(0)
    expect(JSON.parse(tofu.stdout)).toMatchObject({ ok: true, key_pinned: false, trust: 'first-use', warning: WARNING })
    expect(tofuText.code).toBe(0)
    expect(tofuText.stdout).toContain('  trust: first-use\n')
    expect(tofuText.stdout).toContain(`  warning: ${WARNING}\n`)
  })

  it('the genuine receipt with the right pin passes, marked pinned; --trust-on-first-use with a pin is a usage error', async () => {
    const good = await file('pin2.jwk.json', JSON.stringify(embeddedJwk))
    const [json, text, both] = await Promise.all([
      cli('--json', 'a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--trusted-jwk', good),
      cli('a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--trusted-jwk', good),
      cli('--json', 'a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE, '--trusted-jwk', good, '--trust-on-first-use'),
    ])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, key_pinned: true, trust: 'pinned' })
    expect(text.code).toBe(0)
    expect(text.stdout).toBe(
      [`✓ A2A receipt ${RECEIPT} is valid`, '  task: 5f2c9a1b7e3d  kid: a2a-server-lineage-1', `  entry: ${ENTRY}`, '  trust: pinned', ''].join('\n'),
    )
    expect(both.code).toBe(1)
    expect(JSON.parse(both.stdout)).toMatchObject({ ok: false, code: 'usage', error: expect.stringContaining('cannot be used with') as unknown })
  })
})
