/**
 * JSON numbers that a JavaScript number cannot hold as they were sent. `JSON.parse` turns every number into an
 * IEEE-754 double and never complains: `1e309` becomes `Infinity` (stored and answered as `null`), and an integer
 * beyond 2^53 is rounded to the nearest double (`9007199254740993` becomes `9007199254740992`). Python's `json`, which
 * Bernstein uses, keeps such an int exact and reads such a float as `inf`. Storing the double would silently change
 * what the client sent, so such a request is refused instead.
 *
 * What is not refused, because the double is the value Python's `json` reads too: a float literal that rounds
 * (`0.1`, `9007199254740993.0`, `1e-400` → 0.0), and `-0`, which Python reads as the int 0.
 *
 * @module
 */
import { QUOTE, closingQuote } from '../canonical/json-text.js'

/** Why a number cannot be taken as sent. */
export type InexactNumberKind = 'overflow' | 'unsafe_integer'

/** The first number in a JSON text that cannot be taken as sent: where it is, and why. */
export interface InexactNumber {
  /** Keys and array indices from the top-level value down to the number (FastAPI's `loc` after `"body"`). */
  readonly path: readonly (string | number)[]
  readonly kind: InexactNumberKind
  /** The number as written. */
  readonly lexeme: string
}

export const OVERFLOW_MESSAGE = 'Number is out of range: its magnitude exceeds 1.7976931348623157e+308, the largest 64-bit float'
export const UNSAFE_INTEGER_MESSAGE = 'Integer is outside ±9007199254740991 (2^53 - 1), so it cannot be stored exactly'

/**
 * True when a parsed JSON value holds a number that may not be what the text said: a magnitude beyond
 * `Number.MAX_SAFE_INTEGER`. Every integer literal beyond ±(2^53 - 1) parses to such a number (rounding is monotonic
 * and 2^53 is a double), and so does every overflow (±Infinity). Float literals like `1e20` do too and are fine, so
 * a true here only means that the text must be looked at ({@link findInexactNumber}); a false means it need not be.
 * A walk over values, not text: it costs nothing per character of a long string. Iterative, so that any depth
 * `JSON.parse` accepted is safe.
 */
export function mayHoldInexactNumber(value: unknown): boolean {
  if (typeof value === 'number') return Math.abs(value) > Number.MAX_SAFE_INTEGER
  if (typeof value !== 'object' || value === null) return false
  // No array for the containers still to visit until a nested one turns up, and for...in rather than
  // Object.values: a small body then allocates nothing (this runs on every JSON request).
  let pending: object[] | undefined
  for (let next: object | undefined = value; next !== undefined; next = pending?.pop()) {
    if (Array.isArray(next)) {
      for (let i = 0; i < next.length; i++) {
        const item: unknown = next[i]
        if (typeof item === 'number') {
          if (Math.abs(item) > Number.MAX_SAFE_INTEGER) return true
        } else if (typeof item === 'object' && item !== null) {
          ;(pending ??= []).push(item)
        }
      }
    } else {
      for (const key in next) {
        // An own "__proto__" key (JSON.parse makes one) shadows the accessor, so this reads the data.
        const item: unknown = (next as Record<string, unknown>)[key]
        if (typeof item === 'number') {
          if (Math.abs(item) > Number.MAX_SAFE_INTEGER) return true
        } else if (typeof item === 'object' && item !== null) {
          ;(pending ??= []).push(item)
        }
      }
    }
  }
  return false
}

const MINUS = 0x2d
const DIGIT_0 = 0x30
const DIGIT_9 = 0x39
const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER)

/** Why the number lexeme cannot be taken as sent, or null when it can. */
export function inexactNumberKind(lexeme: string): InexactNumberKind | null {
  if (!/[.eE]/.test(lexeme)) {
    // An integer literal: Python's json makes it an int, exact at any size; a double holds it only up to 2^53 - 1.
    // JSON allows no leading zeros, so the digit count orders magnitudes, and equal counts compare as text.
    const digits = lexeme.charCodeAt(0) === MINUS ? lexeme.slice(1) : lexeme
    if (digits.length !== MAX_SAFE_DIGITS.length) return digits.length > MAX_SAFE_DIGITS.length ? 'unsafe_integer' : null
    return digits > MAX_SAFE_DIGITS ? 'unsafe_integer' : null
  }
  // A float literal: rounding to the nearest double is what Python's float() does too, except past the largest one.
  return Number.isFinite(Number(lexeme)) ? null : 'overflow'
}

