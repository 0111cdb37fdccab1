/**
 * Python-compatible JSON: parse without losing the int/float distinction and print exactly what CPython's
 * `json.dumps` prints. Bernstein hashes and signs `json.dumps(..., sort_keys=True, separators=(",",":"),
 * ensure_ascii=False, allow_nan=False)` bytes (behaviour doc §10 item 1), which is not RFC 8785: floats keep `.0`
 * and use Python's `repr`, and keys sort by code point.
 *
 * @module
 */
import { parse as losslessParse } from 'lossless-json'
import { QUOTE, closingQuote } from './json-text.js'

/**
 * A number that Python holds as a `float`. `new PyFloat(1700000000)` prints `1700000000.0`, whereas the plain
 * number `1700000000` prints as the int `1700000000`.
 */
export class PyFloat {
  /** The IEEE-754 double. */
  readonly value: number

  constructor(value: number) {
    if (typeof value !== 'number') throw new TypeError('PyFloat value must be a number')
    this.value = value
  }

  /** Python's `repr` of the float (throws RangeError for NaN and infinities). */
  toString(): string {
    return pythonFloatRepr(this.value)
  }
}

/**
 * A JSON value as Python sees it. A plain `number` that is an integer is a Python int, a non-integer `number` is a
 * float; `bigint` is an int; `PyFloat` is always a float.
 */
export type PyValue = null | boolean | string | number | bigint | PyFloat | PyValue[] | { [key: string]: PyValue }

/** A JSON object as Python sees it. */
export type PyObject = { [key: string]: PyValue }

/** Options of {@link dumpsPython}; the names mirror `json.dumps` keyword arguments. */
export interface DumpsOptions {
  /** Pretty-print with this many spaces per level (Python `indent=`); switches the item separator to `,`. */
  indent?: number
  /** Escape everything outside printable ASCII as `\uXXXX` (Python's default is true). */
  ensureAscii?: boolean
  /** Sort object keys by Unicode code point. */
  sortKeys?: boolean
  /** Override Python's default separators `(item, key)`. */
  separators?: readonly [string, string]
  /** Print NaN/Infinity as Python does with `allow_nan=True`. Off here: every Bernstein format forbids them. */
  allowNan?: boolean
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER)

function parseNumberLexeme(lexeme: string): number | bigint | PyFloat {
  // Python's json module makes a float of any lexeme with a fraction or an exponent, an int otherwise.
  if (/[.eE]/.test(lexeme)) return new PyFloat(Number(lexeme))
  const big = BigInt(lexeme)
  if (big <= MAX_SAFE && big >= MIN_SAFE) return Number(big)
  return big
}

function lastKeyWins(info: { newValue: unknown }): unknown {
  // Python's json.loads keeps the last value of a duplicated key (dict assignment).
  return info.newValue
}

/**
 * The deepest nesting of arrays and objects {@link parsePythonJson} accepts: 1000 containers inside one another.
 * Python's `json` module recurses once per level and gives up at the interpreter's recursion limit (1000 by default,
 * a little less in practice), so Bernstein neither writes nor reads anything deeper; the printers here stop at the
 * same depth. The limit also bounds this parser's own recursion, which would otherwise end in a RangeError
 * ("Maximum call stack size exceeded") a few thousand levels down.
 */
export const MAX_JSON_NESTING = 1000

/** The message of the SyntaxError {@link parsePythonJson} throws beyond {@link MAX_JSON_NESTING}. */
export const JSON_NESTING_MESSAGE = `Nesting deeper than ${MAX_JSON_NESTING} levels`

const OPEN_BRACKET = 0x5b
const OPEN_BRACE = 0x7b
const CLOSE_BRACKET = 0x5d
const CLOSE_BRACE = 0x7d

/**
 * The index of the first `[` or `{` outside a string that opens a container deeper than `limit`, or -1. A linear scan
 * without recursion, so it is safe on any text: strings (escapes included) are skipped, everything else is ignored.
 * On text that is not JSON the answer is only meaningful up to the first syntax error, which is all a parser needs.
 */
