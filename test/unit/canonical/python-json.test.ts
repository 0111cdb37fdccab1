import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  PyFloat,
  compareCodePoints,
  dumpsPython,
  fromPyValue,
  parsePythonJson,
  pythonCanonical,
  pythonCanonicalBytes,
  pythonFloatRepr,
  pythonJsonDecodeError,
  pythonRepr,
  toPyValue,
} from '../../../src/canonical/python-json.js'
import type { PyValue } from '../../../src/canonical/python-json.js'

describe('pythonFloatRepr', () => {
  // Expected texts are CPython's repr(float).
  const cases: Array<[number, string]> = [
    [0, '0.0'],
    [-0, '-0.0'],
    [12.5, '12.5'],
    [0.0015, '0.0015'],
    [1e-7, '1e-07'],
    [1e-5, '1e-05'],
    [0.0001, '0.0001'],
    [0.00012345, '0.00012345'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [9999999999999998, '9999999999999998.0'],
    [1e16 - 2, '9999999999999998.0'],
    [123456789012345680, '1.2345678901234568e+17'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [2.2250738585072014e-308, '2.2250738585072014e-308'],
    [1700000000.123456, '1700000000.123456'],
    [1700000000.1234567, '1700000000.1234567'],
    [1700000000, '1700000000.0'],
    [100, '100.0'],
    [0.1, '0.1'],
    [1 / 3, '0.3333333333333333'],
    [-1e-7, '-1e-07'],
    [1e22, '1e+22'],
    [2 ** 63, '9.223372036854776e+18'],
  ]
  it.each(cases)('repr(%s) = %s', (x, want) => {
    expect(pythonFloatRepr(x)).toBe(want)
  })

  it('refuses NaN and infinities (allow_nan=False)', () => {
    expect(() => pythonFloatRepr(Number.NaN)).toThrow(RangeError)
    expect(() => pythonFloatRepr(Number.POSITIVE_INFINITY)).toThrow('Out of range float values are not JSON compliant')
    expect(() => pythonCanonical(new PyFloat(Number.NEGATIVE_INFINITY))).toThrow(RangeError)
  })

  it('round-trips every finite double through Number()', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(Object.is(Number(pythonFloatRepr(x)), x)).toBe(true)
      }),
      { numRuns: 20_000 },
    )
  })

  it('uses exponent form exactly when the decimal exponent is < -4 or >= 16', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: 1e-300, max: 1e300 }), (x) => {
        const text = pythonFloatRepr(x)
        // The decimal exponent of the shortest digits, as JavaScript's own exponential form reports it.
        const exponent = Number(x.toExponential().split('e')[1])
        if (exponent < -4 || exponent >= 16) expect(text).toMatch(/^\d(\.\d+)?e[+-]\d{2,3}$/)
        else expect(text).toMatch(/^\d+\.\d+$/)
      }),
      { numRuns: 5_000 },
    )
  })
})

describe('parsePythonJson', () => {
  it('keeps the float/int distinction of each lexeme', () => {
    const value = parsePythonJson('{"f":1.0,"e":1e2,"i":1,"neg":-0,"z":0.0}') as Record<string, PyValue>
    expect(value['f']).toBeInstanceOf(PyFloat)
    expect(value['e']).toBeInstanceOf(PyFloat)
    expect(value['i']).toBe(1)
    expect(pythonCanonical(value)).toBe('{"e":100.0,"f":1.0,"i":1,"neg":0,"z":0.0}')
  })

  it('re-prints a lexeme as Python does, not as written', () => {
    expect(pythonCanonical(parsePythonJson('{"cost_usd":0.00150}'))).toBe('{"cost_usd":0.0015}')
    expect(pythonCanonical(parsePythonJson('[1E-7, 1.50E+16, 100.000]'))).toBe('[1e-07,1.5e+16,100.0]')
  })

  it('keeps big ints exact', () => {
    const value = parsePythonJson('[1099511627776, 18446744073709551616, -9007199254740993, 1700000000123456789]')
    expect(value).toEqual([2 ** 40, 2n ** 64n, -9007199254740993n, 1700000000123456789n])
    expect(pythonCanonical(value)).toBe('[1099511627776,18446744073709551616,-9007199254740993,1700000000123456789]')
  })

  it('lets the last of duplicate keys win, like json.loads', () => {
    expect(pythonCanonical(parsePythonJson('{"a":1,"b":2,"a":3}'))).toBe('{"a":3,"b":2}')
  })

  it('stores a "__proto__" key as data', () => {
    const value = parsePythonJson('{"__proto__":{"x":1}}')
    expect(Object.keys(value as object)).toEqual(['__proto__'])
    expect(pythonCanonical(value)).toBe('{"__proto__":{"x":1}}')
  })

  it('throws SyntaxError on invalid JSON, worded like Python on request', () => {
    const cases: Array<[string, string]> = [
      ['{"a":1', "Expecting ',' delimiter"],
      ['{"a"', "Expecting ':' delimiter"],
      ['{"a":', 'Expecting value'],
      ['[1', "Expecting ',' delimiter"],
      ['{"a":"x', 'Unterminated string starting at'],
      ['{a}', 'Expecting property name enclosed in double quotes'],
      ['{"a":1,}', 'Expecting property name enclosed in double quotes'],
      ['1 2', 'Extra data'],
      ['', 'Expecting value'],
      ['"\\q"', 'Invalid \\escape'],
      ['\ufeff{}', 'Unexpected UTF-8 BOM (decode using utf-8-sig)'],
    ]
    for (const [text, msg] of cases) {
      let caught: unknown
      try {
        parsePythonJson(text)
      } catch (error) {
        caught = error
      }
      expect(caught, text).toBeInstanceOf(SyntaxError)
      expect(pythonJsonDecodeError(caught, text).msg, text).toBe(msg)
    }
  })
})

