import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { capabilityCardSigningBytes } from '../../../src/cards/capability-card.js'
import type { SignedCapabilityCard } from '../../../src/cards/capability-card.js'
import { parseCardFile, serializeCardFile } from '../../../src/cards/card-file.js'
import { issueCapabilityCard } from '../../../src/cards/issue-capability-card.js'
import { verifyCapabilityCard } from '../../../src/cards/verify-capability-card.js'
import { signDetachedJws } from '../../../src/crypto/detached-jws.js'
import { exportPkcs8Pem, exportSpkiPem, privateKeyFromSeed } from '../../../src/crypto/ed25519.js'
import { KeyRejected } from '../../../src/crypto/key-rejected.js'
import { vectorText } from '../../helpers/vectors.js'
import { cardAKey, cardMeta, issueCardA, NOW } from './fixtures.js'

const fileA = vectorText('capability_cards', 'card_a.signed.json')
const cardA = (): SignedCapabilityCard => parseCardFile(fileA)
const meta = cardMeta()

describe('issueCapabilityCard', () => {
  it('reproduces card_a.signed.json byte for byte from seed 11×32 at now 1700000000.0', async () => {
    expect(serializeCardFile(await issueCardA())).toBe(fileA)
  })

  it('accepts the key as PKCS#8 PEM and defaults kid to a2a-<issuer>', async () => {
    const signed = await issueCapabilityCard({
      issuer: 'acme-orch',
      name: 'Acme Orchestrator',
      description: 'Acme delegated build runner',
      tools: ['task_orchestration', 'code_review'],
      policies: { cost_cap_usd: 12.5, redaction_tier: 'standard', sandbox_profile: 'container' },
      ttlSeconds: 3600,
      privateKey: exportPkcs8Pem(cardAKey),
      now: 1_700_000_000,
    })
    expect(serializeCardFile(signed)).toBe(fileA)
    expect(signed.card.kid).toBe('a2a-acme-orch')
  })

  it('issues a never-expiring card with ttl 0 and honours an explicit kid', async () => {
    const signed = await issueCapabilityCard({
      issuer: 'x',
      name: 'X',
      tools: [],
      policies: { cost_cap_usd: 0, redaction_tier: 'none', sandbox_profile: 'none' },
      ttlSeconds: 0,
      privateKey: cardAKey,
      kid: 'custom',
      now: 5,
    })
    expect(signed.card.expires_at).toBe(0)
    expect(signed.card.kid).toBe('custom')
    expect(signed.card.description).toBe('')
    expect((await verifyCapabilityCard(signed, { now: 1e12 })).ok).toBe(true)
  })

  it('refuses invalid inputs', async () => {
    const base = {
      issuer: 'x',
      name: 'X',
      tools: [],
      policies: { cost_cap_usd: 1, redaction_tier: 'none', sandbox_profile: 'none' },
      ttlSeconds: 60,
      privateKey: cardAKey,
    }
    await expect(issueCapabilityCard({ ...base, issuer: '' })).rejects.toThrow("CapabilityCard 'issuer' must be a non-empty string")
    await expect(issueCapabilityCard({ ...base, policies: { ...base.policies, cost_cap_usd: -1 } })).rejects.toThrow(
      "CardPolicies 'cost_cap_usd' must be non-negative",
    )
    await expect(issueCapabilityCard({ ...base, ttlSeconds: -1 })).rejects.toThrow(TypeError)
    // Never issue what Bernstein would read as "never expires" (negative) or a card that expires as it is made.
    await expect(issueCapabilityCard({ ...base, now: -100, ttlSeconds: 60 })).rejects.toThrow('the card would expire before it was created')
    await expect(issueCapabilityCard({ ...base, now: 1e18, ttlSeconds: 1 })).rejects.toThrow('the card would expire before it was created')
    await expect(issueCapabilityCard({ ...base, privateKey: 'nope' })).rejects.toBeInstanceOf(KeyRejected)
  })
})

describe('verifyCapabilityCard on the Bernstein vectors', () => {
  it.each(meta.card_a.verify_capability_card)('card a at now=$now check_expiry=$check_expiry → $result', async (c) => {
    expect((await verifyCapabilityCard(cardA(), { now: c.now, checkExpiry: c.check_expiry })).ok).toBe(c.result)
  })

  it('tampered card (cost cap 12.5 → 1.0, signature kept) is invalid', async () => {
    const result = await verifyCapabilityCard(parseCardFile(vectorText('capability_cards', 'card_a.tampered.json')), { now: NOW })
    expect(result.ok).toBe(meta.tamper_expiry_consume.card_a.tampered_verify_at_NOW)
    expect(result).toMatchObject({ ok: false, code: 'signature' })
  })

  it('expired file is invalid at NOW and valid with the expiry check off', async () => {
    const expired = parseCardFile(vectorText('capability_cards', 'card_a.expired.json'))
    const info = meta.tamper_expiry_consume.card_a_expired_file
    expect((await verifyCapabilityCard(expired, { now: NOW })).ok).toBe(info.verify_at_NOW)
    expect(await verifyCapabilityCard(expired, { now: NOW })).toMatchObject({ code: 'expired', detail: 'card expired at 1600000060.0' })
    expect((await verifyCapabilityCard(expired, { now: NOW, checkExpiry: false })).ok).toBe(info.verify_at_NOW_check_expiry_false)
  })

  it('issued at 1600000000.0 with ttl 60, the card equals the expired file', async () => {
    expect(serializeCardFile(await issueCardA({ now: 1_600_000_000, ttlSeconds: 60 }))).toBe(vectorText('capability_cards', 'card_a.expired.json'))
  })
})

