/**
 * The A2A task receipt (behaviour doc §3): a response's content hash, anchored on the lineage spine and signed with
 * Ed25519 over a binding digest. Signing is injected, so this module holds no key material.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { dumpsPython, isPyInt, isPyObject, pythonCanonicalBytes, pythonStr } from '../canonical/python-json.js'
import type { PyObject, PyValue } from '../canonical/python-json.js'
import { sha256Prefixed } from '../crypto/sha256-prefixed.js'
import { A2A_RECEIPT_RUN_ID, buildSpineRow } from '../lineage/spine.js'
import { type Result, fail, ok } from '../result.js'
import type { SpineRow } from '../lineage/spine.js'

export { A2A_RECEIPT_RUN_ID }

/** Receipt schema version. */
export const A2A_RECEIPT_SCHEMA_VERSION = 1

/** The key id Bernstein's server signs receipts with. */
export const DEFAULT_RECEIPT_KID = 'a2a-server-lineage-1'

/** The only `head_signature.alg`. */
export const HEAD_SIGNATURE_ALG = 'EdDSA'

/** Spine actor Bernstein records for receipts. */
export const DEFAULT_RECEIPT_ACTOR = 'a2a-server'

const RECEIPT_PATH_PREFIX = '.sdd/a2a/responses'

/** An Ed25519 public JWK as Bernstein embeds it (`kty`, `crv`, `alg`, `x`, `kid`). */
export interface Ed25519PublicJwk {
  kty: 'OKP'
  crv: 'Ed25519'
  alg?: 'EdDSA'
  /** base64url (no padding) of the 32-byte public key. */
  x: string
  kid?: string
}

/** A receipt with Bernstein's wire names (note the British `artefact_path`). */
export interface A2ATaskReceipt {
  schema_version: number | bigint
  task_id: string
  artefact_path: string
  content_hash: string
  entry_hash: string
  operator_hmac: string
  kid: string
  /** `{alg, key_id, public_key_jwk, signature_b64}`; kept as parsed, since verification inspects it field by field. */
  head_signature: PyObject
}

/** The receipt, or Bernstein's text for why it is not one. */
export type ReceiptParseResult = Result<A2ATaskReceipt, 'malformed_receipt'>

/**
 * The bytes `content_hash` covers: Python `json.dumps(sort_keys=True, separators=(",",":"), ensure_ascii=False,
 * allow_nan=False)` as UTF-8 (not RFC 8785).
 *
 * @throws RangeError when the response holds NaN or infinities, or a lone surrogate.
 */
export function canonicalResponseBytes(response: PyValue): Buffer {
  return pythonCanonicalBytes(response)
}

/** `"sha256:" + hex(SHA-256(canonicalResponseBytes(response)))`; raw bytes are hashed as given. */
export function contentHash(response: PyValue | Uint8Array): string {
  const bytes = response instanceof Uint8Array ? response : canonicalResponseBytes(response)
  return sha256Prefixed(bytes)
}

const KEEP_IN_PATH = /^[\p{L}\p{N}_-]$/u

/**
 * `.sdd/a2a/responses/<task_id>.json` with every character of the id that is neither alphanumeric nor `-`/`_`
 * replaced by `_`. Alphanumeric is Unicode-wide, as Python's `str.isalnum()` is.
 */
export function receiptArtefactPath(taskId: string): string {
  let safe = ''
  for (const ch of taskId) safe += KEEP_IN_PATH.test(ch) ? ch : '_'
  return `${RECEIPT_PATH_PREFIX}/${safe}.json`
}

/** The fields the head signature attests (everything but `head_signature`). */
export function receiptBinding(receipt: A2ATaskReceipt): PyObject {
  return {
    schema_version: receipt.schema_version,
    task_id: receipt.task_id,
    artefact_path: receipt.artefact_path,
    content_hash: receipt.content_hash,
    entry_hash: receipt.entry_hash,
    operator_hmac: receipt.operator_hmac,
    kid: receipt.kid,
  }
}

/** Python-canonical bytes of the binding. */
export function receiptBindingBytes(receipt: A2ATaskReceipt): Buffer {
  return pythonCanonicalBytes(receiptBinding(receipt))
}

/** Hex SHA-256 of the binding's canonical bytes; the signature covers its raw 32 bytes. */
export function receiptBindingDigest(receipt: A2ATaskReceipt): string {
  return createHash('sha256').update(receiptBindingBytes(receipt)).digest('hex')
}

/** The wire object (`A2ATaskReceipt.to_dict`), keys in Bernstein's order. */
export function receiptToDict(receipt: A2ATaskReceipt): PyObject {
  return { ...receiptBinding(receipt), head_signature: { ...receipt.head_signature } }
}

/** `A2ATaskReceipt.to_json()`: `json.dumps(indent=2, sort_keys=True)` (non-ASCII escaped), no trailing newline. */
export function receiptToJson(receipt: A2ATaskReceipt, indent = 2): string {
  return dumpsPython(receiptToDict(receipt), { indent, sortKeys: true })
}

/** The compact form: sorted keys, no spaces (`separators=(",", ":")`). */
export function receiptToCompactJson(receipt: A2ATaskReceipt): string {
  return dumpsPython(receiptToDict(receipt), { sortKeys: true, separators: [',', ':'] })
}