export function jsonNestingOverflow(text: string, limit: number = MAX_JSON_NESTING): number {
  if (typeof text !== 'string') throw new TypeError('jsonNestingOverflow expects a string')
  // Opening limit + 1 containers takes at least limit + 1 characters.
  if (text.length <= limit) return -1
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === QUOTE) {
      const end = closingQuote(text, i)
      if (end < 0) return -1
      i = end
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return i
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--
    }
  }
  return -1
}

function losslessParsePython(text: string): PyValue {
  return losslessParse(text, null, { parseNumber: parseNumberLexeme, onDuplicateKey: lastKeyWins }) as PyValue
}

/** The character offset a lossless-json SyntaxError names (`... at position N`), or -1. */
function syntaxErrorPosition(error: unknown): number {
  const match = error instanceof SyntaxError ? /at position (\d+)/.exec(error.message) : null
  return match ? Number(match[1]) : -1
}

/**
 * Parses JSON text the way Python's `json.loads` does, keeping number kinds: a lexeme with `.` or an exponent becomes
 * a {@link PyFloat}; any other number is an int (a `number` when safe, a `bigint` beyond 2^53). Duplicate keys: the
 * last one wins. Arrays and objects may nest {@link MAX_JSON_NESTING} levels deep; the first error in text order is
 * reported, so a syntax error before the overflowing bracket wins over the nesting error.
 *
 * @throws SyntaxError when the text is not valid JSON, or nests deeper than {@link MAX_JSON_NESTING} levels
 * (message {@link JSON_NESTING_MESSAGE} `at position N`, N being the offset of the bracket that is one too many).
 * @example
 * const value = parsePythonJson('{"created_at": 1700000000.0, "count": 1}')
 * console.log(value) // { created_at: PyFloat { value: 1700000000 }, count: 1 }: created_at stays a float, count an int
 */
export function parsePythonJson(text: string): PyValue {
  if (typeof text !== 'string') throw new TypeError('parsePythonJson expects a string')
  const overflow = jsonNestingOverflow(text)
  if (overflow >= 0) {
    // The text up to and including the overflowing bracket nests one level too deep at most, so parsing it is safe.
    // It cannot succeed (that bracket is never closed); an error before the bracket, or at it (the bracket stands
    // where no value may), is the text's real first fault. Only an error past it means the bracket opened a value.
    try {
      losslessParsePython(text.slice(0, overflow + 1))
    } catch (error) {
      const at = syntaxErrorPosition(error)
      if (at >= 0 && at <= overflow) throw error
    }
    throw new SyntaxError(`${JSON_NESTING_MESSAGE} at position ${overflow}`)
  }
  return losslessParsePython(text)
}

/**
 * Python's `repr(float)`: the shortest digits that round-trip, exponent form when the decimal exponent is below -4 or
 * at least 16 (`1e-07`, `1e+16`, `1.5e+16`), and `.0` on integral values in fixed form (`100.0`, `-0.0`).
 *
 * @throws RangeError for NaN and infinities (Python's `allow_nan=False`).
 */
export function pythonFloatRepr(x: number): string {
  if (typeof x !== 'number') throw new TypeError('pythonFloatRepr expects a number')
  if (!Number.isFinite(x)) throw new RangeError('Out of range float values are not JSON compliant')
  const negative = x < 0 || Object.is(x, -0)
  // toExponential() without an argument gives the shortest round-trip digits, the same choice as Python's repr.
  const expForm = Math.abs(x).toExponential()
  const ePos = expForm.indexOf('e')
  const digits = expForm.slice(0, ePos).replace('.', '')
  const exponent = Number(expForm.slice(ePos + 1))
  let body: string
  if (exponent < -4 || exponent >= 16) {
    const mantissa = digits.length > 1 ? `${digits[0] ?? ''}.${digits.slice(1)}` : digits
    const expAbs = Math.abs(exponent)
    body = `${mantissa}e${exponent < 0 ? '-' : '+'}${expAbs < 10 ? '0' : ''}${expAbs}`
  } else if (exponent < 0) {
    body = `0.${'0'.repeat(-exponent - 1)}${digits}`
  } else if (digits.length <= exponent + 1) {
    body = `${digits}${'0'.repeat(exponent + 1 - digits.length)}.0`
  } else {
    body = `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`
  }
  return negative ? `-${body}` : body
}

