import { describe, expect, it } from 'vitest'
import { jcs, jcsText } from '../../../src/canonical/jcs.js'
import { vectorBytes, vectorText } from '../../helpers/vectors.js'

const CASES = ['arrays', 'french', 'structures', 'unicode', 'values', 'weird'] as const

describe('jcs (RFC 8785)', () => {
  it.each(CASES)('%s: canonical bytes equal the reference output', (name) => {
    const input: unknown = JSON.parse(vectorText('jcs', 'input', `${name}.json`))
    const expected = vectorBytes('jcs', 'output', `${name}.json`)
    expect(Buffer.from(jcs(input)).equals(expected)).toBe(true)
    const hex = vectorText('jcs', 'outhex', `${name}.txt`).trim().split(/\s+/).join('')
    expect(Buffer.from(jcs(input)).toString('hex')).toBe(hex)
  })

  it('the capability card body re-canonicalises to the signed bytes', () => {
    const body: unknown = JSON.parse(vectorText('capability_cards', 'card_a.jcs_body.bin'))
    expect(Buffer.from(jcs(body)).equals(vectorBytes('capability_cards', 'card_a.jcs_body.bin'))).toBe(true)
  })

  it('formats numbers like ES6 and sorts keys by UTF-16 code units', () => {
    expect(jcsText({ b: 10.0, a: -0, c: 1e-7, d: 1e21 })).toBe('{"a":0,"b":10,"c":1e-7,"d":1e+21}')
    expect(jcsText({ '\u{1F600}': 1, '\uE000': 2 })).toBe('{"\u{1F600}":1,"\uE000":2}')
  })

  it('drops undefined object members like JSON.stringify', () => {
    expect(jcsText({ a: 1, b: undefined })).toBe('{"a":1}')
  })

  const cycle: Record<string, unknown> = {}
  cycle['self'] = cycle
  let deep: unknown = 0
  for (let i = 0; i < 600; i += 1) deep = [deep]

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
    ['a bigint', 1n],
    ['NaN', Number.NaN],
    ['Infinity', { a: Number.POSITIVE_INFINITY }],
    ['a lone surrogate', '\uD800x'],
    ['a lone surrogate key', { '\uDC00': 1 }],
    ['undefined in an array', [1, undefined]],
    ['a Date', new Date(0)],
    ['a Map', new Map()],
    ['a cycle', cycle],
    ['very deep nesting', deep],
    ['a function member', { f: () => 1 }],
  ])('refuses %s with a TypeError', (_name, value) => {
    expect(() => jcs(value)).toThrow(TypeError)
  })

  it('accepts shared (non-cyclic) references', () => {
    const shared = { x: 1 }
    expect(jcsText([shared, shared])).toBe('[{"x":1},{"x":1}]')
  })
})
