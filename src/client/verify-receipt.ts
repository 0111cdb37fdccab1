/**
 * Receipt verification for `bernstein-a2a/client`, from whatever a caller holds: the typed client's result, a
 * `Response`, sendAndWait's result or the raw text; pinned through the node's JWKS, fetched here and checked
 * against a key fingerprint, or through a JWKS or JWK the caller has. The check itself lives in src/receipts, with
 * the receipt format and the server's signer, so client, CLI and server verify the same way.
 *
 * @module
 */
import { keyFingerprint } from '../crypto/fingerprint.js'
import { findJwk } from '../crypto/jwks.js'
import { type A2AReceiptResult, type ReceiptUnchecked, verifyTaskReceipt as verifyResponseText } from '../receipts/verify-a2a-receipt.js'
import { keptBody } from './raw-body.js'

export type { A2AReceiptResult } from '../receipts/verify-a2a-receipt.js'

/**
 * What carries the response to verify:
 * - what the typed client returns for `POST /a2a/tasks/send` or `GET /a2a/tasks/{a2a_task_id}` (`{ data, response }`);
 * - sendAndWait's result (`{ ok: true, value: { responseText } }`), or its value;
 * - a `Response` whose body has not been read;
 * - the exact response text or bytes.
 */
export type ReceiptSource =
  | string
  | Uint8Array
  | Response
  | { readonly response: Response; readonly data?: unknown }
  | { readonly responseText: string; readonly response?: Response }
  | { readonly ok: true; readonly value: { readonly responseText: string } }

/**
 * Who may have signed the receipt:
 * - `trustedFingerprints`: the receipt key's fingerprint (`sha256:…`, as `bernstein-a2a keys show` prints it),
 *   checked against the node's JWKS, fetched from `jwksUrl` or, by default, from the node the response came from
 *   (`<node>/.well-known/agent.json/keys`);
 * - `jwks`: a JWKS you have (the key whose kid is the receipt's);
 * - `trustedJwk`: the one key.
 */
export type ReceiptTrust =
  | {
      readonly trustedFingerprints: string | Iterable<string>
      /** Where the node publishes its JWKS; defaults to the one of the node the response came from. */
      readonly jwksUrl?: string
      /** Injected `fetch` for the JWKS (defaults to the global one). */
      readonly fetch?: typeof globalThis.fetch
      readonly jwks?: never
      readonly trustedJwk?: never
    }
  | { readonly jwks: unknown; readonly trustedJwk?: never; readonly trustedFingerprints?: never }
  | { readonly trustedJwk: Readonly<Record<string, unknown>>; readonly jwks?: never; readonly trustedFingerprints?: never }

const JWKS_PATH = '/.well-known/agent.json/keys'

function failed(code: ReceiptUnchecked, detail: string): A2AReceiptResult {
  return { ok: false, code, detail }
}

type Text = { readonly ok: true; readonly text: string; readonly url: string | null } | { readonly ok: false; readonly error: string }

/** A fetch `Response`, by its shape (an injected fetch may bring its own class). */
function isResponse(value: unknown): value is Response {
  const r = value as Partial<Response> | null
  return typeof r === 'object' && r !== null && typeof r.text === 'function' && typeof r.status === 'number' && typeof r.ok === 'boolean'
}

const NOTHING = 'nothing to verify: expected the typed client result, sendAndWait result, a Response, or the response text'

/** The exact response text, and the URL it came from when known. */
async function responseText(source: ReceiptSource): Promise<Text> {
  if (typeof source === 'string') return { ok: true, text: source, url: null }
  if (source instanceof Uint8Array) return { ok: true, text: Buffer.from(source).toString('utf8'), url: null }
  if (isResponse(source)) return bodyOf(source, undefined)
  if (typeof source !== 'object' || source === null) return { ok: false, error: NOTHING }
  if ('value' in source && typeof source.value?.responseText === 'string') return { ok: true, text: source.value.responseText, url: null }
  if ('responseText' in source && typeof source.responseText === 'string') return { ok: true, text: source.responseText, url: source.response?.url || null }
  if ('response' in source && isResponse(source.response)) return bodyOf(source.response, 'data' in source ? source.data : undefined)
  return { ok: false, error: NOTHING }
}

async function bodyOf(response: Response, data: unknown): Promise<Text> {
  const url = response.url || null
  if (!response.ok) return { ok: false, error: `the request failed (HTTP ${response.status}): no receipt to verify` }
  // `parseAs: 'text'`: the data is the text itself.
  if (typeof data === 'string') return { ok: true, text: data, url }
  const kept = keptBody(response)
  if (kept !== undefined) {
    const text = await kept
    return text === null ? { ok: false, error: 'could not read the response body' } : { ok: true, text, url }
  }
  if (response.bodyUsed) {
    return { ok: false, error: "the response body has been read and its bytes were not kept: use createApiClient's client, or parseAs: 'text'" }
  }
  try {
    return { ok: true, text: await response.text(), url }
  } catch (error) {
    return { ok: false, error: `could not read the response body: ${(error as Error).message}` }
  }
}