function floatText(x: number, allowNan: boolean): string {
  if (!Number.isFinite(x)) {
    if (!allowNan) throw new RangeError('Out of range float values are not JSON compliant')
    return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity'
  }
  return pythonFloatRepr(x)
}

function intText(x: number): string {
  if (Number.isSafeInteger(x)) return x === 0 ? '0' : String(x)
  return BigInt(x).toString()
}

const NEEDS_ESCAPE = /[\u0000-\u001f"\\]/
const NON_PRINTABLE_ASCII = /[^\u0020-\u007e]/
const LONE_SURROGATE = /[\ud800-\udfff]/u
const SHORT_ESCAPES: Record<number, string> = {
  34: '\\"',
  92: '\\\\',
  10: '\\n',
  13: '\\r',
  9: '\\t',
  8: '\\b',
  12: '\\f',
}

function hex4(code: number): string {
  return '\\u' + code.toString(16).padStart(4, '0')
}

function quoteString(s: string, ensureAscii: boolean): string {
  if (ensureAscii) {
    if (!NON_PRINTABLE_ASCII.test(s) && !NEEDS_ESCAPE.test(s)) return `"${s}"`
    let out = '"'
    for (let i = 0; i < s.length; i++) {
      const code = s.charCodeAt(i)
      const short = SHORT_ESCAPES[code]
      if (short !== undefined) out += short
      // Code units, not code points: an astral character comes out as its surrogate pair, as in Python.
      else if (code < 0x20 || code > 0x7e) out += hex4(code)
      else out += s[i]
    }
    return out + '"'
  }
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`
  // JSON.stringify uses the same escapes as Python's ensure_ascii=False encoder (short forms, lowercase \u00xx),
  // except that it escapes lone surrogates, which Python writes raw.
  if (!LONE_SURROGATE.test(s)) return JSON.stringify(s)
  let out = '"'
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i)
    const short = SHORT_ESCAPES[code]
    if (short !== undefined) out += short
    else if (code < 0x20) out += hex4(code)
    else out += s[i]
  }
  return out + '"'
}

function isSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdfff
}

/**
 * Compares two strings by Unicode code point, as Python's `sorted` does for `str`. JavaScript's default order is by
 * UTF-16 code unit, which differs between astral characters and U+E000–U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i)
    const cb = b.charCodeAt(i)
    if (ca === cb) continue
    if (!isSurrogate(ca) && !isSurrogate(cb)) return ca - cb
    return compareCodePointArrays(a, b)
  }
  return a.length - b.length
}

function compareCodePointArrays(a: string, b: string): number {
  const pa = Array.from(a)
  const pb = Array.from(b)
  const n = Math.min(pa.length, pb.length)
  for (let i = 0; i < n; i++) {
    const ca = (pa[i] ?? '').codePointAt(0) ?? 0
    const cb = (pb[i] ?? '').codePointAt(0) ?? 0
    if (ca !== cb) return ca - cb
  }
  return pa.length - pb.length
}

interface Printer {
  indent: number | undefined
  ensureAscii: boolean
  sortKeys: boolean
  itemSep: string
  keySep: string
  allowNan: boolean
}

function isPlainObject(value: object): value is PyObject {
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

// Deeper nesting than this is treated as a cycle (Python's encoder would hit its recursion limit first). The same as
// the parser's limit: whatever parsePythonJson returns can be printed.
const MAX_DEPTH = MAX_JSON_NESTING

// Keys repeat across records (every log entry has the same 21), so their quoted forms are worth remembering.
const quotedKeyCache = new Map<string, string>()
const quotedKeyCacheAscii = new Map<string, string>()

function quoteKey(key: string, ensureAscii: boolean): string {
  const cache = ensureAscii ? quotedKeyCacheAscii : quotedKeyCache
  let quoted = cache.get(key)
  if (quoted === undefined) {
    quoted = quoteString(key, ensureAscii)
    if (cache.size < 4096) cache.set(key, quoted)
  }
  return quoted
}

function hasHighCodeUnit(key: string): boolean {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) >= 0xd800) return true
  return false
}

function sortKeysByCodePoint(keys: string[]): void {
  // The native sort orders by UTF-16 code unit, which equals code point order unless a key holds a surrogate or a
  // character in U+E000–U+FFFF; only then pay for the comparator.
  if (keys.some(hasHighCodeUnit)) keys.sort(compareCodePoints)
  else keys.sort()
}

function printValue(value: PyValue, p: Printer, level: number): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false'
    case 'string':
      return quoteString(value, p.ensureAscii)
    case 'number':
      return Number.isInteger(value) ? intText(value) : floatText(value, p.allowNan)
    case 'bigint':
      return value.toString()
    case 'object':
      break
    default:
      throw new TypeError(`Object of type ${typeof value} is not JSON serializable`)
  }
  if (value instanceof PyFloat) return floatText(value.value, p.allowNan)
  if (level >= MAX_DEPTH) throw new TypeError('Circular reference detected')
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    const parts = value.map((item) => printValue(item, p, level + 1))
    return wrap('[', ']', parts, p, level)
  }
  if (!isPlainObject(value)) throw new TypeError('Object of this class is not JSON serializable')
  const keys = Object.keys(value)
  if (keys.length === 0) return '{}'
  if (p.sortKeys) sortKeysByCodePoint(keys)
  if (p.indent === undefined) {
    let out = '{'
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string
      if (i > 0) out += p.itemSep
      out += quoteKey(key, p.ensureAscii) + p.keySep + printValue(value[key] as PyValue, p, level + 1)
    }
    return out + '}'
  }
  const parts = keys.map((key) => quoteKey(key, p.ensureAscii) + p.keySep + printValue(value[key] as PyValue, p, level + 1))
  return wrap('{', '}', parts, p, level)
}

function wrap(open: string, close: string, parts: string[], p: Printer, level: number): string {
  if (p.indent === undefined) return open + parts.join(p.itemSep) + close
  const inner = '\n' + ' '.repeat(p.indent * (level + 1))
  const outer = '\n' + ' '.repeat(p.indent * level)
  return open + inner + parts.join(p.itemSep + inner) + outer + close
}

/**
 * Exactly Python's `json.dumps(value, indent=…, sort_keys=…, ensure_ascii=…)`. Python's default separators are
 * `(', ', ': ')` without indent and `(',', ': ')` with it. `ensureAscii` defaults to true, as in Python; NaN and
 * infinities throw unless `allowNan` is set.
 */
export function dumpsPython(value: PyValue, options: DumpsOptions = {}): string {
  const indent = options.indent
  if (indent !== undefined && (!Number.isInteger(indent) || indent < 0)) {
    throw new TypeError('indent must be a non-negative integer')
  }
  const [itemSep, keySep] = options.separators ?? (indent === undefined ? [', ', ': '] : [',', ': '])
  const printer: Printer = {
    indent,
    ensureAscii: options.ensureAscii ?? true,
    sortKeys: options.sortKeys ?? false,
    itemSep,
    keySep,
    allowNan: options.allowNan ?? false,
  }
  return printValue(value, printer, 0)
}

const CANONICAL: Printer = {
  indent: undefined,
  ensureAscii: false,
  sortKeys: true,
  itemSep: ',',
  keySep: ':',
  allowNan: false,
}

/**
 * Bernstein's canonical JSON text: `json.dumps(sort_keys=True, separators=(",",":"), ensure_ascii=False,
 * allow_nan=False)`.
 */
export function pythonCanonical(value: PyValue): string {
  return printValue(value, CANONICAL, 0)
}

/**
 * {@link pythonCanonical} encoded as UTF-8, the bytes Bernstein hashes and signs.
 *
 * @throws RangeError on a lone surrogate, which Python's UTF-8 codec refuses to encode.
 */
export function pythonCanonicalBytes(value: PyValue): Buffer {
  const text = pythonCanonical(value)
  const lone = LONE_SURROGATE.exec(text)
  if (lone) {
    throw new RangeError(
      `'utf-8' codec can't encode character '\\u${(lone[0].charCodeAt(0) ?? 0).toString(16)}' in position ${lone.index}: surrogates not allowed`,
    )
  }
  return Buffer.from(text, 'utf8')
}

