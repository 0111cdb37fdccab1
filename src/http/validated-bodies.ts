/** Total size of the remembered bodies, in UTF-16 code units (about the bytes V8 keeps for ASCII JSON). */
const DEFAULT_CAPACITY = 8 * 1024 * 1024
/** Larger bodies are validated every time: a few large ones would push out many small ones. */
const DEFAULT_MAX_BODY = 64 * 1024

export interface ValidatedBodiesOptions {
  readonly capacity?: number
  readonly maxBody?: number
}

/**
 * JSON response bodies the response validator has already passed, each for one operation and status, least recently
 * used first out. Validation is a pure function of the operation, the status and the bytes: a body identical to a
 * remembered one cannot fail where that one passed, so it is sent without being validated again. A peer polling a
 * task that has not changed (a federation follow, a dashboard) gets the same bytes until it changes, and then the
 * new bytes are validated once. Nothing is remembered that did not pass.
 */
export class ValidatedBodies {
  readonly #entries = new Map<string, number>()
  readonly #capacity: number
  readonly #maxBody: number
  #size = 0
  #hits = 0

  constructor(options: ValidatedBodiesOptions = {}) {
    this.#capacity = options.capacity ?? DEFAULT_CAPACITY
    this.#maxBody = options.maxBody ?? DEFAULT_MAX_BODY
  }

  /** The key of `text` answered with `status` by `operation` (`GET /a2a/tasks/{a2a_task_id}`), or null when too large to keep. */
  keyOf(operation: string, status: number, text: string): string | null {
    return text.length > this.#maxBody ? null : `${operation} ${status}\n${text}`
  }

  /** Whether the body was passed before (and, if so, it becomes the most recently used). */
  has(key: string): boolean {
    const size = this.#entries.get(key)
    if (size === undefined) return false
    this.#entries.delete(key)
    this.#entries.set(key, size)
    this.#hits++
    return true
  }

  /** Remembers a body the validator passed. */
  add(key: string): void {
    if (this.#entries.has(key)) return
    this.#entries.set(key, key.length)
    this.#size += key.length
    for (const [oldest, size] of this.#entries) {
      if (this.#size <= this.#capacity) break
      this.#entries.delete(oldest)
      this.#size -= size
    }
  }

  /** Bodies remembered now, their total size in code units, and how many responses were sent unvalidated as known. */
  get stats(): { readonly entries: number; readonly size: number; readonly hits: number } {
    return { entries: this.#entries.size, size: this.#size, hits: this.#hits }
  }
}
