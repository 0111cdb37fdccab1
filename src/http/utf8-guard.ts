import { isUtf8 } from 'node:buffer'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import { LONE_SURROGATE_MESSAGE, findLoneSurrogate } from '../text/unicode.js'

/** Rejects a parsed JSON body that carries a lone surrogate: 422, before anything is validated or stored. */
export function rejectLoneSurrogates(): RequestHandler {
  return (req, _res, next) => {
    const at = req.body === undefined ? null : findLoneSurrogate(req.body)
    if (at) throw new AppError('validation_failed', LONE_SURROGATE_MESSAGE, { issues: [{ loc: ['body', ...at], msg: LONE_SURROGATE_MESSAGE, type: 'string_unicode' }] })
    next()
  }
}

/** Where and why bytes stop being UTF-8, as CPython's strict `utf-8` codec reports it. */
export interface Utf8Fault {
  /** Byte offset of the first byte of the ill-formed sequence. */
  readonly start: number
  /** Byte offset just past the ill-formed sequence (its maximal valid prefix; Python's `exc.end`). */
  readonly end: number
  readonly reason: 'invalid start byte' | 'invalid continuation byte' | 'unexpected end of data'
  /** Code points before `start`: the character offset a JSON decoder reports (`json.JSONDecodeError.pos`). */
  readonly charOffset: number
}

/** Allowed range of the second byte after each lead byte (RFC 3629 §4), which rules out overlongs and surrogates. */
function secondByteRange(lead: number): readonly [number, number] {
  if (lead === 0xe0) return [0xa0, 0xbf]
  if (lead === 0xed) return [0x80, 0x9f]
  if (lead === 0xf0) return [0x90, 0xbf]
  if (lead === 0xf4) return [0x80, 0x8f]
  return [0x80, 0xbf]
}

function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2
  if (lead >= 0xe0 && lead <= 0xef) return 3
  if (lead >= 0xf0 && lead <= 0xf4) return 4
  return 0
}

/**
 * The first ill-formed UTF-8 sequence in `bytes`, or null when they are all UTF-8 (RFC 3629; encoded surrogates and
 * overlong forms are ill-formed). The fault is located and named as Python's strict decoder does, so that
 * {@link pythonUtf8DecodeText} reproduces its `UnicodeDecodeError` text.
 */
export function findUtf8Fault(bytes: Uint8Array): Utf8Fault | null {
  if (isUtf8(bytes)) return null
  let chars = 0
  let i = 0
  while (i < bytes.length) {
    const lead = bytes[i] as number
    if (lead < 0x80) {
      i++
      chars++
      continue
    }
    const length = sequenceLength(lead)
    if (length === 0) return { start: i, end: i + 1, reason: 'invalid start byte', charOffset: chars }
    for (let k = 1; k < length; k++) {
      if (i + k >= bytes.length) return { start: i, end: bytes.length, reason: 'unexpected end of data', charOffset: chars }
      const [low, high] = k === 1 ? secondByteRange(lead) : [0x80, 0xbf]
      const byte = bytes[i + k] as number
      if (byte < low || byte > high) return { start: i, end: i + k, reason: 'invalid continuation byte', charOffset: chars }
    }
    i += length
    chars++
  }
  // isUtf8 and this scan disagree only if one of them is wrong; fail closed at the end of the input.
  return { start: bytes.length, end: bytes.length, reason: 'unexpected end of data', charOffset: chars }
}

/**
 * `str(exc)` of CPython's `UnicodeDecodeError` for the fault, e.g. `'utf-8' codec can't decode byte 0xff in position
 * 6: invalid start byte` or `... can't decode bytes in position 7-8: invalid continuation byte`.
 */
export function pythonUtf8DecodeText(bytes: Uint8Array, fault: Utf8Fault): string {
  if (fault.end - fault.start <= 1) {
    const byte = (bytes[fault.start] ?? 0).toString(16).padStart(2, '0')
    return `'utf-8' codec can't decode byte 0x${byte} in position ${fault.start}: ${fault.reason}`
  }
  return `'utf-8' codec can't decode bytes in position ${fault.start}-${fault.end - 1}: ${fault.reason}`
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
  (fault) => new AppError('validation_failed', 'JSON decode error', { issues: [{ loc: ['body', fault.charOffset], msg: 'JSON decode error', type: 'json_invalid' }] }),
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