describe('tamper matrix', () => {
  const changes: Array<[string, (card: SignedCapabilityCard) => void]> = [
    ['schema_version', (s) => void (s.card.schema_version = '2')],
    ['issuer', (s) => void (s.card.issuer = 'acme-orcH')],
    ['name', (s) => void (s.card.name = 'Acme Orchestrator ')],
    ['description', (s) => void (s.card.description = '')],
    ['advertised_tools (order)', (s) => void s.card.advertised_tools.reverse()],
    ['advertised_tools (added)', (s) => void s.card.advertised_tools.push('shell')],
    ['advertised_tools (removed)', (s) => void s.card.advertised_tools.pop()],
    ['policies.cost_cap_usd', (s) => void (s.card.policies.cost_cap_usd = 12.500000000000002)],
    ['policies.redaction_tier', (s) => void (s.card.policies.redaction_tier = 'strict')],
    ['policies.sandbox_profile', (s) => void (s.card.policies.sandbox_profile = 'microvm')],
    ['public_key_pem (another key)', (s) => void (s.card.public_key_pem = exportSpkiPem(privateKeyFromSeed(Buffer.alloc(32, 0x12))))],
    ['kid', (s) => void (s.card.kid = 'a2a-acme-orch-2')],
    ['created_at', (s) => void (s.card.created_at += 1)],
    ['expires_at', (s) => void (s.card.expires_at += 1)],
    ['expires_at → 0 (never)', (s) => void (s.card.expires_at = 0)],
    ['alg', (s) => void (s.alg = 'ES256')],
  ]

  it.each(changes)('changing %s is rejected', async (_name, change) => {
    const card = cardA()
    expect((await verifyCapabilityCard(card, { now: NOW })).ok).toBe(true)
    change(card)
    expect((await verifyCapabilityCard(card, { now: NOW, checkExpiry: false })).ok).toBe(false)
  })

  it('flipping any bit position in any byte of the raw signature is rejected', async () => {
    const [header, , sig] = cardA().signature.split('.') as [string, string, string]
    const raw = Buffer.from(sig, 'base64url')
    for (let i = 0; i < raw.length; i += 1) {
      const flipped = Buffer.from(raw)
      flipped[i] = (flipped[i] ?? 0) ^ (1 << (i % 8))
      const card = cardA()
      card.signature = `${header}..${flipped.toString('base64url')}`
      const result = await verifyCapabilityCard(card, { now: NOW })
      expect(result.ok, `byte ${i}`).toBe(false)
    }
  })

  it('a header with another typ, signed by the right key, is rejected as typ', async () => {
    const card = cardA()
    card.signature = await signDetachedJws(capabilityCardSigningBytes(card.card), { alg: 'EdDSA', kid: card.card.kid, typ: 'agent-card+jws' }, cardAKey)
    expect(await verifyCapabilityCard(card, { now: NOW })).toMatchObject({ ok: false, code: 'typ' })
  })
})