/**
 * Converts a plain JSON-like JS value (as `JSON.parse` returns) into a {@link PyValue}: integral numbers become ints,
 * other numbers floats. `PyFloat` and `bigint` pass through.
 *
 * @throws TypeError for values JSON cannot hold (undefined, functions, symbols, class instances).
 */
export function toPyValue(jsValue: unknown): PyValue {
  if (jsValue === null) return null
  switch (typeof jsValue) {
    case 'boolean':
    case 'string':
    case 'bigint':
      return jsValue
    case 'number':
      return Number.isInteger(jsValue) ? jsValue : new PyFloat(jsValue)
    case 'object':
      break
    default:
      throw new TypeError(`Object of type ${typeof jsValue} is not JSON serializable`)
  }
  if (jsValue instanceof PyFloat) return jsValue
  if (Array.isArray(jsValue)) return jsValue.map((item: unknown) => toPyValue(item))
  if (!isPlainObject(jsValue)) throw new TypeError('Object of this class is not JSON serializable')
  const out: PyObject = {}
  for (const key of Object.keys(jsValue)) {
    defineKey(out, key, toPyValue((jsValue as Record<string, unknown>)[key]))
  }
  return out
}

/**
 * Converts a {@link PyValue} back to a plain JS value: floats become numbers, ints numbers when safe. An int outside
 * the safe range stays a `bigint` rather than silently losing digits.
 */
