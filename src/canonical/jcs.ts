/**
 * RFC 8785 JSON Canonicalization Scheme (JCS).
 *
 * Used for every signed JSON body (capability cards, v1.0 agent cards, JWS protected headers). Signing and
 * verification both go through {@link jcs}, so a canonicalisation bug cannot hide behind a round trip.
 *
 * @module
 */
import canonicalize from 'canonicalize'

/** Nesting deeper than this is refused rather than risking a stack overflow on hostile input. */
const MAX_DEPTH = 512

/** With the `u` flag, `\p{Cs}` matches only unpaired surrogates (a pair is one code point). */
const LONE_SURROGATE = /\p{Cs}/u

/**
 * Canonical JSON text of `value` (RFC 8785: UTF-16 key order, ES6 number formatting, minimal string escapes).
 *
 * @throws TypeError when `value` is not plain JSON data: `undefined` (except as an object member value, which is
 *   dropped like `JSON.stringify` does), functions, symbols, bigints, NaN/±Infinity, lone surrogates, class
 *   instances (including `Date`), cycles, or nesting deeper than 512.
 * @example jcsText({ b: 1, a: 10.0 }) // '{"a":10,"b":1}'
 */
export function jcsText(value: unknown): string {
  assertJsonData(value, 0, new Set())
  try {
    return canonicalize(value) as string
  } catch (cause) {
    // assertJsonData already covers canonicalize's own refusals; this keeps the contract if they ever diverge.
    throw new TypeError(`value is not JCS-serialisable: ${(cause as Error).message}`, { cause })
  }
}

/**
 * UTF-8 bytes of the canonical JSON of `value` (the form that gets signed).
 *
 * @throws TypeError as {@link jcsText}.
 * @example new TextDecoder().decode(jcs([1, 'é'])) // '[1,"é"]'
 */
export function jcs(value: unknown): Uint8Array {
  return new TextEncoder().encode(jcsText(value))
}

/**
 * The canonical form of one string, as {@link jcsText} writes it inside any value: for a body of known shape whose
 * members are already validated, `'{"a":' + jcsString(a) + ',"b":' + jcsNumber(b) + '}'` with the keys written in
 * UTF-16 order is its JCS text, without walking a generic object (tests compare the two on arbitrary bodies).
 *
 * @throws TypeError for a lone surrogate, as {@link jcsText}.
 */
export function jcsString(value: string): string {
  if (LONE_SURROGATE.test(value)) throw new TypeError('JCS cannot represent a string with a lone surrogate')
  // RFC 8785 §3.2.2.2: string serialisation is ECMAScript's JSON.stringify for well-formed strings.
  return JSON.stringify(value)
}

/**
 * The canonical form of one number (RFC 8785 §3.2.2.3: ECMAScript's Number serialisation; -0 is `0`).
 *
 * @throws TypeError for NaN and ±Infinity, as {@link jcsText}.
 */
export function jcsNumber(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`JCS cannot represent the number ${String(value)}`)
  return JSON.stringify(value)
}

function assertJsonData(value: unknown, depth: number, stack: Set<object>): void {
  if (value === null) return
  switch (typeof value) {
    case 'boolean':
      return
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`JCS cannot represent the number ${String(value)}`)
      return
    case 'string':
      if (LONE_SURROGATE.test(value)) throw new TypeError('JCS cannot represent a string with a lone surrogate')
      return
    case 'object':
      break
    default:
      throw new TypeError(`JCS cannot represent a value of type ${typeof value}`)
  }
  if (depth >= MAX_DEPTH) throw new TypeError(`JCS input is nested deeper than ${MAX_DEPTH}`)
  if (stack.has(value)) throw new TypeError('JCS input contains a cycle')
  stack.add(value)
  if (Array.isArray(value)) {
    for (const item of value) {
      if (item === undefined) throw new TypeError('JCS cannot represent undefined inside an array')
      assertJsonData(item, depth + 1, stack)
    }
  } else {
    const proto: unknown = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError('JCS input must contain only plain objects and arrays')
    }
    for (const [key, member] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key)) throw new TypeError('JCS cannot represent a key with a lone surrogate')
      if (member !== undefined) assertJsonData(member, depth + 1, stack)
    }
  }
  stack.delete(value)
}
