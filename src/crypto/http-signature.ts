/**
 * HTTP Message Signatures (RFC 9421) with Ed25519 only, and the `Content-Digest` field (RFC 9530, `sha-256`).
 *
 * The canonicalisation (signature base, component derivation, Structured Fields) is `http-message-signatures` and
 * `structured-headers`; this module pins what is accepted on top of them: one labelled signature, Ed25519 keys given
 * by the caller (never looked up from the message), `alg` absent or `ed25519`, the components and parameters the
 * caller requires. It fails closed: anything it cannot read is a failure with a stable code, never a pass.
 *
 * @module
 */
import { createHash, type KeyObject } from 'node:crypto'
import { httpbis } from 'http-message-signatures'
import { type Dictionary, type InnerList, type Item, isInnerList, parseDictionary, parseItem, serializeDictionary, serializeItem } from 'structured-headers'
import { type Result, fail, ok } from '../result.js'
import { constantTimeEqual } from './constant-time.js'
import { assertEd25519KeyObject, signBytes, verifyBytes } from './ed25519.js'

/** The one signature algorithm (RFC 9421 §3.3.6). */
export const HTTP_SIGNATURE_ALG = 'ed25519'

/** A request as signed and verified: its method, its absolute target URI and its header fields (names any case). */
export interface SignableRequest {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

/** A response as signed and verified: its status and its header fields. */
export interface SignableResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
}

export interface HttpSignOptions {
  /** The signature's label in `Signature-Input` and `Signature`. */
  readonly label: string
  /** Covered components as RFC 9421 identifiers, e.g. `"@method"` or `"signature";req;key="sig"` (serialized sf-items). */
  readonly components: readonly string[]
  readonly privateKey: KeyObject
  readonly keyid: string
  /** `created`, Unix seconds (whole). */
  readonly created: number
  readonly nonce?: string
  /** Whether to state `alg="ed25519"` (default true; the RFC 9421 examples leave it to the key). */
  readonly alg?: boolean
}

/** The two fields a signature adds to a message. */
export interface SignatureFields {
  readonly 'signature-input': string
  readonly signature: string
}

export interface HttpVerifyOptions {
  readonly label: string
  readonly publicKey: KeyObject
  /** Components that must be covered (serialized sf-items, as in {@link HttpSignOptions.components}). */
  readonly requiredComponents: readonly string[]
  /** Signature parameters that must be present, e.g. `created`, `nonce`, `keyid`. */
  readonly requiredParams: readonly ('created' | 'nonce' | 'keyid' | 'alg')[]
  /** When given, `keyid` must be present and equal to it. */
  readonly keyid?: string
}

/** What a verified signature said about itself. */
export interface VerifiedSignature {
  readonly created: number | null
  readonly expires: number | null
  readonly nonce: string | null
  readonly keyid: string | null
  readonly components: readonly string[]
}

/**
 * Why a signature was not accepted: none under the label, unreadable fields, parameters or coverage not as
 * required, or a signature that does not verify under the key.
 */
export type HttpSignatureFailure = 'signature_missing' | 'signature_malformed' | 'signature_unacceptable' | 'signature_invalid'

