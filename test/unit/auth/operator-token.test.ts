import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { secretMatcher, secretsEqual } from '../../../src/auth/operator-token.js'

const SECRET = 'op-3q2+7w_Z0-token-0123456789abcdef'

describe('secretMatcher', () => {
  const isSecret = secretMatcher(SECRET)

  it('accepts the secret and nothing else: prefixes, extensions, one changed character, other lengths', () => {
    expect(isSecret(SECRET)).toBe(true)
    for (const other of [
      '',
      SECRET.slice(0, -1),
      SECRET + 'x',
      'x' + SECRET.slice(1),
      SECRET.slice(0, -1) + 'g',
      SECRET.toUpperCase(),
      ` ${SECRET}`,
      `${SECRET}\n`,
    ]) {
      expect(isSecret(other), JSON.stringify(other)).toBe(false)
    }
  })

  it('compares bytes: the same number of characters in other bytes is refused, the same text in any form accepted', () => {
    const accented = secretMatcher('café-token')
    expect(accented('café-token')).toBe(true)
    expect(accented('cafe\u0301-token')).toBe(false) // same look, other code points
    expect(accented('cafe-token')).toBe(false) // one byte shorter
    expect(accented('caf\u00e9-token'.normalize('NFC'))).toBe(true)
  })

  it('agrees with string equality and with secretsEqual on any input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 48 }), fc.string({ unit: 'grapheme', maxLength: 48 }), (secret, presented) => {
        const matches = secretMatcher(secret)
        expect(matches(presented)).toBe(presented === secret)
        expect(matches(secret)).toBe(true)
        expect(matches(presented)).toBe(secretsEqual(presented, secret))
      }),
      { numRuns: 2000 },
    )
  })
})
