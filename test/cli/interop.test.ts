import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseCardFile, serializeCardFile } from '../../src/cards/card-file.js'
import { verifyCapabilityCard } from '../../src/cards/verify-capability-card.js'
import { privateKeyFromPem } from '../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { vectorPath } from '../helpers/vectors.js'
import { type CliRun, runCli } from '../helpers/cli.js'

/** Runs the real CLI process from the repository root. */
const cli = (...args: string[]): Promise<CliRun> => runCli(args, { NO_COLOR: '1' })

const GOLDEN_FP = 'sha256:0c12aacd7ddc9393a1fe254c4c220d2f12098e0c4662cb95d29e19dd8188313c'
const CARD_A_FP = 'sha256:10ba682c8ad13513971e8b56881aab8bd702bb807796eca81932c735a94d6e6d'
let dir: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bernstein-a2a-cli-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function issue(...extra: string[]): Promise<{ run: CliRun; card: string; key: string }> {
  const card = join(dir, 'card.json')
  const run = await cli('interop', 'a2a', 'card', '--issuer', 'acme', '--output', card, ...extra)
  return { run, card, key: `${card}.key.pem` }
}

describe('interop a2a card', () => {
  it('issues a card, writes a 0600 PKCS#8 key beside it and prints the fingerprint', async () => {
    const { run, card, key } = await issue()
    expect(run.code).toBe(0)
    expect((await stat(key)).mode & 0o777).toBe(0o600)
    const fingerprint = keyFingerprint(privateKeyFromPem(await readFile(key, 'utf8')))
    expect(run.stdout).toBe(
      [
        `✓ Capability card written to ${card}`,
        '  issuer: acme  kid: a2a-acme',
        `  fingerprint: ${fingerprint}`,
        `  private key (keep safe, 0600): ${key}`,
        '',
      ].join('\n'),
    )
    const text = await readFile(card, 'utf8')
    const signed = parseCardFile(text)
    expect(serializeCardFile(signed)).toBe(text)
    expect((await verifyCapabilityCard(signed)).ok).toBe(true)
    expect(signed.card).toMatchObject({
      issuer: 'acme',
      name: 'bernstein-orchestrator',
      description: 'Bernstein, a deterministic orchestrator for CLI coding agents',
      advertised_tools: ['task_orchestration', 'code_review'],
      policies: { cost_cap_usd: 10, redaction_tier: 'standard', sandbox_profile: 'container' },
    })
    expect(signed.card.expires_at - signed.card.created_at).toBe(86_400)
    expect(text).toContain('"cost_cap_usd": 10.0,')
  })

  it('honours every flag and prints JSON with --json', async () => {
    const { run, card } = await issue(
      '--name',
      'Acme',
      '--description',
      'd',
      '--kid',
      'k1',
      '--tool',
      'a',
      '--tool',
      'b',
      '--cost-cap-usd',
      '2.5',
      '--redaction-tier',
      'strict',
      '--sandbox-profile',
      'microvm',
      '--ttl-seconds',
      '0',
      '--json',
    )
    expect(run.code).toBe(0)
    const out = JSON.parse(run.stdout) as Record<string, unknown>
    expect(out).toEqual({
      ok: true,
      output: card,
      issuer: 'acme',
      kid: 'k1',
      fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) as unknown,
      expires_at: 0,
      private_key: `${card}.key.pem`,
    })
    const signed = parseCardFile(await readFile(card, 'utf8'))
    expect(signed.card).toMatchObject({
      name: 'Acme',
      description: 'd',
      kid: 'k1',
      advertised_tools: ['a', 'b'],
      policies: { cost_cap_usd: 2.5, redaction_tier: 'strict', sandbox_profile: 'microvm' },
      expires_at: 0,
    })
    expect(keyFingerprint(signed.card.public_key_pem)).toBe(out['fingerprint'])
  })

  it('re-issuing with --private-key keeps the fingerprint and writes no new key', async () => {
    const first = await issue('--json')
    const firstFp = (JSON.parse(first.run.stdout) as { fingerprint: string }).fingerprint
    const keyBefore = await readFile(first.key, 'utf8')
    const second = join(dir, 'second.json')
    const run = await cli('--json', 'interop', 'a2a', 'card', '--issuer', 'acme', '--output', second, '--private-key', first.key)
    expect(run.code).toBe(0)
    const out = JSON.parse(run.stdout) as { fingerprint: string; private_key: string | null }
    expect(out.fingerprint).toBe(firstFp)
    expect(out.private_key).toBeNull()
    expect((await readdir(dir)).sort()).toEqual(['card.json', 'card.json.key.pem', 'second.json'])
    expect(await readFile(first.key, 'utf8')).toBe(keyBefore)
    expect(run.stdout).not.toContain('private key (keep safe')
  })

  it('refuses to overwrite an existing key file, and rejects bad flags', async () => {
    await issue()
    const again = await issue()
    expect(again.run.code).toBe(1)
    expect(again.run.stderr).toContain('already exists; pass --private-key')
    // Each bad flag on its own, with an output path of its own: refused with the flag named, nothing written.
    const refusals: [string[], string][] = [
      [['--output', join(dir, 'x.json')], "error: required option '--issuer <id>' not specified"],
      [
        ['--issuer', 'acme', '--output', join(dir, 'x.json'), '--cost-cap-usd', '-1'],
        "error: option '--cost-cap-usd <usd>' argument '-1' is invalid. '-1' must not be negative",
      ],
      [
        ['--issuer', 'acme', '--output', join(dir, 'x.json'), '--ttl-seconds', '1.5'],
        "error: option '--ttl-seconds <seconds>' argument '1.5' is invalid. '1.5' is not a whole number",
      ],
    ]
    for (const [flags, message] of refusals) {
      const refused = await cli('interop', 'a2a', 'card', ...flags)
      expect(refused.code, flags.join(' ')).toBe(1)
      expect(refused.stderr.split('\n')[0]).toBe(message)
    }
    expect((await readdir(dir)).sort()).toEqual(['card.json', 'card.json.key.pem'])
    const badKey = join(dir, 'bad.pem')
    await writeFile(badKey, 'not a key')
    const run = await cli('interop', 'a2a', 'card', '--issuer', 'acme', '--output', join(dir, 'y.json'), '--private-key', badKey)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('could not issue capability card')
  })
})

