import { createRequire } from 'node:module'

type Compiled = { readonly regexp: RegExp; readonly keys: readonly unknown[] }
type PathToRegexp = ((path: unknown, options?: Record<string, unknown>) => Compiled) & { readonly memoized?: true }

/** `require` as express-openapi-validator's own files resolve it: the module instances the validator really uses. */
function requireFromValidator(id: string): unknown {
  return createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'))(id)
}

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
  const module = requireFromValidator('path-to-regexp') as { pathToRegexp: PathToRegexp }
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

type RouteMaps = { expressRouteMap: Record<string, unknown> }
type OpenApiContextClass = { prototype: { buildRouteMaps(this: RouteMaps, routes: unknown): void } & { fastRouteMap?: true } }

/**
 * The same lookup then walks the validator's route map with `Object.entries` on every request. That map is built
 * one path at a time, which leaves V8 holding it in dictionary mode (about 60 path-string keys), where
 * `Object.entries` must gather and sort the keys by insertion index each time: 6.6 µs against 2.4 µs for the same
 * entries in a fast-properties object (side by side, GET: 3-4 % less server CPU per request). After the validator
 * builds its maps, the route map is copied once into such an object: same keys in the same order, the same value
 * objects (shared with the validator's other map), so lookups match exactly as before. Idempotent.
 */
export function compactValidatorRouteMap(): void {
  const { OpenApiContext } = requireFromValidator('./framework/openapi.context.js') as { OpenApiContext: OpenApiContextClass }
  const prototype = OpenApiContext.prototype
  if (prototype.fastRouteMap) return
  const build = prototype.buildRouteMaps
  prototype.buildRouteMaps = function (this: RouteMaps, routes: unknown): void {
    build.call(this, routes)
    this.expressRouteMap = Object.fromEntries(Object.entries(this.expressRouteMap))
  }
  prototype.fastRouteMap = true
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
