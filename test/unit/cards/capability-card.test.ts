import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jcs } from '../../../src/canonical/jcs.js'
import {
  CapabilityCardInvalid,
  capabilityCardFingerprint,
  capabilityCardSigningBytes,
  parseCapabilityCard,
  parseCapabilityCardBody,
} from '../../../src/cards/capability-card.js'
import { parseCardFile } from '../../../src/cards/card-file.js'
import { vectorBytes, vectorText } from '../../helpers/vectors.js'
import { CARD_A_FINGERPRINT } from './fixtures.js'
import { fuzzSettings } from '../../helpers/fuzz.js'

const signedA = (): Record<string, unknown> => JSON.parse(vectorText('capability_cards', 'card_a.signed.json')) as Record<string, unknown>
const bodyA = (): Record<string, unknown> => signedA()['card'] as Record<string, unknown>

function messageOf(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    if (error instanceof CapabilityCardInvalid) return error.message
    throw error
  }
  return 'no error'
}

describe('capability card body', () => {
  it('signing bytes of card a are card_a.jcs_body.bin', () => {
    const body = parseCapabilityCardBody(bodyA())
    expect(Buffer.from(capabilityCardSigningBytes(body)).equals(vectorBytes('capability_cards', 'card_a.jcs_body.bin'))).toBe(true)
  })

  it('signing bytes ignore members added to the object after parsing', () => {
    const body = parseCapabilityCardBody(bodyA())
    const withExtra = { ...body, extra: 'x', policies: { ...body.policies, more: 1 } }
    expect(capabilityCardSigningBytes(withExtra)).toEqual(capabilityCardSigningBytes(body))
  })

  it('fingerprints the embedded key', () => {
    expect(capabilityCardFingerprint(parseCapabilityCard(signedA()))).toBe(CARD_A_FINGERPRINT)
  })

  it('defaults a missing description to "" and a missing kid to a2a-<issuer>', () => {
    const body = bodyA()
    delete body['description']
    delete body['kid']
    const parsed = parseCapabilityCardBody(body)
    expect(parsed.description).toBe('')
    expect(parsed.kid).toBe('a2a-acme-orch')
  })

  const with_ = (key: string, value: unknown): Record<string, unknown> => ({ ...bodyA(), [key]: value })
  const withPolicy = (key: string, value: unknown): Record<string, unknown> => ({
    ...bodyA(),
    policies: { ...(bodyA()['policies'] as object), [key]: value },
  })
  const without = (key: string): Record<string, unknown> => {
    const body = bodyA()
    delete body[key]
    return body
  }

  it.each<[string, unknown, string]>([
    ['schema_version ""', with_('schema_version', ''), "CapabilityCard 'schema_version' must be a non-empty string"],
    ['schema_version 1 (number)', with_('schema_version', 1), "CapabilityCard 'schema_version' must be a non-empty string"],
    ['schema_version "2"', with_('schema_version', '2'), "CapabilityCard 'schema_version' must be '1', got '2'"],
    ['missing issuer', without('issuer'), "CapabilityCard 'issuer' must be a non-empty string"],
    ['empty name', with_('name', ''), "CapabilityCard 'name' must be a non-empty string"],
    ['name null', with_('name', null), "CapabilityCard 'name' must be a non-empty string"],
    ['description a number', with_('description', 3), "CapabilityCard 'description' must be a string"],
    ['tools not a list', with_('advertised_tools', 'code_review'), "CapabilityCard 'advertised_tools' must be a list of strings"],
    ['tools with a number', with_('advertised_tools', ['a', 1]), "CapabilityCard 'advertised_tools' must be a list of strings"],
    ['policies a list', with_('policies', []), "CapabilityCard 'policies' must be an object"],
    ['policies missing', without('policies'), "CapabilityCard 'policies' must be an object"],
    ['cost cap a string', withPolicy('cost_cap_usd', '10'), "CardPolicies 'cost_cap_usd' must be a number"],
    ['cost cap a bool', withPolicy('cost_cap_usd', true), "CardPolicies 'cost_cap_usd' must be a number"],
    ['cost cap Infinity', withPolicy('cost_cap_usd', Number.POSITIVE_INFINITY), "CardPolicies 'cost_cap_usd' must be a number"],
    ['negative cost cap', withPolicy('cost_cap_usd', -1), "CardPolicies 'cost_cap_usd' must be non-negative"],
    ['empty redaction tier', withPolicy('redaction_tier', ''), "CardPolicies 'redaction_tier' must be a non-empty string"],
    ['sandbox profile a number', withPolicy('sandbox_profile', 2), "CardPolicies 'sandbox_profile' must be a non-empty string"],
    ['unknown policy field', withPolicy('gpu', 'none'), "CardPolicies has unknown field(s): 'gpu'"],
    ['empty PEM', with_('public_key_pem', ''), "CapabilityCard 'public_key_pem' must be a non-empty string"],
    ['empty kid', with_('kid', ''), "CapabilityCard 'kid' must be a non-empty string"],
    ['created_at a string', with_('created_at', '1700000000'), "CapabilityCard 'created_at' must be a number"],
    ['expires_at missing', without('expires_at'), "CapabilityCard 'expires_at' must be a number"],
    ['expires_at a bigint-sized int', with_('expires_at', 10n ** 30n), "CapabilityCard 'expires_at' must be a number"],
    ['unknown body fields', { ...bodyA(), zeta: 1, extra: 2 }, "CapabilityCard has unknown field(s): 'extra', 'zeta'"],
    ['an array', [], 'CapabilityCard must be an object'],
    ['null', null, 'CapabilityCard must be an object'],
  ])('rejects %s', (_name, body, message) => {
    expect(messageOf(() => parseCapabilityCardBody(body))).toBe(message)
  })

  it.each<[string, unknown, string]>([
    ['a string', 'card', 'SignedCapabilityCard must be an object'],
    ['a missing card', { ...signedA(), card: undefined }, "SignedCapabilityCard 'card' is required"],
    ['a numeric signature', { ...signedA(), signature: 5 }, "SignedCapabilityCard 'signature' must be a non-empty string"],
    ['a numeric alg', { ...signedA(), alg: 5 }, "SignedCapabilityCard 'alg' must be a string"],
    ['an unknown top-level field', { ...signedA(), note: 'x' }, "SignedCapabilityCard has unknown field(s): 'note'"],
    [
      'a header kid that differs from the body kid',
      { ...signedA(), card: { ...bodyA(), kid: 'other-kid' } },
      "SignedCapabilityCard signature header kid does not match the card kid 'other-kid'",
    ],
  ])('rejects a signed card with %s', (_name, value, message) => {
    expect(messageOf(() => parseCapabilityCard(value))).toBe(message)
  })

  it('marks a kid mismatch with its own code', () => {
    try {
      parseCapabilityCard({ ...signedA(), card: { ...bodyA(), kid: 'other-kid' } })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(CapabilityCardInvalid)
      expect((error as CapabilityCardInvalid).code).toBe('kid_mismatch')
    }
  })

  it('defaults a missing alg to EdDSA and keeps another alg for the verifier to refuse', () => {
    const value = signedA()
    delete value['alg']
    expect(parseCapabilityCard(value).alg).toBe('EdDSA')
    expect(parseCapabilityCard({ ...signedA(), alg: 'RS256' }).alg).toBe('RS256')
  })

  it('copies the input instead of aliasing it', () => {
    const value = signedA()
    const parsed = parseCapabilityCard(value)
    ;(bodyA()['advertised_tools'] as string[]).push('x')
    ;((value['card'] as Record<string, unknown>)['advertised_tools'] as string[]).push('later')
    expect(parsed.card.advertised_tools).toEqual(['task_orchestration', 'code_review'])
    expect(parseCardFile(vectorText('capability_cards', 'card_a.signed.json'))).toEqual(parseCapabilityCard(signedA()))
  })
})

