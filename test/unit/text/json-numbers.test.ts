import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type InexactNumber, findInexactNumber, inexactNumberKind, mayHoldInexactNumber } from '../../../src/text/json-numbers.js'
import { fuzzSettings } from '../../helpers/fuzz.js'

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

describe('inexactNumberKind', () => {
  it.each([
    ['9007199254740991', null],
    ['-9007199254740991', null],
    ['9007199254740992', 'unsafe_integer'],
    ['-9007199254740992', 'unsafe_integer'],
    ['9007199254740993', 'unsafe_integer'],
    ['1000000000000000', null],
    ['9999999999999999', 'unsafe_integer'],
    ['10000000000000000', 'unsafe_integer'],
    ['1' + '0'.repeat(400), 'unsafe_integer'],
    ['0', null],
    ['-0', null],
    ['-0.0', null],
    ['1e309', 'overflow'],
    ['-1e309', 'overflow'],
    ['1E+309', 'overflow'],
    ['0.001e312', 'overflow'],
    ['2' + '0'.repeat(308) + '.5', 'overflow'],
    ['1' + '0'.repeat(308) + '.0', null],
    ['1.5e308', null],
    ['1.7976931348623157e308', null],
    ['1.7976931348623158e308', null],
    ['1.7976931348623159e308', 'overflow'],
    ['1e308', null],
    ['1e-400', null],
    ['1e20', null],
    ['9007199254740993.0', null],
    ['9.007199254740993e15', null],
  ] as const)('%s → %s', (lexeme, kind) => {
    expect(inexactNumberKind(lexeme)).toBe(kind)
  })

  it('refuses an integer literal exactly when it lies outside ±(2^53 - 1)', () => {
    const around = fc.oneof(
      fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }),
      fc.bigInt({ min: MAX_SAFE - 1000n, max: MAX_SAFE + 1000n }),
      fc.bigInt({ min: -MAX_SAFE - 1000n, max: -MAX_SAFE + 1000n }),
    )
    fc.assert(
      fc.property(around, (n) => {
        const outside = n > MAX_SAFE || n < -MAX_SAFE
        expect(inexactNumberKind(String(n))).toBe(outside ? 'unsafe_integer' : null)
      }),
      fuzzSettings(2000),
    )
  })
})

describe('findInexactNumber', () => {
  const find = (text: string): InexactNumber | null => findInexactNumber(text, JSON.parse(text))

  it.each([
    ['{"title":"nums","metadata":{"inf":1e309,"big":9007199254740993}}', { path: ['metadata', 'inf'], kind: 'overflow', lexeme: '1e309' }],
    ['{"a":[1, 2, [3, 9007199254740992]]}', { path: ['a', 2, 1], kind: 'unsafe_integer', lexeme: '9007199254740992' }],
    ['9007199254740993', { path: [], kind: 'unsafe_integer', lexeme: '9007199254740993' }],
    ['[{}, [], {"x": -1e309}]', { path: [2, 'x'], kind: 'overflow', lexeme: '-1e309' }],
    // No exponent, but 309 integer digits: the scanner must not skip it as a small float.
    [`[${'2' + '0'.repeat(308)}.5]`, { path: [0], kind: 'overflow', lexeme: '2' + '0'.repeat(308) + '.5' }],
    // Keys are decoded, escapes and all, and a "__proto__" key is a key like any other.
    ['{"k\\"e\\u0079": {"__proto__": 12345678901234567890}}', { path: ['k"ey', '__proto__'], kind: 'unsafe_integer', lexeme: '12345678901234567890' }],
  ])('%s', (text, expected) => {
    expect(find(text)).toEqual(expected)
  })

  it.each([
    '{"s":"9007199254740993","t":"1e309","u":"\\"1e309"}',
    '{"9007199254740993":1,"1e309":[2],"\\\\":"9007199254740993"}',
    '{"max":9007199254740991,"min":-9007199254740991,"f":1.5e308,"e":1e20,"z":-0,"zf":-0.0,"tiny":1e-400}',
    '[true,false,null,1e20,9007199254740993.0]',
  ])('%s: nothing to refuse', (text) => {
    expect(find(text)).toBeNull()
  })

  it('counts a number only where the parsed value kept it (the last of duplicated keys wins)', () => {
    expect(find('{"a":1e309,"a":1,"b":1e20}')).toBeNull()
    expect(find('{"a":1,"a":1e309}')).toEqual({ path: ['a'], kind: 'overflow', lexeme: '1e309' })
  })
})