describe('dumpsPython / pythonCanonical', () => {
  it('sorts keys by code point: astral characters after U+E000-U+FFFF', () => {
    const value = { 'k\u{1F600}': 1, 'k\uE000': 2, 'k\uFFFF': 3, ka: 4 }
    // JavaScript's default sort would put the astral key (a surrogate pair, D83D…) before U+E000.
    expect(Object.keys(value).sort()).toEqual(['ka', 'k\u{1F600}', 'k\uE000', 'k\uFFFF'])
    expect(pythonCanonical(value)).toBe('{"ka":4,"k\uE000":2,"k\uFFFF":3,"k\u{1F600}":1}')
    expect(compareCodePoints('\u{10000}', '\uFFFF')).toBeGreaterThan(0)
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0)
  })

  it('escapes like Python with ensure_ascii (lowercase hex, surrogate pairs, DEL)', () => {
    expect(dumpsPython('é\u2014😀\u007f')).toBe('"\\u00e9\\u2014\\ud83d\\ude00\\u007f"')
    expect(dumpsPython('"\\\n\r\t\b\f\u0001\u001f')).toBe('"\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f"')
  })

  it('leaves non-ASCII literal without ensure_ascii but still escapes controls', () => {
    expect(pythonCanonical('é\u2014😀\u007f"\u0001')).toBe('"é\u2014😀\u007f\\"\\u0001"')
  })

  it('uses Python default separators: ", " and ": " without indent, "," with indent', () => {
    const value = { b: [1, new PyFloat(2)], a: { c: null, d: true } }
    expect(dumpsPython(value)).toBe('{"b": [1, 2.0], "a": {"c": null, "d": true}}')
    expect(dumpsPython(value, { sortKeys: true })).toBe('{"a": {"c": null, "d": true}, "b": [1, 2.0]}')
    expect(dumpsPython({ a: [1, { b: [] }], c: {} }, { indent: 2 })).toBe('{\n  "a": [\n    1,\n    {\n      "b": []\n    }\n  ],\n  "c": {}\n}')
  })

  it('prints integral numbers as ints, other numbers and PyFloat as floats, bigint as int', () => {
    expect(pythonCanonical([1, 1.5, new PyFloat(1), 2n ** 64n, 2 ** 40, -0])).toBe('[1,1.5,1.0,18446744073709551616,1099511627776,0]')
  })

  it('encodes canonical bytes as UTF-8 and refuses lone surrogates as Python does', () => {
    expect(pythonCanonicalBytes({ m: '—' })).toEqual(Buffer.from('{"m":"\u2014"}', 'utf8'))
    expect(() => pythonCanonicalBytes('\ud800')).toThrow(RangeError)
    expect(dumpsPython('\ud800')).toBe('"\\ud800"')
  })

  it('is stable: parse → canonical → parse → canonical', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (json) => {
        const once = pythonCanonical(parsePythonJson(pythonCanonical(toPyValue(json))))
        const twice = pythonCanonical(parsePythonJson(once))
        expect(twice).toBe(once)
      }),
      { numRuns: 2_000 },
    )
  })
})

describe('toPyValue / fromPyValue / pythonRepr', () => {
  it('maps plain JS values to Python kinds and back', () => {
    const py = toPyValue({ n: 1, f: 1.5, s: 'x', l: [true, null] })
    expect(pythonCanonical(py)).toBe('{"f":1.5,"l":[true,null],"n":1,"s":"x"}')
    expect(fromPyValue(parsePythonJson('{"f":1.0,"b":18446744073709551616,"i":3}'))).toEqual({
      f: 1,
      b: 2n ** 64n,
      i: 3,
    })
    expect(() => toPyValue({ u: undefined })).toThrow(TypeError)
    expect(() => toPyValue(new Date())).toThrow(TypeError)
  })

  it("prints Python's repr for messages", () => {
    expect(pythonRepr('delete')).toBe("'delete'")
    expect(pythonRepr("it's")).toBe('"it\'s"')
    expect(pythonRepr({ kty: 'RSA', n: [1, new PyFloat(2)], x: null, t: true })).toBe("{'kty': 'RSA', 'n': [1, 2.0], 'x': None, 't': True}")
    expect(pythonRepr('a\u0085\u2028\n😀')).toBe("'a\\x85\\u2028\\n😀'")
  })
})