describe('interop a2a verify', () => {
  it('passes a fresh card with a pinned fingerprint; without one it fails closed unless --trust-on-first-use', async () => {
    const { card, run } = await issue('--json')
    const fp = (JSON.parse(run.stdout) as { fingerprint: string }).fingerprint
    const pinned = await cli('--json', 'interop', 'a2a', 'verify', '--card', card, '--trusted-fingerprint', 'sha256:00', '--trusted-fingerprint', fp)
    expect(pinned.code).toBe(0)
    expect(JSON.parse(pinned.stdout)).toMatchObject({ ok: true, issuer: 'acme', kid: 'a2a-acme', fingerprint: fp, key_pinned: true, trust: 'pinned' })
    expect(JSON.parse(pinned.stdout)).not.toHaveProperty('warning')
    const pinnedText = await cli('interop', 'a2a', 'verify', '--card', card, '--trusted-fingerprint', fp)
    expect(pinnedText).toMatchObject({
      code: 0,
      stdout: `✓ Capability card ${card} is valid\n  issuer: acme  kid: a2a-acme\n  fingerprint: ${fp}\n  trust: pinned\n`,
    })

    // Issue 28: no pin is a failure (it was `ok: true`, exit 0), naming both ways out.
    const noPin = await cli('interop', 'a2a', 'verify', '--card', card)
    expect(noPin.code).toBe(1)
    expect(noPin.stdout).toBe(
      `✗ Capability card ${card} is NOT valid:\n` +
        `  - no pinned key: pin the signer's key with --trusted-fingerprint, or accept this card's own key (${fp}) with --trust-on-first-use\n` +
        '  failed checks: trusted_issuer\n',
    )
    const noPinJson = await cli('--json', 'interop', 'a2a', 'verify', '--card', card)
    expect(noPinJson.code).toBe(1)
    expect(JSON.parse(noPinJson.stdout)).toMatchObject({ ok: false, fingerprint: fp, failed_checks: ['trusted_issuer'] })
    const tofu = await cli('interop', 'a2a', 'verify', '--card', card, '--trust-on-first-use')
    expect(tofu.code).toBe(0)
    expect(tofu.stdout).toBe(
      `✓ Capability card ${card} is valid\n  issuer: acme  kid: a2a-acme\n  fingerprint: ${fp}\n  trust: first-use\n` +
        '  warning: the key is not pinned (trust-on-first-use): the card was verified against its own key only; pin it with --trusted-fingerprint from now on\n',
    )
    const tofuJson = await cli('--json', 'interop', 'a2a', 'verify', '--card', card, '--trust-on-first-use')
    expect(JSON.parse(tofuJson.stdout)).toMatchObject({
      ok: true,
      fingerprint: fp,
      key_pinned: false,
      trust: 'first-use',
      warning: expect.stringContaining('not pinned') as unknown,
    })
    const both = await cli('--json', 'interop', 'a2a', 'verify', '--card', card, '--trust-on-first-use', '--trusted-fingerprint', fp)
    expect(both.code).toBe(1)
    expect(JSON.parse(both.stdout)).toMatchObject({ ok: false, code: 'usage', error: expect.stringContaining('cannot be used with') as unknown })
  })

  it('a tampered card exits 1 with "NOT valid", saying the signature is invalid', async () => {
    const { card, run: issued } = await issue('--json')
    const fp = (JSON.parse(issued.stdout) as { fingerprint: string }).fingerprint
    const text = await readFile(card, 'utf8')
    await writeFile(card, text.replace('"cost_cap_usd": 10.0', '"cost_cap_usd": 1.0'))
    // Pinned to its own key, so the signature is the only failing check. (Issue 28: the failure names its check; it
    // was "signature is invalid or the card has expired".)
    const run = await cli('interop', 'a2a', 'verify', '--card', card, '--trusted-fingerprint', fp)
    expect(run.code).toBe(1)
    expect(run.stdout).toBe(`✗ Capability card ${card} is NOT valid:\n  - signature is invalid (JWS signature does not verify)\n  failed checks: signature\n`)
    const json = await cli('--json', 'interop', 'a2a', 'verify', '--card', card, '--trusted-fingerprint', fp)
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      fingerprint: fp,
      failures: ['signature is invalid (JWS signature does not verify)'],
      failed_checks: ['signature'],
    })
  })

  it('an untrusted fingerprint and the policy flags give Bernstein’s failure texts', async () => {
    const { card, run } = await issue('--json', '--cost-cap-usd', '12.5', '--redaction-tier', 'basic')
    const fp = (JSON.parse(run.stdout) as { fingerprint: string }).fingerprint
    const result = await cli(
      '--json',
      'interop',
      'a2a',
      'verify',
      '--card',
      card,
      '--trusted-fingerprint',
      CARD_A_FP,
      '--require-cost-cap-usd',
      '10',
      '--require-redaction-tier',
      'standard',
      '--require-sandbox-profile',
      'container',
    )
    expect(result.code).toBe(1)
    expect(JSON.parse(result.stdout)).toEqual({
      ok: false,
      fingerprint: fp,
      failures: [
        `key fingerprint ${fp} is not in the trusted-issuer set`,
        'cost cap: peer advertises 12.5 USD, operator ceiling is 10.0 USD',
        "redaction tier: peer tier 'basic' is weaker than required 'standard'",
      ],
      failed_checks: ['trusted_issuer', 'policy'],
    })
    const onlySandbox = await cli('interop', 'a2a', 'verify', '--card', card, '--require-sandbox-profile', 'microvm')
    expect(onlySandbox.code).toBe(1)
    expect(onlySandbox.stdout).toContain("  - sandbox profile: peer profile 'container' is weaker than required 'microvm'")
    const satisfied = await cli(
      'interop',
      'a2a',
      'verify',
      '--card',
      card,
      '--trusted-fingerprint',
      fp,
      '--require-cost-cap-usd',
      '12.5',
      '--require-sandbox-profile',
      'container',
    )
    expect(satisfied.code).toBe(0)
  })

  it('Bernstein’s card a is expired today: the failure says expired (its signature is fine)', async () => {
    const a = await cli('interop', 'a2a', 'verify', '--card', vectorPath('capability_cards', 'card_a.signed.json'), '--trusted-fingerprint', CARD_A_FP)
    expect(a.code).toBe(1)
    // Issue 28: it was "signature is invalid or the card has expired".
    expect(a.stdout).toContain('  - card has expired (expires_at=1700003600.0)')
    expect(a.stdout).toContain('  failed checks: expiry\n')
    const json = await cli(
      '--json',
      'interop',
      'a2a',
      'verify',
      '--card',
      vectorPath('capability_cards', 'card_a.signed.json'),
      '--trusted-fingerprint',
      CARD_A_FP,
    )
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, failed_checks: ['expiry'] })
    expect(a.stdout).not.toContain('signature is invalid')
    expect(a.stdout).not.toContain('trusted-issuer set')
  })

  it('an unparseable card exits 1 with "could not parse capability card"', async () => {
    const bad = join(dir, 'bad.json')
    await writeFile(bad, '{"card": ')
    const text = await cli('interop', 'a2a', 'verify', '--card', bad)
    expect(text.code).toBe(1)
    expect(text.stderr).toContain('could not parse capability card: Expecting value')
    const json = await cli('--json', 'interop', 'a2a', 'verify', '--card', join(dir, 'missing.json'))
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: expect.stringContaining('could not parse capability card') as unknown })
  })
})

