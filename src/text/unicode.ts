const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * The path of the first string (or object key) holding a lone UTF-16 surrogate. JSON's `\uD800` escape can
 * smuggle one in, but it is not Unicode: it cannot be stored as UTF-8, hashed canonically or signed.
 */
export function findLoneSurrogate(value: unknown, path: (string | number)[] = [], depth = 0): (string | number)[] | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : null
  if (typeof value !== 'object' || value === null || depth > 200) return null
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findLoneSurrogate(value[i], [...path, i], depth + 1)
      if (found) return found
    }
    return null
  }
  for (const [key, item] of Object.entries(value)) {
    if (LONE_SURROGATE.test(key)) return [...path, key]
    const found = findLoneSurrogate(item, [...path, key], depth + 1)
    if (found) return found
  }
  return null
}

export const LONE_SURROGATE_MESSAGE = 'String contains a lone surrogate, which is not valid Unicode'

/**
 * The length of `text` in Unicode code points: what Python's `len(str)` counts as characters (Bernstein's limits),
 * and what the validator's `maxLength` counts (ajv's `ucs2length`), so that a hand-written limit agrees with both.
 * `text.length` counts UTF-16 code units instead, and an astral character (an emoji) would count twice. A lone
 * surrogate counts as one, as it is one element of a Python `str`; the request edges refuse those anyway.
 */
export function codePointLength(text: string): number {
  let pairs = 0
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0xd800 || unit > 0xdbff) continue
    const next = text.charCodeAt(i + 1)
    if (next >= 0xdc00 && next <= 0xdfff) {
      pairs++
      i++
    }
  }
  return text.length - pairs
}
