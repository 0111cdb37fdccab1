import type { IncomingMessage } from 'node:http'
import type { RequestHandler } from 'express'
import { AppError, type ValidationIssue } from '../errors.js'
import { type InexactNumberKind, OVERFLOW_MESSAGE, UNSAFE_INTEGER_MESSAGE, findInexactNumber, mayHoldInexactNumber } from '../text/json-numbers.js'
import type { BodyVerifier } from './utf8-guard.js'

/**
 * The bytes of each JSON body, from body-parser's `verify` to {@link rejectInexactNumbers}, which releases them.
 * `JSON.parse` has already rounded the numbers when the parsed body arrives, so only the text says what was sent.
 * A property of the request rather than a WeakMap keyed by it: a WeakMap entry per request cost ~170 ns in
 * bookkeeping, the property ~5 ns.
 */
const JSON_BYTES = Symbol('json body bytes')
type WithJsonBytes = IncomingMessage & { [JSON_BYTES]?: Buffer | undefined }
const UTF8 = new TextDecoder('utf-8')

/** `verify`, and then keeps the bytes it accepted for {@link rejectInexactNumbers} (no copy: a reference). */
export function keepingJsonBytes(verify: BodyVerifier): BodyVerifier {
  return (req, res, buf, encoding) => {
    verify(req, res, buf, encoding)
    ;(req as WithJsonBytes)[JSON_BYTES] = buf
  }
}

/** FastAPI's 422 item for a number that cannot be taken as sent; pydantic's type names for the two faults. */
function issue(loc: readonly (string | number)[], kind: InexactNumberKind): ValidationIssue {
  return kind === 'overflow' ? { loc, msg: OVERFLOW_MESSAGE, type: 'finite_number' } : { loc, msg: UNSAFE_INTEGER_MESSAGE, type: 'int_parsing_size' }
}

/**
 * Refuses a parsed JSON body holding a number that `JSON.parse` changed: one that overflows to ±Infinity, or an
 * integer literal beyond ±(2^53 - 1). 422 at the first such number, before anything is validated or stored, as
 * `rejectLoneSurrogates` does for strings. The text is decoded and scanned only when the parsed value has a
 * number of that magnitude at all ({@link mayHoldInexactNumber}), which ordinary bodies never have, so they pay for a
 * walk over their values and nothing per character.
 */
export function rejectInexactNumbers(): RequestHandler {
  return (req, _res, next) => {
    const bytes = (req as WithJsonBytes)[JSON_BYTES]
    if (bytes !== undefined) {
      // Released at once: the buffer (up to the 1 MiB cap) need not live as long as the request.
      ;(req as WithJsonBytes)[JSON_BYTES] = undefined
      const found = mayHoldInexactNumber(req.body) ? findInexactNumber(UTF8.decode(bytes), req.body) : null
      if (found) {
        const detail = issue(['body', ...found.path], found.kind)
        throw new AppError('validation_failed', detail.msg, { issues: [detail] })
      }
    }
    next()
  }
}

/** A query integer as FastAPI reads one: decimal digits, with a sign at most. */
const DECIMAL_INTEGER = /^[+-]?\d+$/

/** pydantic's item for a query value that is not an integer literal. */
const notAnInteger = (name: string): ValidationIssue => ({
  loc: ['query', name],
  msg: 'Input should be a valid integer, unable to parse string as an integer',
  type: 'int_parsing',
})

/**
 * Refuses integer query parameters that the validator's coercion accepted without their being integers as sent:
 * its `Number()` reads `0x1`, `0b1`, `0o1`, ` 1`, `1.`, `.1e1` and `1e1` as numbers, where FastAPI refuses them
 * (`int_parsing`); and those it rounded (`?expected_version=9007199254740993` would compare as 9007199254740992) or
 * overflowed (`1e20`, `1e400`: Infinity passes its integer check). It runs after the validator, the only reader of the
 * contract's parameter types: a number in `req.query` is one it coerced, and every numeric query parameter of the
 * contract is an integer. The sent text is read from the URL only then. Every such parameter is named, as the
 * validator names every fault.
 */
export function rejectInexactQueryIntegers(): RequestHandler {
  return (req, _res, next) => {
    const query = req.query as Record<string, unknown>
    let issues: ValidationIssue[] | undefined
    let sent: URLSearchParams | undefined
    for (const name in query) {
      const value = query[name]
      if (typeof value !== 'number') continue
      if (Math.abs(value) > Number.MAX_SAFE_INTEGER) {
        issues ??= []
        issues.push(issue(['query', name], Number.isFinite(value) ? 'unsafe_integer' : 'overflow'))
        continue
      }
      const url = req.originalUrl
      sent ??= new URLSearchParams(url.slice(url.indexOf('?') + 1))
      if (sent.getAll(name).some((text) => !DECIMAL_INTEGER.test(text))) {
        issues ??= []
        issues.push(notAnInteger(name))
      }
    }
    if (issues) throw new AppError('validation_failed', issues[0]?.msg ?? UNSAFE_INTEGER_MESSAGE, { issues })
    next()
  }
}