export function fromPyValue(value: PyValue): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint' && value <= MAX_SAFE && value >= MIN_SAFE) return Number(value)
    return value
  }
  if (value instanceof PyFloat) return value.value
  if (Array.isArray(value)) return value.map((item) => fromPyValue(item))
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) defineKey(out, key, fromPyValue(value[key] as PyValue))
  return out
}

function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  // A plain assignment of "__proto__" would change the prototype instead of storing the key.
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/** True for a JSON object (not an array, not a PyFloat). */
export function isPyObject(value: PyValue | undefined): value is PyObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof PyFloat)
}

/** True for a Python int: a `bigint`, or an integral plain `number`. */
export function isPyInt(value: PyValue | undefined): value is number | bigint {
  return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))
}

/** True for a Python float: a `PyFloat` or a non-integral plain `number`. */
export function isPyFloat(value: PyValue | undefined): value is number | PyFloat {
  return value instanceof PyFloat || (typeof value === 'number' && !Number.isInteger(value))
}

// ---------------------------------------------------------------------------
// Python's wording, for error messages that must match Bernstein's text
// ---------------------------------------------------------------------------

/** Python's type name of a value (`type(x).__name__`), as it appears in Python exception texts. */
export function pythonTypeName(value: PyValue | undefined): string {
  if (value === null || value === undefined) return 'NoneType'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'string') return 'str'
  if (isPyInt(value)) return 'int'
  if (isPyFloat(value)) return 'float'
  if (Array.isArray(value)) return 'list'
  return 'dict'
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u

function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  let out = quote
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += '\\' + ch
    else if (ch === '\t') out += '\\t'
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      const cp = ch.codePointAt(0) ?? 0
      if (cp < 0x100) out += '\\x' + cp.toString(16).padStart(2, '0')
      else if (cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0')
      else out += '\\U' + cp.toString(16).padStart(8, '0')
    } else out += ch
  }
  return out + quote
}

/** Python's `repr()` of a JSON value (`'text'`, `None`, `True`, `1.0`, `{'a': [1, 2]}`), for `{x!r}` in messages. */
export function pythonRepr(value: PyValue | undefined): string {
  if (value === null || value === undefined) return 'None'
  if (typeof value === 'boolean') return value ? 'True' : 'False'
  if (typeof value === 'string') return reprString(value)
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return intText(value)
    return reprFloat(value)
  }
  if (value instanceof PyFloat) return reprFloat(value.value)
  if (Array.isArray(value)) return '[' + value.map((item) => pythonRepr(item)).join(', ') + ']'
  return (
    '{' +
    Object.keys(value)
      .map((k) => `${reprString(k)}: ${pythonRepr(value[k])}`)
      .join(', ') +
    '}'
  )
}

function reprFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan'
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf'
  return pythonFloatRepr(x)
}

/** Python's `str()` of a JSON value: the text itself for strings, `repr()` for everything else. */
export function pythonStr(value: PyValue | undefined): string {
  return typeof value === 'string' ? value : pythonRepr(value)
}

/** Where and why JSON text failed to parse, worded like Python's `json.JSONDecodeError`. */
export interface PythonJsonDecodeError {
  /** Python's `exc.msg`, e.g. `Expecting ',' delimiter`. */
  msg: string
  /** Character offset of the failure (as reported by the parser; may differ slightly from Python's). */
  pos: number
  lineno: number
  colno: number
}

// lossless-json message prefixes mapped to the message CPython's decoder gives for the same fault.
const DECODE_MESSAGES: ReadonlyArray<readonly [string, string]> = [
  ["Comma ',' expected", "Expecting ',' delimiter"],
  ["Colon ':' expected", "Expecting ':' delimiter"],
  ['JSON value expected', 'Expecting value'],
  ['Array item expected', 'Expecting value'],
  ['Object value expected', 'Expecting value'],
  ['Invalid number', 'Expecting value'],
  ['Expected end of input', 'Extra data'],
  ['End of string', 'Unterminated string starting at'],
  ['Quoted object key expected', 'Expecting property name enclosed in double quotes'],
  ['Invalid character', 'Invalid control character at'],
  ['Invalid escape character', 'Invalid \\escape'],
  ['Invalid unicode character', 'Invalid \\uXXXX escape'],
]

/** The `msg` of an error {@link pythonJsonDecodeError} does not recognise: a fixed text, never an engine's message. */
export const UNRECOGNISED_DECODE_MESSAGE = 'Invalid JSON'

/**
 * Translates a {@link parsePythonJson} SyntaxError into the message Python's `json.loads` would give for the same
 * text. Covers the common faults (truncation, missing delimiters, bad escapes) and the nesting limit
 * ({@link JSON_NESTING_MESSAGE}); anything else (another parser's error, a RangeError) becomes
 * {@link UNRECOGNISED_DECODE_MESSAGE}, so that engine internals never reach a message built from it.
 */
export function pythonJsonDecodeError(error: unknown, text: string): PythonJsonDecodeError {
  const message = error instanceof Error ? error.message : String(error)
  const posMatch = /position (\d+)/.exec(message)
  const pos = posMatch ? Number(posMatch[1]) : text.length
  let msg: string
  if (text.charCodeAt(0) === 0xfeff) {
    msg = 'Unexpected UTF-8 BOM (decode using utf-8-sig)'
  } else if (/^\s*$/.test(text)) {
    msg = 'Expecting value'
  } else if (message.startsWith('Quoted object key or end of object') || message.startsWith('Array item or end of array')) {
    // At the end of input Python reports what was missing: a first key/item after an opening bracket, else a comma.
    const before = text.slice(0, pos).trimEnd()
    const last = before[before.length - 1]
    if (last === '{') msg = 'Expecting property name enclosed in double quotes'
    else if (last === '[') msg = 'Expecting value'
    else msg = "Expecting ',' delimiter"
  } else if (message.startsWith(JSON_NESTING_MESSAGE)) {
    msg = JSON_NESTING_MESSAGE
  } else {
    msg = UNRECOGNISED_DECODE_MESSAGE
    for (const [prefix, python] of DECODE_MESSAGES) {
      if (message.startsWith(prefix)) {
        msg = python
        break
      }
    }
  }
  const head = text.slice(0, pos)
  const lineno = head.split('\n').length
  const colno = pos - (head.lastIndexOf('\n') + 1) + 1
  return { msg, pos, lineno, colno }
}

/** `str(exc)` of Python's `JSONDecodeError`: `<msg>: line L column C (char P)`. */
export function pythonJsonDecodeText(error: unknown, text: string): string {
  const e = pythonJsonDecodeError(error, text)
  return `${e.msg}: line ${e.lineno} column ${e.colno} (char ${e.pos})`
}
