/**
 * The capability card file (Bernstein `SignedCapabilityCard.to_json` / `from_json`, §5.3).
 *
 * On disk the card is Python's `json.dumps({"alg", "card", "signature"}, indent=2, sort_keys=True)`: sorted keys,
 * two-space indent, `\uXXXX` escapes for non-ASCII, no trailing newline, and Python float spelling for the three
 * float fields (`1700000000.0`, `12.5`, `1e-06`). That is not the signed form: signing uses JCS (RFC 8785), whose
 * numbers are JavaScript's (`1700000000`).
 *
 * @module
 */
import { dumpsPython, fromPyValue, parsePythonJson, pythonJsonDecodeText, PyFloat } from '../canonical/python-json.js'
import type { PyValue } from '../canonical/python-json.js'
import { CapabilityCardInvalid, parseCapabilityCard } from './capability-card.js'
import type { SignedCapabilityCard } from './capability-card.js'
import { codePointLength } from '../text/unicode.js'

/** Real card files are a few kilobytes; anything past this many characters (code points) is refused before parsing. */
export const MAX_CARD_FILE_CHARS = 1024 * 1024

/**
 * The file bytes Bernstein writes for `signed` (UTF-8 of the returned text; all ASCII).
 *
 * @example
 * const signed = parseCardFile(readFileSync('peer-card.json', 'utf8'))
 * writeFileSync('card.json', serializeCardFile(signed)) // the same bytes Bernstein writes
 */
export function serializeCardFile(signed: SignedCapabilityCard): string {
  const { card } = signed
  const value: PyValue = {
    alg: signed.alg,
    card: {
      schema_version: card.schema_version,
      issuer: card.issuer,
      name: card.name,
      description: card.description,
      advertised_tools: [...card.advertised_tools],
      policies: {
        cost_cap_usd: new PyFloat(card.policies.cost_cap_usd),
        redaction_tier: card.policies.redaction_tier,
        sandbox_profile: card.policies.sandbox_profile,
      },
      public_key_pem: card.public_key_pem,
      kid: card.kid,
      created_at: new PyFloat(card.created_at),
      expires_at: new PyFloat(card.expires_at),
    },
    signature: signed.signature,
  }
  return dumpsPython(value, { indent: 2, sortKeys: true, ensureAscii: true })
}

/**
 * The JSON value of a card file, not yet validated as a card (conformance reports on malformed cards instead of
 * refusing them). Accepts everything Python's `json.loads` accepts for these files: float and int spellings,
 * `\uXXXX` escapes, duplicate keys (last wins).
 *
 * @throws CapabilityCardInvalid when the text is too large or not JSON (message in Python's wording).
 */
export function decodeCardFile(text: string): unknown {
  if (typeof text !== 'string') throw new TypeError('card file text must be a string')
  // Code units bound code points from above, so the count is only needed for a text that long.
  if (text.length > MAX_CARD_FILE_CHARS && codePointLength(text) > MAX_CARD_FILE_CHARS) {
    throw new CapabilityCardInvalid(`capability card file is larger than ${MAX_CARD_FILE_CHARS} characters`)
  }
  let value: PyValue
  try {
    value = parsePythonJson(text)
  } catch (error) {
    throw new CapabilityCardInvalid(pythonJsonDecodeText(error, text))
  }
  return fromPyValue(value)
}

/**
 * Parses and validates a card file (Bernstein's or ours). A missing top-level `alg` defaults to `EdDSA`. Checks the
 * shape only: {@link verifyCapabilityCard} checks the signature and expiry.
 *
 * @throws CapabilityCardInvalid when the text is not JSON or not a capability card (`code` `invalid_card`), or the
 *   JWS header names another key than the body (`kid_mismatch`).
 * @example
 * try {
 *   const signed = parseCardFile(readFileSync('card.json', 'utf8'))
 *   console.log(signed.card.issuer, signed.card.policies)
 * } catch (error) {
 *   if (!(error instanceof CapabilityCardInvalid)) throw error
 *   console.error(error.code, error.message)
 * }
 */
export function parseCardFile(text: string): SignedCapabilityCard {
  return parseCapabilityCard(decodeCardFile(text))
}