describe('interop a2a conformance', () => {
  it('--card on a fresh card passes every check', async () => {
    const { card } = await issue()
    const run = await cli('interop', 'a2a', 'conformance', '--card', card)
    expect(run.code).toBe(0)
    expect(
      run.stdout
        .split('\n')
        .slice(0, 5)
        .map((line) => line.split(':')[0]),
    ).toEqual(['PASS required_fields', 'PASS jcs_canonical', 'PASS signature', 'PASS expiry', 'PASS issuer'])
  })

  it('--card on Bernstein’s expired card a fails only expiry (JSON)', async () => {
    const path = vectorPath('capability_cards', 'card_a.signed.json')
    const run = await cli('--json', 'interop', 'a2a', 'conformance', '--card', path)
    expect(run.code).toBe(1)
    const report = JSON.parse(run.stdout) as {
      card: string
      ok: boolean
      fingerprint: string
      checks: Array<{ name: string; passed: boolean; detail: string }>
    }
    expect(report).toMatchObject({ card: path, ok: false, issuer: 'acme-orch', kid: 'a2a-acme-orch', fingerprint: CARD_A_FP })
    expect(report.checks.filter((c) => !c.passed)).toEqual([{ name: 'expiry', passed: false, detail: 'card is expired (expires_at=1700003600.0)' }])
  })

  const TABLE: Array<[string, number, string | null]> = [
    ['valid', 0, null],
    ['bad_canonicalization', 1, 'signature'],
    ['wrong_typ', 1, 'malformed'],
    ['expired', 1, 'expired'],
    ['unknown_kid', 1, 'unresolvable_jwks'],
    ['tampered_signatures', 1, 'signature'],
  ]

  it.each(TABLE)('--agent-card %s.json with the golden key trusted → exit %i, reason %s', async (name, code, reason) => {
    const run = await cli(
      '--json',
      'interop',
      'a2a',
      'conformance',
      '--agent-card',
      vectorPath('agent_card_v1', `${name}.json`),
      '--jwks',
      vectorPath('agent_card_v1', 'jwks.json'),
      '--now',
      '1700000100',
      '--trusted-fingerprint',
      GOLDEN_FP,
    )
    expect(run.code).toBe(code)
    const report = JSON.parse(run.stdout) as { checks: Record<string, unknown>[] }
    expect(report).toMatchObject({ ok: code === 0, reason })
    // The shape of the --card report (issue 28: it was {name, outcome, detail}).
    for (const check of report.checks) {
      expect(check).toMatchObject({ name: expect.any(String) as unknown, passed: expect.any(Boolean) as unknown, detail: expect.any(String) as unknown })
      expect(check).not.toHaveProperty('outcome')
      if (check['skipped'] !== undefined) expect(check).toMatchObject({ skipped: true, passed: false })
    }
    expect(report.checks.every((check) => check['passed'] === true)).toBe(code === 0)
  })

  it('--agent-card text output, and untrusted_issuer without the golden fingerprint', async () => {
    const args = [
      'interop',
      'a2a',
      'conformance',
      '--agent-card',
      vectorPath('agent_card_v1', 'valid.json'),
      '--jwks',
      vectorPath('agent_card_v1', 'jwks.json'),
      '--now',
      '1700000100',
    ]
    const plain = await cli(...args)
    expect(plain.code).toBe(0)
    expect(plain.stdout).toContain('PASS signature: detached Ed25519 JWS verifies (agent-card+jws)')
    expect(plain.stdout).toContain(`✓ Agent card ${vectorPath('agent_card_v1', 'valid.json')} conforms`)
    const untrusted = await cli(...args, '--trusted-fingerprint', CARD_A_FP)
    expect(untrusted.code).toBe(1)
    expect(untrusted.stdout).toContain('rejected (untrusted_issuer)')
  })

  it('needs exactly one of --card / --agent-card, and --jwks with --agent-card', async () => {
    expect((await cli('interop', 'a2a', 'conformance')).code).toBe(1)
    expect((await cli('interop', 'a2a', 'conformance', '--agent-card', vectorPath('agent_card_v1', 'valid.json'))).code).toBe(1)
  })
})