/** `sha-256=:<base64>:`, the RFC 9530 `Content-Digest` of exactly these bytes (a string is hashed as UTF-8). */
export function contentDigest(body: Uint8Array | string): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`
}

/**
 * Whether a `Content-Digest` field carries a `sha-256` digest equal to that of `body`. Other algorithms in the
 * field are ignored (RFC 9530 §2 lets a recipient do so); a field without `sha-256`, or that does not parse, fails.
 */
export function contentDigestMatches(field: string | undefined, body: Uint8Array | string): Result<undefined, 'digest_missing' | 'digest_mismatch'> {
  if (field === undefined || field.trim() === '') return fail('digest_missing', 'no Content-Digest field')
  let parsed: Dictionary
  try {
    parsed = parseDictionary(field)
  } catch {
    return fail('digest_mismatch', 'Content-Digest is not a Structured Fields dictionary')
  }
  const member = parsed.get('sha-256')
  if (member === undefined) return fail('digest_missing', 'Content-Digest has no sha-256 member')
  if (isInnerList(member) || !(member[0] instanceof ArrayBuffer)) return fail('digest_mismatch', 'Content-Digest sha-256 is not a byte sequence')
  const expected = createHash('sha256').update(body).digest()
  if (!constantTimeEqual(new Uint8Array(member[0]), expected)) return fail('digest_mismatch', 'Content-Digest does not match the body')
  return ok()
}

/** The `Signature-Input` and `Signature` fields of `request` signed as `options` say. */
export async function signHttpRequest(request: SignableRequest, options: HttpSignOptions): Promise<SignatureFields> {
  return sign(options, (config) => httpbis.signMessage(config, asLibraryRequest(request)))
}

/**
 * The `Signature-Input` and `Signature` fields of `response` answering `request` (whose own fields may be covered
 * with the `req` parameter, e.g. `"signature";req;key="sig"`).
 */
export async function signHttpResponse(response: SignableResponse, request: SignableRequest, options: HttpSignOptions): Promise<SignatureFields> {
  return sign(options, (config) => httpbis.signMessage(config, asLibraryResponse(response), asLibraryRequest(request)))
}

/** Verifies the signature labelled `options.label` on `request` under `options.publicKey`. */
export function verifyHttpRequest(request: SignableRequest, options: HttpVerifyOptions): Promise<Result<VerifiedSignature, HttpSignatureFailure>> {
  return verify(request.headers, options, (config, headers) => httpbis.verifyMessage(config, { ...asLibraryRequest(request), headers }))
}

/** Verifies the signature labelled `options.label` on `response` (answering `request`) under `options.publicKey`. */
export function verifyHttpResponse(
  response: SignableResponse,
  request: SignableRequest,
  options: HttpVerifyOptions,
): Promise<Result<VerifiedSignature, HttpSignatureFailure>> {
  return verify(response.headers, options, (config, headers) =>
    httpbis.verifyMessage(config, { ...asLibraryResponse(response), headers }, asLibraryRequest(request)),
  )
}

/** The signature (bytes) labelled `label` in a `Signature` field, serialized as its dictionary member (`:…:`). */
export function signatureMember(headers: Readonly<Record<string, string>>, label: string): string | undefined {
  const field = headerValue(headers, 'signature')
  if (field === undefined) return undefined
  try {
    const member = parseDictionary(field).get(label)
    return member === undefined || isInnerList(member) ? undefined : serializeItem(member)
  } catch {
    return undefined
  }
}

type SignConfig = Parameters<typeof httpbis.signMessage>[0]
type VerifyConfig = Parameters<typeof httpbis.verifyMessage>[0]
type LibraryHeaders = Record<string, string>

async function sign(options: HttpSignOptions, run: (config: SignConfig) => Promise<{ headers: Record<string, string | string[]> }>): Promise<SignatureFields> {
  assertEd25519KeyObject(options.privateKey, 'private')
  if (!Number.isSafeInteger(options.created) || options.created < 0) throw new TypeError('created must be whole Unix seconds')
  const params = ['created', 'keyid', ...(options.alg === false ? [] : ['alg']), ...(options.nonce === undefined ? [] : ['nonce'])]
  const signed = await run({
    key: { id: options.keyid, alg: HTTP_SIGNATURE_ALG, sign: async (data) => Buffer.from(await signBytes(options.privateKey, data)) },
    name: options.label,
    params,
    fields: options.components.map(unquote),
    paramValues: { created: new Date(options.created * 1000), ...(options.nonce !== undefined && { nonce: options.nonce }) },
  })
  // The library adds its two fields next to the message's own (named as it found them, `Signature` otherwise).
  const input = headerValue(signed.headers as LibraryHeaders, 'signature-input')
  const signature = headerValue(signed.headers as LibraryHeaders, 'signature')
  if (input === undefined || signature === undefined) throw new Error('the signer produced no signature')
  // Only our label: a message that already carried other signatures keeps them in its own fields.
  return { 'signature-input': member(input, options.label), signature: member(signature, options.label) }
}

async function verify(
  headers: Readonly<Record<string, string>>,
  options: HttpVerifyOptions,
  run: (config: VerifyConfig, headers: LibraryHeaders) => Promise<boolean | null>,
): Promise<Result<VerifiedSignature, HttpSignatureFailure>> {
  assertEd25519KeyObject(options.publicKey, 'public')
  const inputField = headerValue(headers, 'signature-input')
  const signatureField = headerValue(headers, 'signature')
  if (inputField === undefined && signatureField === undefined) return fail('signature_missing', 'no Signature-Input and Signature fields')
  if (inputField === undefined || signatureField === undefined) return fail('signature_malformed', 'Signature-Input and Signature must come together')
  let input: Item | InnerList | undefined
  let signature: Item | InnerList | undefined
  try {
    input = parseDictionary(inputField).get(options.label)
    signature = parseDictionary(signatureField).get(options.label)
  } catch {
    return fail('signature_malformed', 'Signature-Input or Signature is not a Structured Fields dictionary')
  }
  if (input === undefined || signature === undefined) return fail('signature_missing', `no signature labelled '${options.label}'`)
  if (!isInnerList(input) || isInnerList(signature) || !(signature[0] instanceof ArrayBuffer))
    return fail('signature_malformed', `signature '${options.label}' is not an inner list with a byte sequence`)

  const [items, params] = input
  const components = items.map((item) => serializeItem(item))
  if (items.some(([name]) => typeof name !== 'string')) return fail('signature_malformed', 'a covered component is not a string')
  for (const required of options.requiredComponents) {
    if (!components.includes(normalise(required))) return fail('signature_unacceptable', `the signature does not cover ${required}`)
  }
  for (const name of options.requiredParams) if (!params.has(name)) return fail('signature_unacceptable', `the signature has no '${name}' parameter`)
  const alg = params.get('alg')
  if (alg !== undefined && alg !== HTTP_SIGNATURE_ALG) return fail('signature_unacceptable', `algorithm ${String(alg)} is not ${HTTP_SIGNATURE_ALG}`)
  const created = params.get('created')
  const expires = params.get('expires')
  const nonce = params.get('nonce')
  const keyid = params.get('keyid')
  if (created !== undefined && !Number.isSafeInteger(created)) return fail('signature_malformed', "'created' is not an integer")
  if (expires !== undefined && !Number.isSafeInteger(expires)) return fail('signature_malformed', "'expires' is not an integer")
  if (nonce !== undefined && typeof nonce !== 'string') return fail('signature_malformed', "'nonce' is not a string")
  if (keyid !== undefined && typeof keyid !== 'string') return fail('signature_malformed', "'keyid' is not a string")
  if (options.keyid !== undefined && keyid !== options.keyid) return fail('signature_unacceptable', `keyid is not ${options.keyid}`)

  // The library is handed this one signature only, so it can neither pick another nor be told "no key" for ours.
  const only: LibraryHeaders = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (lower !== 'signature' && lower !== 'signature-input') only[lower] = value
  }
  only['signature-input'] = serializeDictionary(new Map([[options.label, input]]))
  only['signature'] = serializeDictionary(new Map([[options.label, signature]]))
  const publicKey = options.publicKey
  let verified: boolean | null
  try {
    verified = await run(
      {
        keyLookup: async () => ({
          algs: [HTTP_SIGNATURE_ALG],
          verify: async (data, bytes) => verifyBytes(publicKey, new Uint8Array(data), new Uint8Array(bytes)),
        }),
        // Freshness is the caller's (it holds the clock); the library would compare with Date.now().
        notAfter: Number.MAX_SAFE_INTEGER,
      },
      only,
    )
  } catch (error) {
    return fail('signature_invalid', `signature does not verify: ${(error as Error).message}`)
  }
  if (verified !== true) return fail('signature_invalid', 'signature does not verify under the pinned key')
  return ok({
    created: (created as number | undefined) ?? null,
    expires: (expires as number | undefined) ?? null,
    nonce: (nonce as string | undefined) ?? null,
    keyid: (keyid as string | undefined) ?? null,
    components,
  })
}

function asLibraryRequest(request: SignableRequest): { method: string; url: string; headers: LibraryHeaders } {
  return { method: request.method, url: request.url, headers: { ...request.headers } }
}

function asLibraryResponse(response: SignableResponse): { status: number; headers: LibraryHeaders } {
  return { status: response.status, headers: { ...response.headers } }
}

/** A field's value by case-insensitive name, repeated fields joined as one list. */
function headerValue(headers: Readonly<Record<string, string | string[]>>, name: string): string | undefined {
  const values: string[] = []
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) values.push(...(Array.isArray(value) ? value : [value]))
  return values.length === 0 ? undefined : values.join(', ')
}

/** One member of a dictionary field, serialized as a dictionary of its own. */
function member(field: string, label: string): string {
  const value = parseDictionary(field).get(label)
  if (value === undefined) throw new Error(`the signer produced no member '${label}'`)
  return serializeDictionary(new Map([[label, value]]))
}

/** `"@method"` → `@method`, `"signature";req;key="sig"` → `signature;req;key="sig"`: the library's field spelling. */
function unquote(component: string): string {
  const [name, params] = parseItem(component)
  if (typeof name !== 'string') throw new TypeError(`component ${component} is not an sf-string`)
  return name + serializeItem(['', params]).slice(2)
}

function normalise(component: string): string {
  return serializeItem(parseItem(component))
}
