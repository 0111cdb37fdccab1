import { Ajv } from 'ajv'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { codePointLength } from '../../../src/text/unicode.js'

/** Python 3's `len()` of the same strings (`len("\U0001F600")` is 1, `len("\ud800")` is 1). */
const CASES: readonly (readonly [string, { given: string; want: number }])[] = [
  ['empty', { given: '', want: 0 }],
  ['ASCII', { given: 'port the parser', want: 15 }],
  ['BMP letters', { given: 'é中ß', want: 3 }],
  ['an astral character', { given: '\u{1F600}', want: 1 }],
  ['astral characters around ASCII', { given: 'a\u{1F600}b\u{10FFFF}', want: 4 }],
  ['a combining mark is its own code point', { given: 'e\u0301', want: 2 }],
  ['a ZWJ sequence is five code points', { given: '\u{1F469}\u200D\u{1F469}\u200D\u{1F467}', want: 5 }],
  ['a lone high surrogate', { given: 'a\uD800b', want: 3 }],
  ['a lone high surrogate at the end', { given: 'ab\uD800', want: 3 }],
  ['a lone low surrogate', { given: '\uDC00', want: 1 }],
  ['low then high is two lone surrogates', { given: '\uDC00\uD800', want: 2 }],
  ['a high surrogate before a pair', { given: '\uD800\uD83D\uDE00', want: 2 }],
]

describe('codePointLength', () => {
  it.each(CASES)('%s', (_name, { given, want }) => {
    expect(codePointLength(given)).toBe(want)
  })

  it("agrees with the validator's maxLength, and with string iteration, on any UTF-16 (lone surrogates too)", () => {
    const ajv = new Ajv()
    const utf16 = fc
      .array(fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0xd800, max: 0xdfff })), { maxLength: 40 })
      .map((units) => String.fromCharCode(...units))
    fc.assert(
      fc.property(utf16, (text) => {
        const n = codePointLength(text)
        expect(n).toBe([...text].length)
        // The text fits a maxLength of n and not of n - 1: ajv counts it as n characters too.
        expect(ajv.validate({ type: 'string', maxLength: n }, text)).toBe(true)
        if (n > 0) expect(ajv.validate({ type: 'string', maxLength: n - 1 }, text)).toBe(false)
      }),
    )
  })
})
