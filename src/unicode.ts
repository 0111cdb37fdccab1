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
