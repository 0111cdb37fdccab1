/**
 * The one matcher of concrete request paths to the contract's path templates (`/tasks/{task_id}`). The operation
 * index (what a request is, for every access decision and the request log) and the validator's operation lookup
 * (which operation it validates) both use it, so that they cannot disagree about a path.
 */

export interface TemplateMatchOptions {
  /** Literal segments compare case-sensitively (Express's `case sensitive routing`). */
  readonly caseSensitive: boolean
  /**
   * A template followed by one `/` matches too, as in path-to-regexp 8, the validator's router. The operation index
   * matches exactly; `exactPaths` refuses such paths before anything else decides by them.
   */
  readonly trailingSlash: boolean
}

export interface TemplateMatch<T> {
  readonly template: string
  readonly value: T
  /** The parameters' values as sent (still percent-encoded), in the template's order. */
  readonly raw: readonly string[]
}

const PARAMETER = /\{([^}]+)\}/g
const WHOLE_PARAMETER = /^\{[^}]+\}$/
const NO_VALUES: readonly string[] = Object.freeze([])

/** The names of a template's path parameters, in order: `/tasks/{task_id}/claim` → `['task_id']`. */
export function parameterNames(template: string): string[] {
  return [...template.matchAll(PARAMETER)].map((m) => m[1] as string)
}

/**
 * Most specific first: at the first segment where two templates differ, a literal segment comes before a
 * parameter, so `/tasks/next/{role}` is tried before `/tasks/{task_id}/…` and `/a2a/tasks/send` before
 * `/a2a/tasks/{a2a_task_id}` (the validator's order: static routes before dynamic ones).
 */
export function mostSpecificFirst(a: string, b: string): number {
  const as = a.split('/')
  const bs = b.split('/')
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const x = as[i] as string
    const y = bs[i] as string
    if (x === y) continue
    const xParam = WHOLE_PARAMETER.test(x)
    const yParam = WHOLE_PARAMETER.test(y)
    if (xParam && yParam) continue
    if (xParam !== yParam) return xParam ? 1 : -1
    return x < y ? -1 : 1
  }
  return bs.length - as.length
}

function compile(template: string, options: TemplateMatchOptions): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => (WHOLE_PARAMETER.test(part) ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
    .join('')
  return new RegExp(`^(?:${source})${options.trailingSlash ? '(?:\\/$)?' : ''}$`, options.caseSensitive ? '' : 'i')
}

/**
 * Templates compiled once, tried most specific first. A path the contract writes without parameters is found by one
 * map lookup when matching is exact and case-sensitive (no template with parameters could win over it).
 */
export class PathTemplates<T> {
  readonly #literal: ReadonlyMap<string, TemplateMatch<T>> | null
  readonly #patterns: readonly { readonly template: string; readonly value: T; readonly regexp: RegExp }[]

  constructor(entries: Iterable<readonly [template: string, value: T]>, options: TemplateMatchOptions) {
    const sorted = [...entries].sort(([a], [b]) => mostSpecificFirst(a, b))
    const byMap = options.caseSensitive && !options.trailingSlash
    const literal = new Map<string, TemplateMatch<T>>()
    const patterns: { template: string; value: T; regexp: RegExp }[] = []
    for (const [template, value] of sorted) {
      if (byMap && !template.includes('{')) literal.set(template, Object.freeze({ template, value, raw: NO_VALUES }))
      else patterns.push({ template, value, regexp: compile(template, options) })
    }
    this.#literal = byMap ? literal : null
    this.#patterns = patterns
  }

  /** The most specific template `path` matches, or null. */
  match(path: string): TemplateMatch<T> | null {
    const literal = this.#literal?.get(path)
    if (literal !== undefined) return literal
    for (const { template, value, regexp } of this.#patterns) {
      const found = regexp.exec(path)
      if (found !== null) return { template, value, raw: found.slice(1) }
    }
    return null
  }
}

/** Percent-decodes parameter values; on a value that is not valid percent-encoded UTF-8, the name of its parameter. */
export function decodeParameters(
  names: readonly string[],
  raw: readonly string[],
): { readonly params: Record<string, string> } | { readonly undecodable: string } {
  const params: Record<string, string> = {}
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string
    try {
      params[name] = decodeURIComponent(raw[i] as string)
    } catch {
      return { undecodable: name }
    }
  }
  return { params }
}