describe('capability card signing bytes, written directly', () => {
  // Numbers in every notation JCS formats (-0, 1e21, 5e-324...).
  // Any UTF-16 code unit (so lone surrogates too, which fast-check's string units never produce), plus pairs.
  const codeUnit = fc.oneof(
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    fc.constantFrom('\u00e9', '\u{1F600}', '"', '\\', '\u2028'),
  )
  const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: codeUnit, maxLength: 12 }))
  const number = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constantFrom(0, -0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308))
  const body = fc.record({
    schema_version: text,
    issuer: text,
    name: text,
    description: text,
    advertised_tools: fc.array(text, { maxLength: 5 }),
    policies: fc.record({ cost_cap_usd: number, redaction_tier: text, sandbox_profile: text }),
    public_key_pem: text,
    kid: text,
    created_at: number,
    expires_at: number,
  })

  it('are the generic JCS of the body, or the same refusal', () => {
    fc.assert(
      fc.property(body, (b) => {
        let generic: Uint8Array | TypeError
        try {
          generic = jcs(b)
        } catch (error) {
          generic = error as TypeError
        }
        if (generic instanceof TypeError) {
          expect(() => capabilityCardSigningBytes(b)).toThrow(TypeError)
        } else {
          expect(Buffer.from(capabilityCardSigningBytes(b)).equals(Buffer.from(generic))).toBe(true)
        }
      }),
      fuzzSettings(2000),
    )
  })
})
