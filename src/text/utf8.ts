/**
 * UTF-8 as Python's strict codec reads it: where bytes stop being UTF-8 and the error text CPython gives for it,
 * and the one strict decoder every reader of untrusted bytes uses.
 *
 * @module
 */
import { isUtf8 } from 'node:buffer'

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

/** Stateless (no `stream`), so one instance of each serves every call. */
const STRICT_KEEPING_BOM = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const STRICT_DROPPING_BOM = new TextDecoder('utf-8', { fatal: true })

/**
 * `bytes` decoded as UTF-8, strictly: ill-formed bytes throw instead of becoming U+FFFD, which would silently
 * change what was signed or hashed. A leading byte order mark stays in the text as U+FEFF, as Python's `utf-8`
 * codec keeps it, unless `dropBom` (what `TextDecoder` does by default, and Python's `utf-8-sig`).
 *
 * @throws TypeError when the bytes are not UTF-8.
 * @example decodeUtf8Strict(await readFile(path))
 */
export function decodeUtf8Strict(bytes: Uint8Array, options?: { readonly dropBom?: boolean }): string {
  return (options?.dropBom === true ? STRICT_DROPPING_BOM : STRICT_KEEPING_BOM).decode(bytes)
}