describe('malformed input is a clean rejection', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }) as string
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }) as string
  const header = cardA().signature.split('.')[0] ?? ''
  const sig = cardA().signature.split('.')[2] ?? ''
  const b64 = (text: string): string => Buffer.from(text).toString('base64url')
  const huge = 'A'.repeat(50 * 1024 * 1024)

  const cases: Array<[string, (card: Record<string, unknown> & { card: Record<string, unknown> }) => void, string]> = [
    ['a garbage PEM', (s) => void (s.card['public_key_pem'] = 'not a pem'), 'key'],
    ['an RSA key PEM', (s) => void (s.card['public_key_pem'] = rsa), 'key'],
    ['an EC key PEM', (s) => void (s.card['public_key_pem'] = ec), 'key'],
    ['a private key PEM', (s) => void (s.card['public_key_pem'] = exportPkcs8Pem(cardAKey)), 'key'],
    ['a 50 MB PEM', (s) => void (s.card['public_key_pem'] = huge), 'key'],
    ['a header that is a JSON array', (s) => void (s['signature'] = `${b64('["EdDSA"]')}..${sig}`), 'malformed'],
    ['a header that is a number', (s) => void (s['signature'] = `${b64('7')}..${sig}`), 'malformed'],
    ['a header that is not JSON', (s) => void (s['signature'] = `${b64('{')}..${sig}`), 'malformed'],
    ['header alg none', (s) => void (s['signature'] = `${b64('{"alg":"none","kid":"a2a-acme-orch","typ":"a2a-capability+jws"}')}..${sig}`), 'alg'],
    ['4 segments', (s) => void (s['signature'] = `${header}..${sig}.`), 'malformed'],
    ['a non-empty middle segment', (s) => void (s['signature'] = `${header}.${b64('x')}.${sig}`), 'malformed'],
    ['2 segments', (s) => void (s['signature'] = `${header}.${sig}`), 'malformed'],
    ['a 50 MB signature', (s) => void (s['signature'] = huge), 'malformed'],
    ['a 50 MB name', (s) => void (s.card['name'] = huge), 'signature'],
    ['a number as signature', (s) => void (s['signature'] = 12), 'malformed'],
    ['an object as card', (s) => void (s['card'] = { nested: {} } as never), 'malformed'],
    ['a list of tools with null', (s) => void (s.card['advertised_tools'] = [null]), 'malformed'],
    ['a string cost cap', (s) => void ((s.card['policies'] as Record<string, unknown>)['cost_cap_usd'] = '12.5'), 'malformed'],
    ['NaN created_at', (s) => void (s.card['created_at'] = Number.NaN), 'malformed'],
    ['top-level alg RS256', (s) => void (s['alg'] = 'RS256'), 'alg'],
    ['an extra body field', (s) => void (s.card['x'] = 1), 'malformed'],
  ]

  it.each(cases)('%s', async (_name, change, reason) => {
    const value = JSON.parse(JSON.stringify(cardA())) as Record<string, unknown> & { card: Record<string, unknown> }
    change(value)
    const result = await verifyCapabilityCard(value as unknown as SignedCapabilityCard, { now: NOW })
    expect(result).toMatchObject({ ok: false, code: reason })
  })

  it.each<[string, unknown]>([
    ['null', null],
    ['a string', 'card'],
    ['a number', 42],
    ['an array', []],
    ['an empty object', {}],
  ])('a signed card that is %s', async (_name, value) => {
    expect(await verifyCapabilityCard(value as SignedCapabilityCard, { now: NOW })).toMatchObject({ ok: false, code: 'malformed' })
  })

  it('a kid mismatch between header and body', async () => {
    const value = JSON.parse(JSON.stringify(cardA())) as SignedCapabilityCard
    value.card.kid = 'someone-else'
    expect(await verifyCapabilityCard(value, { now: NOW })).toMatchObject({ ok: false, code: 'kid_mismatch' })
  })
})

describe('the times of an authentic card', () => {
  /** Card a with other times, signed by its own key, so that only the times can fail. */
  async function cardAt(createdAt: number, expiresAt: number): Promise<SignedCapabilityCard> {
    const card = { ...cardA().card, created_at: createdAt, expires_at: expiresAt }
    return {
      alg: 'EdDSA',
      card,
      signature: await signDetachedJws(capabilityCardSigningBytes(card), { alg: 'EdDSA', kid: card.kid, typ: 'a2a-capability+jws' }, cardAKey),
    }
  }

  it('expires_at not after created_at is refused as invalid_lifetime, whatever the time', async () => {
    for (const expiresAt of [1_700_000_000, 1_699_999_999]) {
      const result = await verifyCapabilityCard(await cardAt(1_700_000_000, expiresAt), { now: 1_700_000_000 })
      expect(result).toMatchObject({ ok: false, code: 'invalid_lifetime' })
    }
    expect(await verifyCapabilityCard(await cardAt(1_700_000_000, 1_700_000_000), { now: 1_700_000_000 })).toMatchObject({
      detail: 'expires_at 1700000000.0 is not after created_at 1700000000.0',
    })
  })

  it('a created_at beyond the clock skew is not yet valid; within it, or with another skew, it is', async () => {
    const card = await cardAt(1_700_000_000, 0)
    expect(await verifyCapabilityCard(card, { now: 1_700_000_000 - 301 })).toMatchObject({
      ok: false,
      code: 'not_yet_valid',
      detail: 'created_at 1700000000.0 is more than 300 s in the future',
    })
    expect((await verifyCapabilityCard(card, { now: 1_700_000_000 - 300 })).ok).toBe(true)
    expect((await verifyCapabilityCard(card, { now: 1_700_000_000 - 301, clockSkewSeconds: 600 })).ok).toBe(true)
    expect((await verifyCapabilityCard(card, { now: 1_700_000_000 - 301, checkExpiry: false })).ok).toBe(true)
    await expect(verifyCapabilityCard(card, { clockSkewSeconds: -1 })).rejects.toThrow(TypeError)
  })

  it('Bernstein cards with a negative or zero expires_at still read as never expiring', async () => {
    for (const expiresAt of [0, -1, -1_800_000_000]) {
      expect((await verifyCapabilityCard(await cardAt(1_700_000_000, expiresAt), { now: 1e10 })).ok, String(expiresAt)).toBe(true)
    }
  })
})