function isDigit(code: number): boolean {
  return code >= DIGIT_0 && code <= DIGIT_9
}

/** The value at `path` inside a parsed JSON value (own properties only: a `"__proto__"` key is data), or undefined. */
function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  let at = value
  for (const step of path) {
    if (typeof at !== 'object' || at === null) return undefined
    at = Object.getOwnPropertyDescriptor(at, step)?.value
  }
  return at
}

/** One open array or object while scanning: the position inside it. */
interface Frame {
  readonly array: boolean
  /** Arrays: the index of the current item. */
  index: number
  /** Objects: where the current key's quoted text starts and ends; decoded only for a path that is reported. */
  keyStart: number
  keyEnd: number
  /** Objects: the next string is a key. */
  expectKey: boolean
}

function pathOf(text: string, frames: readonly Frame[]): (string | number)[] {
  return frames.map((f) => (f.array ? f.index : (JSON.parse(text.slice(f.keyStart, f.keyEnd + 1)) as string)))
}

/**
 * The first number, in text order, that cannot be taken as sent ({@link inexactNumberKind}), or null. `text` must
 * be JSON that `JSON.parse` accepted, and `parsed` what it returned (this is a scanner, not a validator). Numbers
 * inside strings and keys are text and are never looked at. Only a number that `parsed` still holds at its place
 * counts: one that a later duplicate key replaced with another value (`JSON.parse`, like Python's `json`, keeps the
 * last) is never stored. Strings are skipped with `indexOf` and numbers measured without slicing them, so that a
 * body pays only for the lexemes that could be too big: integers of 16 digits or more, floats with an exponent or
 * more than 308 integer digits.
 */
export function findInexactNumber(text: string, parsed: unknown): InexactNumber | null {
  const frames: Frame[] = []
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === QUOTE) {
      // The text parsed, so every string is closed; an unclosed one would end the scan.
      const closed = closingQuote(text, i)
      const end = closed < 0 ? text.length : closed
      const frame = frames[frames.length - 1]
      if (frame !== undefined && !frame.array && frame.expectKey) {
        frame.keyStart = i
        frame.keyEnd = end
        frame.expectKey = false
      }
      i = end
    } else if (code === 0x7b || code === 0x5b) {
      frames.push({ array: code === 0x5b, index: 0, keyStart: 0, keyEnd: 0, expectKey: code === 0x7b })
    } else if (code === 0x7d || code === 0x5d) {
      frames.pop()
    } else if (code === 0x2c) {
      const frame = frames[frames.length - 1]
      if (frame === undefined) continue
      if (frame.array) frame.index++
      else frame.expectKey = true
    } else if (code === MINUS || isDigit(code)) {
      const start = i
      if (code === MINUS) i++
      const integerStart = i
      while (isDigit(text.charCodeAt(i))) i++
      const integerDigits = i - integerStart
      let float = false
      let exponent = false
      if (text.charCodeAt(i) === 0x2e) {
        float = true
        i++
        while (isDigit(text.charCodeAt(i))) i++
      }
      const e = text.charCodeAt(i)
      if (e === 0x65 || e === 0x45) {
        float = exponent = true
        i++
        const sign = text.charCodeAt(i)
        if (sign === 0x2b || sign === MINUS) i++
        while (isDigit(text.charCodeAt(i))) i++
      }
      const candidate = float ? exponent || integerDigits > 308 : integerDigits >= MAX_SAFE_DIGITS.length
      if (candidate) {
        const lexeme = text.slice(start, i)
        const kind = inexactNumberKind(lexeme)
        if (kind !== null) {
          const path = pathOf(text, frames)
          if (valueAt(parsed, path) === Number(lexeme)) return { path, kind, lexeme }
        }
      }
      i--
    }
    // Anything else is whitespace, ':' or a letter of true/false/null, none of which starts or ends a value here.
  }
  return null
}
