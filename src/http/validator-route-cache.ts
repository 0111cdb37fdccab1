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
  // Per template, the option sets seen with it (the validator always passes the same two booleans).
  const cache = new Map<string, { readonly options: Readonly<Record<string, unknown>>; readonly compiled: Compiled }[]>()
  let size = 0
  const memoized = (path: unknown, options: Record<string, unknown> = {}): Compiled => {
    if (typeof path !== 'string' || !primitiveOptions(options)) return original(path, options)
    const seen = cache.get(path)
    if (seen !== undefined) for (const entry of seen) if (sameOptions(entry.options, options)) return entry.compiled
    const compiled = original(path, options)
    if (compiled.regexp.global || compiled.regexp.sticky || size >= CAPACITY) return compiled
    const entry = { options: { ...options }, compiled }
    if (seen === undefined) cache.set(path, [entry])
    else seen.push(entry)
    size++
    return compiled
  }
  module.pathToRegexp = Object.assign(memoized, { memoized: true as const })
}

function primitiveOptions(options: Record<string, unknown>): boolean {
  for (const name in options) {
    const type = typeof options[name]
    if (type !== 'string' && type !== 'boolean' && type !== 'number' && type !== 'undefined') return false
  }
  return true
}

/** Same own enumerable options with the same primitive values (undefined counts as absent). Allocation-free. */
function sameOptions(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  for (const name in a) if (!Object.is(a[name], b[name])) return false
  for (const name in b) if (!Object.is(a[name], b[name])) return false
  return true
}