/** `<node>/.well-known/agent.json/keys` for a response from `<node>[/api/v1]/a2a/tasks/…`. */
function jwksUrlFor(responseUrl: string | null): string | null {
  if (responseUrl === null) return null
  let url: URL
  try {
    url = new URL(responseUrl)
  } catch {
    return null
  }
  const at = url.pathname.search(/(?:\/api\/v1)?\/a2a\/tasks\//)
  if (at < 0) return null
  return `${url.origin}${url.pathname.slice(0, at)}${JWKS_PATH}`
}

/** The receipt's kid, when the text is a JSON object with a receipt carrying one. */
function receiptKid(text: string): string | null {
  try {
    const kid: unknown = (JSON.parse(text) as { receipt?: { kid?: unknown } | null } | null)?.receipt?.kid
    return typeof kid === 'string' ? kid : null
  } catch {
    return null
  }
}

async function fetchJwks(url: string, fetcher: typeof globalThis.fetch): Promise<{ ok: true; jwks: unknown } | { ok: false; error: string }> {
  let response: Response
  try {
    response = await fetcher(url, { headers: { accept: 'application/json' } })
  } catch (error) {
    return { ok: false, error: `could not fetch JWKS from ${url}: ${(error as Error).message}` }
  }
  if (!response.ok) return { ok: false, error: `could not fetch JWKS from ${url}: HTTP ${response.status}` }
  try {
    return { ok: true, jwks: JSON.parse(await response.text()) as unknown }
  } catch (error) {
    return { ok: false, error: `could not parse JWKS from ${url}: ${(error as Error).message}` }
  }
}

/** Verifies `text` under `trust`; `url` is where the response came from, for the default JWKS location. */
export async function verifyReceiptText(text: string, url: string | null, trust: ReceiptTrust): Promise<A2AReceiptResult> {
  if (typeof trust !== 'object' || trust === null) return failed('invalid_argument', 'no trust given: pass trustedFingerprints, jwks or trustedJwk')
  if (trust.trustedJwk !== undefined) return verifyResponseText(text, { trustedJwk: trust.trustedJwk })
  if (trust.jwks !== undefined) return verifyResponseText(text, { jwks: trust.jwks })
  if (trust.trustedFingerprints === undefined) return failed('invalid_argument', 'no trust given: pass trustedFingerprints, jwks or trustedJwk')
  const trusted = typeof trust.trustedFingerprints === 'string' ? [trust.trustedFingerprints] : [...trust.trustedFingerprints]
  if (!trusted.every((f) => typeof f === 'string')) return failed('invalid_argument', 'trustedFingerprints must be strings (sha256:…)')
  const kid = receiptKid(text)
  // Unparseable or unattested: the check below says which, before anything is fetched.
  if (kid === null) return verifyResponseText(text, { jwks: { keys: [] } })
  const jwksUrl = trust.jwksUrl ?? jwksUrlFor(url)
  if (jwksUrl === null)
    return failed('invalid_argument', "no JWKS URL: pass jwksUrl (the node's /.well-known/agent.json/keys), or verify what the typed client returned")
  const fetched = await fetchJwks(jwksUrl, trust.fetch ?? globalThis.fetch)
  if (!fetched.ok) return failed('jwks_unavailable', fetched.error)
  const found = findJwk(fetched.jwks, kid)
  // A kid the JWKS does not hold, or a key it holds that is unusable: the check reports it in its words.
  if (!found.ok) return verifyResponseText(text, { jwks: fetched.jwks })
  const fingerprint = keyFingerprint(found.value.publicKey)
  if (!trusted.includes(fingerprint)) {
    const untrusted = `receipt key ${kid} (fingerprint ${fingerprint}, from ${jwksUrl}) is not among the trusted fingerprints`
    return {
      ok: false,
      code: 'receipt_invalid',
      detail: untrusted,
      failures: [untrusted],
      failedChecks: ['trusted_issuer'],
      keyPinned: true,
      recomputedContentHash: null,
    }
  }
  return verifyResponseText(text, { trustedJwk: { ...found.value.jwk } })
}

/**
 * Verifies the receipt carried by an A2A task response, offline but for the JWKS: the content hash over the exact
 * response bytes, the spine entry, and the Ed25519 head signature under a pinned key (kid, key_id and the JWK's kid
 * must agree). A response without a receipt is unattested and fails. Never throws: every failure, a JWKS that
 * cannot be fetched included, is data.
 *
 * Give it the send's 201 response or a finished task's response: a task still in progress is read with its
 * acceptance receipt (`Bernstein-Attestation: acceptance`), which covers the 201 body, not the body it comes with.
 *
 * @example
 * const sent = await client.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'Fix the flaky test' } })
 * const verdict = await verifyTaskReceipt(sent, { trustedFingerprints: ['sha256:…'] })   // the node's receipt key
 * if (!verdict.ok) console.error(verdict.code, verdict.detail)
 */
export async function verifyTaskReceipt(response: ReceiptSource, trust: ReceiptTrust): Promise<A2AReceiptResult> {
  const text = await responseText(response)
  if (!text.ok) return failed('unattested', text.error)
  return verifyReceiptText(text.text, text.url, trust)
}