/** A JSON value whose numbers are written as given lexemes, so that the text can say what JSON.stringify cannot. */
type Tree =
  | { readonly kind: 'number'; readonly lexeme: string }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'array'; readonly items: readonly Tree[] }
  | { readonly kind: 'object'; readonly members: readonly (readonly [string, Tree])[] }

const space = fc.constantFrom('', ' ', '\n\t ')
const tricky = fc.constantFrom('9007199254740993', '1e309', '-1e309', '"', '\\', '\\"1e309', '', '__proto__', 'é😀')
const stringArb = fc.oneof(fc.string({ maxLength: 8 }), tricky)
const lexemeArb = fc.oneof(
  fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }).map(String),
  fc.tuple(fc.bigInt({ min: MAX_SAFE - 3n, max: MAX_SAFE + 3n }), fc.boolean()).map(([n, negative]) => String(negative ? -n : n)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? '-0.0' : String(d))),
  fc.constantFrom('1e309', '-1e309', '1E400', '1.5e308', '1.7976931348623157e308', '1e-400', '-0', '0.0', '9007199254740993.0', '1e20', '1' + '0'.repeat(400)),
  fc.constantFrom('1.7976931348623158e308', '1.7976931348623159e308', '2' + '0'.repeat(308) + '.5', '1' + '0'.repeat(308) + '.0', '-' + '9'.repeat(309) + '.0'),
)
const treeArb: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    lexemeArb.map((lexeme): Tree => ({ kind: 'number', lexeme })),
    stringArb.map((s): Tree => ({ kind: 'text', text: JSON.stringify(s) })),
    fc.constantFrom('true', 'false', 'null').map((text): Tree => ({ kind: 'text', text })),
    fc.array(tie('tree'), { maxLength: 4 }).map((items): Tree => ({ kind: 'array', items })),
    fc.uniqueArray(fc.tuple(stringArb, tie('tree')), { maxLength: 4, selector: ([k]) => k }).map((members): Tree => ({ kind: 'object', members })),
  ),
})).tree

/** The text of a tree, and its numbers in text order with their paths. */
function render(tree: Tree, ws: string, path: (string | number)[], numbers: { path: (string | number)[]; lexeme: string }[]): string {
  switch (tree.kind) {
    case 'number':
      numbers.push({ path, lexeme: tree.lexeme })
      return tree.lexeme
    case 'text':
      return tree.text
    case 'array':
      return `[${ws}${tree.items.map((item, i) => render(item, ws, [...path, i], numbers)).join(`,${ws}`)}${ws}]`
    case 'object': {
      const members = tree.members.map(([key, value]) => `${JSON.stringify(key)}${ws}:${ws}${render(value, ws, [...path, key], numbers)}`)
      return `{${ws}${members.join(`,${ws}`)}${ws}}`
    }
  }
}

/** The oracle: an integer literal is bad outside ±(2^53 - 1) by BigInt arithmetic, a float literal when it overflows. */
function expectedFault(lexeme: string): InexactNumber['kind'] | null {
  if (/[.eE]/.test(lexeme)) return Number.isFinite(Number(lexeme)) ? null : 'overflow'
  const n = BigInt(lexeme)
  return n > MAX_SAFE || n < -MAX_SAFE ? 'unsafe_integer' : null
}

describe('findInexactNumber and mayHoldInexactNumber on generated JSON', () => {
  it('find the first number in text order that JSON.parse cannot hold as written, and only such a number', () => {
    fc.assert(
      fc.property(treeArb, space, (tree, ws) => {
        const numbers: { path: (string | number)[]; lexeme: string }[] = []
        const text = render(tree, ws, [], numbers)
        const parsed: unknown = JSON.parse(text)
        const first = numbers.find((n) => expectedFault(n.lexeme) !== null)
        const expected = first === undefined ? null : { path: first.path, kind: expectedFault(first.lexeme), lexeme: first.lexeme }
        expect(findInexactNumber(text, parsed)).toEqual(expected)
        // The cheap walk that decides whether to scan at all never misses one.
        if (expected !== null) expect(mayHoldInexactNumber(parsed)).toBe(true)
      }),
      fuzzSettings(1000),
    )
  })

  it('mayHoldInexactNumber is false for values whose numbers all lie within ±(2^53 - 1), at any depth', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const safe = JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'number' && Math.abs(v) > Number.MAX_SAFE_INTEGER ? 0 : v))) as unknown
        expect(mayHoldInexactNumber(safe)).toBe(false)
      }),
      fuzzSettings(500),
    )
    const deep = JSON.parse('['.repeat(50_000) + '1e309' + ']'.repeat(50_000)) as unknown
    expect(mayHoldInexactNumber(deep)).toBe(true)
  })
})
