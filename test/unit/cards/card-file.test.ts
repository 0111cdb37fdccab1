import { describe, expect, it } from 'vitest'
import { CapabilityCardInvalid } from '../../../src/cards/capability-card.js'
import { decodeCardFile, MAX_CARD_FILE_CHARS, parseCardFile, serializeCardFile } from '../../../src/cards/card-file.js'
import { issueCapabilityCard } from '../../../src/cards/issue-capability-card.js'
import { verifyCapabilityCard } from '../../../src/cards/verify-capability-card.js'
import { vectorBytes, vectorText } from '../../helpers/vectors.js'
import { cardAKey, NOW } from './fixtures.js'

const FILES = ['card_a.signed.json', 'card_a.tampered.json', 'card_a.expired.json'] as const

describe('card file', () => {
  it.each(FILES)('%s parses and re-serialises to the same bytes', (file) => {
    const bytes = vectorBytes('capability_cards', file)
    expect(Buffer.from(serializeCardFile(parseCardFile(bytes.toString('utf8'))), 'utf8').equals(bytes)).toBe(true)
  })

  it('writes Python floats, sorted keys, 2-space indent and no trailing newline', () => {
    const text = serializeCardFile(parseCardFile(vectorText('capability_cards', 'card_a.signed.json')))
    expect(text).toContain('"created_at": 1700000000.0,')
    expect(text).toContain('"cost_cap_usd": 12.5,')
    expect(text.startsWith('{\n  "alg": "EdDSA",\n  "card": {\n    "advertised_tools": [\n      "task_orchestration"')).toBe(true)
    expect(text.endsWith('}')).toBe(true)
  })

  it('spells small and integral floats as Python does, and escapes non-ASCII', async () => {
    const signed = await issueCapabilityCard({
      issuer: 'acmé',
      name: 'Acme 🚀 Orchestrator',
      description: 'naïve "quoted" \\ line\nbreak',
      tools: ['café'],
      policies: { cost_cap_usd: 0.000001, redaction_tier: 'standard', sandbox_profile: 'container' },
      ttlSeconds: 0,
      privateKey: cardAKey,
      now: 1_700_000_000.25,
    })
    const text = serializeCardFile(signed)
    expect(text).toContain('"cost_cap_usd": 1e-06,')
    expect(text).toContain('"created_at": 1700000000.25,')
    expect(text).toContain('"expires_at": 0.0,')
    expect(text).toContain('"issuer": "acm\\u00e9",')
    expect(text).toContain('"name": "Acme \\ud83d\\ude80 Orchestrator",')
    expect(text).toContain('"description": "na\\u00efve \\"quoted\\" \\\\ line\\nbreak",')
    expect(/^[\x00-\x7f]*$/.test(text)).toBe(true)
    const back = parseCardFile(text)
    expect(back).toEqual(signed)
    expect(serializeCardFile(back)).toBe(text)
    expect((await verifyCapabilityCard(back, { now: NOW })).ok).toBe(true)
  })

  it('accepts a file without alg (defaults to EdDSA) and int spellings of the floats', async () => {
    const text = vectorText('capability_cards', 'card_a.signed.json')
      .replace('  "alg": "EdDSA",\n', '')
      .replace('1700000000.0', '1700000000')
      .replace('1700003600.0', '17000036e2')
    const signed = parseCardFile(text)
    expect(signed.alg).toBe('EdDSA')
    expect(signed.card.expires_at).toBe(1_700_003_600)
    expect((await verifyCapabilityCard(signed, { now: NOW })).ok).toBe(true)
    expect(serializeCardFile(signed)).toBe(vectorText('capability_cards', 'card_a.signed.json'))
  })

  it('refuses text that is not JSON with a Python-style message', () => {
    const text = vectorText('capability_cards', 'card_a.signed.json').slice(0, -5)
    expect(() => parseCardFile(text)).toThrow(CapabilityCardInvalid)
    expect(() => parseCardFile('')).toThrow('Expecting value: line 1 column 1 (char 0)')
  })

  it('refuses oversized text before parsing it', () => {
    const text = ' '.repeat(MAX_CARD_FILE_CHARS + 1)
    expect(() => decodeCardFile(text)).toThrow('capability card file is larger than')
    expect(() => decodeCardFile(' '.repeat(50 * 1024 * 1024))).toThrow(CapabilityCardInvalid)
  })

  it('measures the cap in characters (code points): astral characters under it pass the size check whatever their code units', () => {
    // 600 000 emoji are 1 200 000 UTF-16 code units, but fewer characters than the cap: what follows is the JSON
    // parser's refusal of the text (the size check let it through), not the size check's.
    const astral = `"${'\u{1F600}'.repeat(600_000)}`
    expect(astral.length).toBeGreaterThan(MAX_CARD_FILE_CHARS)
    expect(() => decodeCardFile(astral)).toThrow(CapabilityCardInvalid)
    expect(() => decodeCardFile(astral)).not.toThrow('larger than')
    expect(() => decodeCardFile(`"${'\u{1F600}'.repeat(MAX_CARD_FILE_CHARS)}"`)).toThrow(
      `capability card file is larger than ${MAX_CARD_FILE_CHARS} characters`,
    )
  })

  it('decodes JSON that is not a card without judging it', () => {
    expect(decodeCardFile('{"card": 1.0}')).toEqual({ card: 1 })
    expect(() => parseCardFile('{"card": 1.0}')).toThrow(CapabilityCardInvalid)
  })
})
