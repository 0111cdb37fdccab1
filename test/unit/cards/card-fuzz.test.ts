import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CapabilityCardInvalid } from '../../../src/cards/capability-card.js'
import { checkCardConformance } from '../../../src/cards/card-conformance.js'
import { decodeCardFile, parseCardFile } from '../../../src/cards/card-file.js'
import { consumePeerCard, PeerCardRejected } from '../../../src/cards/consume-peer-card.js'
import { OPEN_REQUIREMENTS } from '../../../src/cards/policy-gate.js'
import { verifyCapabilityCard } from '../../../src/cards/verify-capability-card.js'
import { vectorText } from '../../helpers/vectors.js'
import { CARD_A_FINGERPRINT, NOW } from './fixtures.js'

const FILE = vectorText('capability_cards', 'card_a.signed.json')

/** Parse → verify → consume → conformance; the only exceptions allowed are the typed rejections. */
async function runEverything(text: string): Promise<boolean> {
  let verified = false
  try {
    const signed = parseCardFile(text)
    const result = await verifyCapabilityCard(signed, { now: NOW })
    verified = result.ok
    await consumePeerCard(signed, { trustedIssuerFingerprints: [CARD_A_FINGERPRINT], requirements: OPEN_REQUIREMENTS, now: NOW }).catch((error: unknown) => {
      if (!(error instanceof PeerCardRejected)) throw error
    })
  } catch (error) {
    if (!(error instanceof CapabilityCardInvalid)) throw error
  }
  try {
    const report = await checkCardConformance(decodeCardFile(text), NOW)
    expect(report.checks).toHaveLength(5)
  } catch (error) {
    if (!(error instanceof CapabilityCardInvalid)) throw error
  }
  return verified
}

const textMutation = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), text: fc.string({ minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
)

type TextMutation = typeof textMutation extends fc.Arbitrary<infer T> ? T : never

function applyText(text: string, mutation: TextMutation): string {
  const at = mutation.at % (text.length + 1)
  switch (mutation.kind) {
    case 'replace':
      return text.slice(0, at) + mutation.text + text.slice(at + mutation.text.length)
    case 'insert':
      return text.slice(0, at) + mutation.text + text.slice(at)
    case 'delete':
      return text.slice(0, at) + text.slice(at + mutation.length)
  }
}

/** Every path to a value inside the decoded file (object keys and array indices). */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [prefix]
  if (Array.isArray(value)) for (const [i, item] of value.entries()) out.push(...paths(item, [...prefix, i]))
  else if (typeof value === 'object' && value !== null) {
    for (const [key, member] of Object.entries(value)) out.push(...paths(member, [...prefix, key]))
  }
  return out
}

function setAt(root: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement
  const [head, ...rest] = path as [string | number, ...Array<string | number>]
  const copy = (Array.isArray(root) ? [...(root as unknown[])] : { ...(root as object) }) as Record<string | number, unknown>
  copy[head] = setAt(copy[head], rest, replacement)
  return copy
}

describe('random mutations of a valid card file', () => {
  it('a lone surrogate in any string field is a clean "malformed" rejection', async () => {
    const original = JSON.parse(FILE) as { card: Record<string, unknown> }
    for (const field of ['issuer', 'name', 'description']) {
      const text = JSON.stringify({ ...original, card: { ...original.card, [field]: 'x\ud800y' } })
      const verdict = await verifyCapabilityCard(parseCardFile(text), { now: 1700000100 })
      expect(verdict).toMatchObject({ ok: false, code: 'malformed' })
    }
  })

  it('character-level edits never make parse/verify/consume/conformance throw anything untyped', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(textMutation, { minLength: 1, maxLength: 4 }), async (mutations) => {
        const text = mutations.reduce(applyText, FILE)
        const verified = await runEverything(text)
        // A surviving valid signature means the edit did not change the card's meaning (e.g. whitespace).
        if (verified) expect(parseCardFile(text)).toEqual(parseCardFile(FILE))
      }),
      { numRuns: 400 },
    )
  })

  it('replacing any value with arbitrary JSON never throws anything untyped and never verifies a changed card', async () => {
    const original = JSON.parse(FILE) as unknown
    const allPaths = paths(original)
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...allPaths), fc.jsonValue({ maxDepth: 3 }), async (path, replacement) => {
        const mutated = setAt(original, path, replacement)
        const text = JSON.stringify(mutated, null, 2)
        const verified = await runEverything(text)
        if (verified) expect(parseCardFile(text)).toEqual(parseCardFile(FILE))
      }),
      { numRuns: 400 },
    )
  })
})
