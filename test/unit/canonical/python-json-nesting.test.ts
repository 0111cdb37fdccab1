import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  JSON_NESTING_MESSAGE,
  MAX_JSON_NESTING,
  UNRECOGNISED_DECODE_MESSAGE,
  jsonNestingOverflow,
  parsePythonJson,
  pythonCanonical,
  pythonJsonDecodeError,
  pythonJsonDecodeText,
} from '../../../src/canonical/python-json.js'

const arrays = (n: number): string => '['.repeat(n) + ']'.repeat(n)
const objects = (n: number): string => '{"a":'.repeat(n - 1) + '{}' + '}'.repeat(n - 1)

function parseError(text: string): unknown {
  try {
    parsePythonJson(text)
  } catch (error) {
    return error
  }
  throw new Error('parsed')
}

describe('parsePythonJson nesting limit', () => {
  it('is 1000 levels, the depth of Python’s default recursion limit and of the printers here', () => {
    expect(MAX_JSON_NESTING).toBe(1000)
    expect(JSON_NESTING_MESSAGE).toBe('Nesting deeper than 1000 levels')
  })

  it('accepts 1000 nested arrays or objects, and prints them back byte for byte', () => {
    for (const text of [arrays(1000), objects(1000)]) {
      const value = parsePythonJson(text)
      expect(pythonCanonical(value)).toBe(text.replace(/\s/g, ''))
    }
  })

  it('refuses the 1001st level with a SyntaxError at the bracket that is one too many', () => {
    const cases: Array<[string, string, number]> = [
      ['1001 arrays', arrays(1001), 1000],
      ['1001 objects', objects(1001), 1000 * 5],
      ['10 000 arrays', arrays(10_000), 1000],
      ['100 000 unclosed arrays', '['.repeat(100_000), 1000],
      ['100 000 unclosed objects', '{"a":'.repeat(100_000), 1000 * 5],
      ['inside an object member', `{"title":${'['.repeat(100_000)}`, 9 + 999],
      ['after a closed sibling', `[${arrays(999)},${'['.repeat(1000)}]`, 1 + 999 * 2 + 1 + 999],
    ]
    for (const [label, text, position] of cases) {
      const error = parseError(text)
      expect(error, label).toBeInstanceOf(SyntaxError)
      expect((error as Error).message, label).toBe(`Nesting deeper than 1000 levels at position ${position}`)
      expect(pythonJsonDecodeError(error, text), label).toEqual({ msg: JSON_NESTING_MESSAGE, pos: position, lineno: 1, colno: position + 1 })
    }
  })

  it('words the refusal like a JSONDecodeError, never with an engine’s message', () => {
    const text = `{"title":${'['.repeat(100_000)}`
    expect(pythonJsonDecodeText(parseError(text), text)).toBe('Nesting deeper than 1000 levels: line 1 column 1009 (char 1008)')
  })

  it('reports a syntax error before the overflowing bracket first, as a parser reading left to right would', () => {
    const early = `${'['.repeat(500)}1 ${'['.repeat(2000)}`
    expect(pythonJsonDecodeError(parseError(early), early)).toMatchObject({ msg: "Expecting ',' delimiter", pos: 502 })
    // The would-be 1001st bracket stands where no value may: that is the fault, not the depth.
    const misplaced = `${'['.repeat(1000)}1[]${']'.repeat(1000)}`
    expect(pythonJsonDecodeError(parseError(misplaced), misplaced)).toMatchObject({ msg: "Expecting ',' delimiter", pos: 1001 })
    const key = `${'{"a":'.repeat(999)}{[`
    expect(pythonJsonDecodeError(parseError(key), key)).toMatchObject({ msg: 'Expecting property name enclosed in double quotes', pos: 999 * 5 + 1 })
  })

  it('does not count brackets inside strings, escaped quotes included', () => {
    const inString = `["${'['.repeat(5000)}"]`
    expect(parsePythonJson(inString)).toEqual(['['.repeat(5000)])
    const escaped = `{"k":"\\"${'{'.repeat(5000)}\\\\","n":${arrays(999)}}`
    expect((parsePythonJson(escaped) as Record<string, unknown>)['k']).toBe(`"${'{'.repeat(5000)}\\`)
  })

  it('jsonNestingOverflow: a linear scan, -1 when within the limit', () => {
    expect(jsonNestingOverflow(arrays(1000))).toBe(-1)
    expect(jsonNestingOverflow(arrays(1001))).toBe(1000)
    expect(jsonNestingOverflow('[[[]]]', 2)).toBe(2)
    expect(jsonNestingOverflow('[[]][[]]', 2)).toBe(-1)
    expect(jsonNestingOverflow('["[[["]', 1)).toBe(-1)
    expect(jsonNestingOverflow('[' + '['.repeat(1_000_000))).toBe(1000)
  })

  it('jsonNestingOverflow agrees with the depth of any JSON text, strings full of quotes, backslashes and brackets included', () => {
    const depthOf = (value: unknown): number => (typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0)
    const text = fc.oneof(
      fc.json({ maxDepth: 6 }),
      fc.array(fc.string({ unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a') })).map((a) => JSON.stringify(a)),
    )
    fc.assert(
      fc.property(text, (t) => {
        const depth = depthOf(JSON.parse(t))
        const padded = t + ' '.repeat(20)
        expect(jsonNestingOverflow(padded, depth)).toBe(-1)
        if (depth > 0) expect(jsonNestingOverflow(padded, depth - 1)).toBeGreaterThanOrEqual(0)
      }),
      { seed: 20261130, numRuns: 500 },
    )
  })

  it('maps an error it does not recognise (a RangeError, another parser’s text) to a fixed message', () => {
    const text = '[1, 2'
    expect(pythonJsonDecodeError(new RangeError('Maximum call stack size exceeded'), text).msg).toBe(UNRECOGNISED_DECODE_MESSAGE)
    expect(pythonJsonDecodeError(new SyntaxError('Unexpected token \'x\', "[x]" is not valid JSON'), text).msg).toBe('Invalid JSON')
  })
})
