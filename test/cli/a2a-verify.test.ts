import { createPrivateKey, createPublicKey } from 'node:crypto'
import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { vectorJson, vectorPath, vectorText } from '../helpers/vectors.js'
import { type CliRun, runCli } from '../helpers/cli.js'

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
const WARNING =
  "signature verified against the receipt's own embedded key (trust-on-first-use); the key is not pinned. " +
  "Pass --trusted-jwk to verify provenance against the operator's published key."
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
  it('accepts the raw wire body (receipt key dropped) and warns that the key is not pinned', async () => {
    const run = await cli('a2a', 'verify', '--receipt', RECEIPT, '--response', WIRE)
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(
      [`✓ A2A receipt ${RECEIPT} is valid`, '  task: 5f2c9a1b7e3d  kid: a2a-server-lineage-1', `  entry: ${ENTRY}`, `  warning: ${WARNING}`, ''].join('\n'),
    )
  })

  it('--json on success, with the canonical response file as input', async () => {
    const run = await cli('--json', 'a2a', 'verify', '--receipt', RECEIPT, '--response', vectorPath('a2a_receipt', 'response.canonical.json'))
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      ok: true,
      task_id: '5f2c9a1b7e3d',
      entry_hash: ENTRY,
      content_hash: CONTENT,
      kid: 'a2a-server-lineage-1',
      verified_key_id: cases['response_dict_ok']?.verified_key_id,
      key_pinned: false,
      warning: WARNING,
    })
  })

  it('a one-byte tamper fails with exit 1 and Bernstein’s text', async () => {
    const tampered = vectorPath('a2a_receipt', 'response.canonical.tampered.json')
    const [text, json] = await Promise.all([
      cli('a2a', 'verify', '--receipt', RECEIPT, '--response', tampered),
      cli('--json', 'a2a', 'verify', '--receipt', RECEIPT, '--response', tampered),
    ])
    const expected = cases['one_byte_tampered_bytes']?.errors ?? []
    expect(text.code).toBe(1)
    expect(text.stdout).toBe(`✗ A2A receipt ${RECEIPT} is NOT valid:\n${expected.map((e) => `  - ${e}\n`).join('')}`)
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, entry_hash: ENTRY, failures: expected })
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
    expect(ok).toMatchObject({ ok: true, key_pinned: true })
    expect(ok).not.toHaveProperty('warning')
    expect(wrong.code).toBe(1)
    expect(JSON.parse(wrong.stdout)).toEqual({
      ok: false,
      entry_hash: ENTRY,
      failures: cases['pinned_wrong_jwk(seed 0x43*32)']?.errors,
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
    expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, key_pinned: true })
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
      cli('--json', 'a2a', 'verify', '--receipt', stripped, '--response', WIRE),
      cli('--json', 'a2a', 'verify', '--receipt', renamed, '--response', WIRE),
    ])
    expect(a.code).toBe(1)
    expect(JSON.parse(a.stdout)).toEqual({ ok: false, entry_hash: ENTRY, failures: cases['head_signature_stripped']?.errors })
    expect(b.code).toBe(1)
    expect(JSON.parse(b.stdout)).toEqual({
      ok: false,
      entry_hash: ENTRY,
      failures: ['kid mismatch: receipt kid a2a-server-lineage-1, key_id other-key, jwk kid a2a-server-lineage-1'],
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
