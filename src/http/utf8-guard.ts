/**
 * Request-body guards for Express: bodies whose bytes are not UTF-8, or whose strings hold what UTF-8 cannot
 * encode (a lone surrogate), are refused before anything is validated or stored. The byte scanning itself is
 * src/text/utf8.ts.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import { LONE_SURROGATE_MESSAGE, findLoneSurrogate } from '../text/unicode.js'
import { type Utf8Fault, findUtf8Fault } from '../text/utf8.js'

/** Rejects a parsed JSON body that carries a lone surrogate: 422, before anything is validated or stored. */
export function rejectLoneSurrogates(): RequestHandler {
  return (req, _res, next) => {
    const at = req.body === undefined ? null : findLoneSurrogate(req.body)
    if (at)
      throw new AppError('validation_failed', LONE_SURROGATE_MESSAGE, {
        issues: [{ loc: ['body', ...at], msg: LONE_SURROGATE_MESSAGE, type: 'string_unicode' }],
      })
    next()
  }
}

/** body-parser's `verify(req, res, buf, encoding)` option; a throw refuses the body before it is decoded. */
export type BodyVerifier = (req: IncomingMessage, res: ServerResponse, buf: Buffer, encoding: string) => void

/**
 * A body-parser `verify` function that refuses a body whose bytes are not UTF-8, whatever charset it declares (the
 * caller decides about the charset: JSON refuses any other, `/a2a/v0/tasks` reads its bytes as UTF-8 regardless).
 * body-parser would otherwise decode it with U+FFFD in place of every bad sequence, silently changing what the
 * client sent (RFC 8259 §8.1: JSON exchanged between systems is UTF-8). It sees the bytes after any
 * Content-Encoding is undone. The AppError it throws reaches the error handler as is (body-parser only adds
 * properties to it), so `refuse` decides the answer.
 */
export function requireUtf8(refuse: (fault: Utf8Fault, bytes: Buffer) => AppError): BodyVerifier {
  return (_req, _res, buf) => {
    // A byte order mark is dropped before decoding (by body-parser, and by Python's utf-8-sig), so offsets start after it.
    const body = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? buf.subarray(3) : buf
    const fault = findUtf8Fault(body)
    if (fault) throw refuse(fault, body)
  }
}

const utf8Json: BodyVerifier = requireUtf8(
  (fault) =>
    new AppError('validation_failed', 'JSON decode error', { issues: [{ loc: ['body', fault.charOffset], msg: 'JSON decode error', type: 'json_invalid' }] }),
)

/**
 * For `express.json({ verify })`: JSON bodies are UTF-8 (RFC 8259 §8.1). Another declared charset is refused with
 * 415 (body-parser would decode any `utf-*`, UTF-7 and UTF-16 included, which lets a body say `<` without the byte),
 * and bytes that are not UTF-8 are malformed JSON, the contract's 422 `json_invalid` located at the character
 * offset where decoding fails, like any other.
 */
export const requireUtf8Json: BodyVerifier = (req, res, buf, encoding) => {
  if (!/^utf-?8$/i.test(String(encoding))) {
    throw new AppError('unsupported_media_type', `unsupported charset "${String(encoding).toUpperCase()}": JSON bodies are UTF-8`)
  }
  utf8Json(req, res, buf, encoding)
}
