/**
 * The one shape of every verdict this package returns instead of throwing: `{ ok: true, value }` or
 * `{ ok: false, code, detail }`. `code` is stable (branch on it), `detail` is the text for people. A failure that
 * collects several findings (every failed receipt check, every unmet policy) keeps them as data beside `code` and
 * `detail`, e.g. `failures`.
 *
 * @module
 */

/** Success, with what was produced or verified. */
export interface Ok<T> {
  readonly ok: true
  readonly value: T
}

/** Failure: a stable `code` and a human-readable `detail`. */
export interface Fail<Code extends string> {
  readonly ok: false
  readonly code: Code
  readonly detail: string
}

/**
 * A verdict: {@link Ok} or {@link Fail}, the failure optionally carrying `Extra` data.
 *
 * @example
 * const verdict: Result<number, 'not_a_number'> = Number.isNaN(n) ? fail('not_a_number', `${text} is not a number`) : ok(n)
 * if (!verdict.ok) console.error(verdict.code, verdict.detail)
 */
export type Result<T, Code extends string = string, Extra extends object = object> = Ok<T> | (Fail<Code> & Readonly<Extra>)

/** The failure branch of a {@link Result}. */
export type FailureOf<R> = Extract<R, { ok: false }>

/**
 * Builds a success.
 *
 * @example ok({ entries: 5 }) // { ok: true, value: { entries: 5 } }
 */
export function ok(): Ok<undefined>
export function ok<T>(value: T): Ok<T>
export function ok<T>(value?: T): Ok<T | undefined> {
  return { ok: true, value }
}

/**
 * Builds a failure; `extra` adds data beside `code` and `detail` (a list of findings, an HTTP status).
 *
 * @example fail('policy_unmet', failures.join('; '), { failures })
 */
export function fail<Code extends string>(code: Code, detail: string): Fail<Code>
export function fail<Code extends string, Extra extends object>(code: Code, detail: string, extra: Extra): Fail<Code> & Extra
export function fail<Code extends string>(code: Code, detail: string, extra?: object): Fail<Code> {
  return { ok: false, code, detail, ...extra }
}
