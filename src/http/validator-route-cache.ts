import { createRequire } from 'node:module'

type Compiled = { readonly regexp: RegExp; readonly keys: readonly unknown[] }
type PathToRegexp = ((path: unknown, options?: Record<string, unknown>) => Compiled) & { readonly memoized?: true }

/** Routes × option sets; the contract has about sixty paths, so this bound is never reached in practice. */
const CAPACITY = 1024

/**
 * express-openapi-validator finds the operation of every request by compiling a path-to-regexp pattern for each
 * documented route in turn until one matches (`lookupRoute` in its openapi.metadata.js), on every request. A
 * compiled pattern depends only on the route template and the routing options, and the validator only reads the
 * result (`regexp.exec`, `keys.map`; the expressions are never global, so they hold no state), so the validator's
 * copy of `pathToRegexp` is memoised: the same matches, without recompiling a few patterns per request. Only
 * string templates with primitive options are cached; anything else goes straight through. Idempotent.
 */
export function memoizeValidatorRouteCompilation(): void {
  const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'))
  const module = fromValidator('path-to-regexp') as { pathToRegexp: PathToRegexp }
  const original = module.pathToRegexp
  if (typeof original !== 'function' || original.memoized) return
  const cache = new Map<string, Compiled>()
  const memoized = (path: unknown, options: Record<string, unknown> = {}): Compiled => {
    const key = typeof path === 'string' ? cacheKey(path, options) : null
    if (key === null) return original(path, options)
    let compiled = cache.get(key)
    if (compiled === undefined) {
      compiled = original(path, options)
      if (compiled.regexp.global || compiled.regexp.sticky) return compiled
      if (cache.size < CAPACITY) cache.set(key, compiled)
    }
    return compiled
  }
  module.pathToRegexp = Object.assign(memoized, { memoized: true as const })
}

const quotedNames = new Map<string, string>()

/**
 * The cache key of a template and its options, or null when an option is not a primitive (never cached). Called
 * once per documented route on every request, so it is concatenation: no sorting, and JSON only for the (cached)
 * option names and string values, which keeps the key unambiguous. Options given in another order make another
 * key, which only costs a second compilation.
 */
function cacheKey(path: string, options: Record<string, unknown>): string | null {
  let key = path
  for (const name of Object.keys(options)) {
    const value = options[name]
    if (value === undefined) continue
    const type = typeof value
    if (type !== 'string' && type !== 'boolean' && type !== 'number') return null
    let quoted = quotedNames.get(name)
    if (quoted === undefined) {
      quoted = JSON.stringify(name)
      if (quotedNames.size < 64) quotedNames.set(name, quoted)
    }
    key += `\u0000${quoted}${type === 'string' ? JSON.stringify(value) : `${type.charAt(0)}${String(value)}`}`
  }
  return key
}