/**
 * Rebuilds a receipt from parsed JSON with Bernstein's rules (`A2ATaskReceipt.from_dict`): `task_id`,
 * `artefact_path`, `content_hash`, `entry_hash` and `kid` non-empty strings; `head_signature` an object (default
 * `{}`); `schema_version` an int, not a bool (default 1); `operator_hmac` defaults to `""`. Never throws.
 */
export function parseReceipt(value: PyValue): ReceiptParseResult {
  if (!isPyObject(value)) return fail('malformed_receipt', 'A2A receipt must be a JSON object')
  for (const key of ['task_id', 'artefact_path', 'content_hash', 'entry_hash', 'kid']) {
    const field = value[key]
    if (typeof field !== 'string' || field.length === 0) {
      return fail('malformed_receipt', `A2A receipt '${key}' must be a non-empty string`)
    }
  }
  const has = (key: string): boolean => Object.hasOwn(value, key)
  const headSignature = has('head_signature') ? (value['head_signature'] as PyValue) : {}
  if (!isPyObject(headSignature)) return fail('malformed_receipt', "A2A receipt 'head_signature' must be an object")
  const version = has('schema_version') ? (value['schema_version'] as PyValue) : A2A_RECEIPT_SCHEMA_VERSION
  if (!isPyInt(version)) return fail('malformed_receipt', "A2A receipt 'schema_version' must be an integer")
  return ok({
    schema_version: version,
    task_id: value['task_id'] as string,
    artefact_path: value['artefact_path'] as string,
    content_hash: value['content_hash'] as string,
    entry_hash: value['entry_hash'] as string,
    // Python's str(): a stray null would become "None", and that is what the binding then covers.
    operator_hmac: has('operator_hmac') ? pythonStr(value['operator_hmac'] as PyValue) : '',
    kid: value['kid'] as string,
    head_signature: { ...headSignature },
  })
}

/** The JWK Bernstein embeds for a raw 32-byte Ed25519 public key. */
export function ed25519PublicJwk(publicKey: Uint8Array, kid: string): Required<Ed25519PublicJwk> {
  if (publicKey.length !== 32) throw new TypeError('an Ed25519 public key is 32 bytes')
  return { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', x: Buffer.from(publicKey).toString('base64url'), kid }
}

/** Inputs of {@link buildReceiptSpineRow}. */
export interface ReceiptSpineRowInput {
  /** The response, or its canonical bytes ({@link canonicalResponseBytes}) when the caller already has them. */
  response: PyValue | Uint8Array
  taskId: string
  /** `entry_hash` of the spine's last row, `""` for an empty spine. */
  prevHash: string
  timestampNs: bigint | number
  actor?: string
  model?: string
  /** Defaults to `a2a:<task_id>`. */
  stepId?: string
}

/** The spine row an issuer appends for a response (run {@link A2A_RECEIPT_RUN_ID}), as Bernstein's issuer does. */
export function buildReceiptSpineRow(input: ReceiptSpineRowInput, lineageKey: Uint8Array): SpineRow {
  return buildSpineRow(
    {
      prevHash: input.prevHash,
      artifactPath: receiptArtefactPath(input.taskId),
      contentHash: contentHash(input.response),
      actor: input.actor ?? DEFAULT_RECEIPT_ACTOR,
      stepId: input.stepId || `a2a:${input.taskId}`,
      model: input.model ?? '',
      timestampNs: input.timestampNs,
    },
    lineageKey,
  )
}

/** Inputs of {@link buildReceipt}; the signer is injected (Ed25519 over the raw 32-byte binding digest). */
export interface BuildReceiptInput {
  /** The response, or its canonical bytes ({@link canonicalResponseBytes}). */
  response: PyValue | Uint8Array
  taskId: string
  /** The row anchoring this response (see {@link buildReceiptSpineRow}). */
  spineRow: SpineRow
  kid: string
  sign: (message: Uint8Array) => Promise<Uint8Array>
  /** The signer's public JWK; its `kid` becomes `head_signature.key_id`. */
  publicJwk: Ed25519PublicJwk
}

/**
 * Mints a receipt: content hash, the spine row's `entry_hash` and `hmac`, and `head_signature` with the signature as
 * padded standard base64.
 *
 * @throws TypeError when the spine row does not anchor this response (wrong content hash or artefact path).
 */
export async function buildReceipt(input: BuildReceiptInput): Promise<A2ATaskReceipt> {
  if (!input.taskId) throw new TypeError('task_id must be a non-empty string')
  const hash = contentHash(input.response)
  const artefactPath = receiptArtefactPath(input.taskId)
  if (input.spineRow.content_hash !== hash || input.spineRow.artifact_path !== artefactPath) {
    throw new TypeError('the spine row does not anchor this response')
  }
  const unsigned: A2ATaskReceipt = {
    schema_version: A2A_RECEIPT_SCHEMA_VERSION,
    task_id: input.taskId,
    artefact_path: artefactPath,
    content_hash: hash,
    entry_hash: input.spineRow.entry_hash,
    operator_hmac: input.spineRow.hmac,
    kid: input.kid,
    head_signature: {},
  }
  const signature = await input.sign(Buffer.from(receiptBindingDigest(unsigned), 'hex'))
  const jwk: PyObject = {}
  for (const [name, value] of Object.entries(input.publicJwk)) if (typeof value === 'string') jwk[name] = value
  unsigned.head_signature = {
    alg: HEAD_SIGNATURE_ALG,
    key_id: input.publicJwk.kid ?? 'lineage-key',
    public_key_jwk: jwk,
    signature_b64: Buffer.from(signature).toString('base64'),
  }
  return unsigned
}
