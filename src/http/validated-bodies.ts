import { hash } from 'node:crypto'

/** Bodies remembered at most: a digest and a map slot each, about 120 bytes, so some 8 MB when full. */
const DEFAULT_CAPACITY = 65_536

export interface ValidatedBodiesOptions {
  readonly capacity?: number
}

/**
 * JSON response bodies the response validator has already passed, each for one operation and status, least recently
 * used first out. Validation is a pure function of the operation, the status and the bytes: a body identical to a
 * remembered one cannot fail where that one passed, so it is sent without being validated again. A peer polling a
 * task that has not changed (a federation follow, a dashboard) gets the same bytes until it changes, and then the
 * new bytes are validated once. Nothing is remembered that did not pass.
 *
 * A body is remembered by the SHA-256 of its operation, status and text, not by the text: the same memory holds
 * thirty times more bodies (a 2 KB task read costs 44 characters), and hashing the text natively costs less than
 * looking a 2 KB string up in a map. Two different bodies with one digest would be a SHA-256 collision.
 */
export class ValidatedBodies {
  readonly #entries = new Set<string>()
  readonly #capacity: number
  #hits = 0

  constructor(options: ValidatedBodiesOptions = {}) {
    this.#capacity = options.capacity ?? DEFAULT_CAPACITY
  }

  /**
   * The key of `text` answered with `status` by `operation` (`GET /a2a/tasks/{a2a_task_id}`). `text` is
   * `JSON.stringify` output, which escapes lone surrogates, so its UTF-8 (what is hashed, and what is sent) is
   * one-to-one with it.
   */
  keyOf(operation: string, status: number, text: string): string {
    return hash('sha256', `${operation} ${status}\n${text}`, 'base64')
  }

  /** Whether the body was passed before (and, if so, it becomes the most recently used). */
  has(key: string): boolean {
    if (!this.#entries.delete(key)) return false
    this.#entries.add(key)
    this.#hits++
    return true
  }

  /** Remembers a body the validator passed. */
  add(key: string): void {
    if (this.#entries.has(key)) return
    this.#entries.add(key)
    if (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.values().next().value as string)
  }

  /** Bodies remembered now, and how many responses were sent unvalidated as known. */
  get stats(): { readonly entries: number; readonly hits: number } {
    return { entries: this.#entries.size, hits: this.#hits }
  }
}
