import type { OpenApiDocument } from './openapi-document.js'

/** The contract's operation behind a concrete request: its path template and operationId. */
export interface MatchedOperation {
  /** The OpenAPI path, e.g. `/tasks/{task_id}` (or `/api/v1/tasks/{task_id}`). */
  readonly template: string
  readonly operationId: string
}

interface Entry {
  readonly template: string
  readonly pattern: RegExp
  /** Fewer parameters win: `/tasks/next/{role}` is more specific than a two-parameter template. */
  readonly params: number
  readonly operations: ReadonlyMap<string, string>
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

/**
 * Matches requests to the contract's operations without relying on how far a request got through the middleware
 * (a 401 never reaches the validator, yet its log line and metrics still name the operation). Unknown paths and
 * methods match nothing, so labels stay bounded by the document.
 */
export class OperationIndex {
  readonly #entries: readonly Entry[]

  constructor(document: OpenApiDocument) {
    const entries: Entry[] = []
    for (const [template, item] of Object.entries(document.paths)) {
      const operations = new Map<string, string>()
      for (const method of METHODS) {
        const operationId = item[method]?.operationId
        if (typeof operationId === 'string') operations.set(method.toUpperCase(), operationId)
      }
      const source = template
        .split(/(\{[^}]+\})/)
        .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
        .join('')
      entries.push({ template, pattern: new RegExp(`^${source}$`), params: (template.match(/\{/g) ?? []).length, operations })
    }
    this.#entries = entries.sort((a, b) => a.params - b.params)
  }

  /** The operation for `method` and `path` (HEAD is answered by GET), or null. */
  match(method: string, path: string): MatchedOperation | null {
    const verb = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase()
    for (const entry of this.#entries) {
      if (!entry.pattern.test(path)) continue
      const operationId = entry.operations.get(verb)
      if (operationId !== undefined) return { template: entry.template, operationId }
    }
    return null
  }

  /** The template of the first path that matches, whatever the method (for 405 log lines). */
  template(path: string): string | null {
    return this.#entries.find((e) => e.pattern.test(path))?.template ?? null
  }
}
