/**
 * Ed25519 keys and raw-byte signatures.
 *
 * Keys are Node `KeyObject`s, parsed once and reused: jose caches its WebCrypto form per `KeyObject`, and public
 * PEMs (which every capability card carries) are memoised, so verifying the same issuer twice parses nothing.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, sign as nodeSign, verify as nodeVerify } from 'node:crypto'
import { decodeBase64urlStrict } from './base64url.js'
import { KeyRejected } from './key-rejected.js'

/** A public Ed25519 JWK (RFC 8037 §2). */
export interface Ed25519PublicJwk {
  kty: 'OKP'
  crv: 'Ed25519'
  x: string
}

export interface Ed25519KeyPair {
  privateKey: KeyObject
  publicKey: KeyObject
}

/** DER prefixes of the fixed-size PKCS#8 / SPKI encodings of an Ed25519 key (RFC 8410 §7 and §4). */
const PKCS8_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_RAW_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/** Real Ed25519 PEMs are about 120 bytes; anything far larger is refused before OpenSSL sees it. */
const MAX_PEM_LENGTH = 4096
const PUBLIC_PEM_CACHE_SIZE = 1024
const publicPemCache = new Map<string, KeyObject>()
const rawPublicCache = new WeakMap<KeyObject, Uint8Array>()
/** One public `KeyObject` per private key, so jose's per-key cache keeps hitting. */
const publicHalfCache = new WeakMap<KeyObject, KeyObject>()

/**
 * A fresh Ed25519 key pair.
 *
 * @example const { privateKey, publicKey } = generateEd25519KeyPair()
 */
export function generateEd25519KeyPair(): Ed25519KeyPair {
  return generateKeyPairSync('ed25519')
}

/**
 * The private key in a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
 *
 * @throws KeyRejected when the PEM does not parse or holds a key of another type.
 * @example const key = privateKeyFromPem(readFileSync('card.json.key.pem', 'utf8'))
 */
export function privateKeyFromPem(pem: string): KeyObject {
  if (typeof pem !== 'string') throw new TypeError('private key PEM must be a string')
  return keyFromPem(pem, 'private')
}

/**
 * The private key whose 32-byte seed is `seed` (RFC 8032 §5.1.5; the `d` of an OKP JWK).
 *
 * @throws KeyRejected when the seed is not 32 bytes long.
 * @example privateKeyFromSeed(Buffer.alloc(32, 0x11)) // capability card a's key
 */
export function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  if (!(seed instanceof Uint8Array)) throw new TypeError('seed must be a Uint8Array')
  if (seed.length !== 32) throw new KeyRejected('malformed_key', `Ed25519 seed must be 32 bytes, got ${seed.length}`)
  return createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' })
}

/**
 * The public key in an SPKI PEM (`-----BEGIN PUBLIC KEY-----`). Results are memoised per PEM text.
 *
 * A private-key PEM is refused: Node would quietly derive the public half, hiding a leaked private key.
 *
 * @throws KeyRejected when the PEM does not parse or is not an Ed25519 public key.
 */
export function publicKeyFromPem(pem: string): KeyObject {
  if (typeof pem !== 'string') throw new TypeError('public key PEM must be a string')
  const cached = publicPemCache.get(pem)
  if (cached) return cached
  const key = keyFromPem(pem, 'public')
  if (publicPemCache.size >= PUBLIC_PEM_CACHE_SIZE) {
    const oldest = publicPemCache.keys().next()
    if (!oldest.done) publicPemCache.delete(oldest.value)
  }
  publicPemCache.set(pem, key)
  return key
}

/**
 * The public key of an OKP/Ed25519 JWK; only `kty`, `crv` and `x` are read.
 *
 * @throws KeyRejected for anything that is not an Ed25519 JWK with a 32-byte `x`.
 * @example publicKeyFromJwk({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' })
 */
export function publicKeyFromJwk(jwk: unknown): KeyObject {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw new KeyRejected('malformed_key', 'JWK must be a JSON object')
  }
  const { kty, crv, x } = jwk as Record<string, unknown>
  if (kty !== 'OKP' || crv !== 'Ed25519') {
    throw new KeyRejected('not_ed25519', 'JWK must have kty "OKP" and crv "Ed25519"')
  }
  if (typeof x !== 'string') throw new KeyRejected('malformed_key', 'JWK "x" must be a string')
  const raw = decodeBase64urlStrict(x)
  if (raw === undefined || raw.length !== 32) {
    throw new KeyRejected('malformed_key', 'JWK "x" must be the base64url of 32 bytes')
  }
  return publicKeyFromRaw(raw)
}

/**
 * The public key whose raw 32-byte encoding (RFC 8032 §5.1.5) is `raw`.
 *
 * @throws KeyRejected when `raw` is not 32 bytes or is not a valid point encoding.
 */
export function publicKeyFromRaw(raw: Uint8Array): KeyObject {
  if (!(raw instanceof Uint8Array)) throw new TypeError('raw public key must be a Uint8Array')
  if (raw.length !== 32) throw new KeyRejected('malformed_key', `Ed25519 public key must be 32 bytes, got ${raw.length}`)
  try {
    return createPublicKey({ key: Buffer.concat([SPKI_RAW_PREFIX, raw]), format: 'der', type: 'spki' })
  } catch (cause) {
    throw new KeyRejected('malformed_key', 'raw Ed25519 public key does not parse', { cause })
  }
}

/** The public half of a private key (a public key is returned as is). */
export function publicKeyOf(key: KeyObject): KeyObject {
  assertEd25519KeyObject(key)
  if (key.type === 'public') return key
  let publicKey = publicHalfCache.get(key)
  if (!publicKey) {
    publicKey = createPublicKey(key)
    publicHalfCache.set(key, publicKey)
  }
  return publicKey
}

/** PKCS#8 PEM of a private key, in the same layout as Python's `cryptography` (64-column base64, final newline). */
export function exportPkcs8Pem(privateKey: KeyObject): string {
  assertEd25519KeyObject(privateKey, 'private')
  return privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
}

/** SPKI PEM of the public key (of a private key, its public half). */
export function exportSpkiPem(key: KeyObject): string {
  return publicKeyOf(key).export({ type: 'spki', format: 'pem' }) as string
}

/** Public JWK `{kty, crv, x}` of a key (of a private key, its public half). */
export function exportPublicJwk(key: KeyObject): Ed25519PublicJwk {
  return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(rawPublicKey(key)).toString('base64url') }
}

/**
 * The raw 32-byte public key of a PEM (SPKI), a public JWK or a `KeyObject` (a private one gives its public half).
 *
 * @throws KeyRejected for malformed or non-Ed25519 input.
 */
export function rawPublicKey(key: KeyObject | string | Ed25519PublicJwk): Uint8Array {
  let keyObject: KeyObject
  if (typeof key === 'string') keyObject = publicKeyFromPem(key)
  else if (key instanceof KeyObject) keyObject = publicKeyOf(key)
  else keyObject = publicKeyFromJwk(key)
  let raw = rawPublicCache.get(keyObject)
  if (!raw) {
    const der = keyObject.export({ type: 'spki', format: 'der' })
    raw = new Uint8Array(der.subarray(der.length - 32))
    rawPublicCache.set(keyObject, raw)
  }
  return raw.slice()
}

/**
 * Ed25519 signature (64 bytes) over `bytes` exactly as given, with no hashing or framing (receipts sign the raw
 * 32 digest bytes).
 *
 * @throws TypeError when `privateKey` is not an Ed25519 private key or `bytes` is not a Uint8Array.
 */
export async function signBytes(privateKey: KeyObject, bytes: Uint8Array): Promise<Uint8Array> {
  assertEd25519KeyObject(privateKey, 'private')
  if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes must be a Uint8Array')
  return new Uint8Array(nodeSign(null, bytes, privateKey))
}

/**
 * Whether `signature` is a valid Ed25519 signature of `bytes` under `publicKey`. Bad signatures of any shape give
 * `false`, never an exception.
 *
 * @throws TypeError when `publicKey` is not an Ed25519 public key or `bytes`/`signature` are not Uint8Arrays.
 */
export async function verifyBytes(publicKey: KeyObject, bytes: Uint8Array, signature: Uint8Array): Promise<boolean> {
  assertEd25519KeyObject(publicKey, 'public')
  if (!(bytes instanceof Uint8Array) || !(signature instanceof Uint8Array)) {
    throw new TypeError('bytes and signature must be Uint8Arrays')
  }
  if (signature.length !== 64) return false
  try {
    return nodeVerify(null, bytes, publicKey, signature)
  } catch {
    return false
  }
}

/** TypeError for a value that is not an Ed25519 `KeyObject` of the expected type (programmer misuse). */
export function assertEd25519KeyObject(key: unknown, type?: 'public' | 'private'): asserts key is KeyObject {
  if (!(key instanceof KeyObject) || key.asymmetricKeyType !== 'ed25519') {
    throw new TypeError('expected an Ed25519 KeyObject')
  }
  if (type !== undefined && key.type !== type) throw new TypeError(`expected an Ed25519 ${type} KeyObject`)
}

const PEM_FORMATS = {
  private: { name: 'a PKCS#8 PEM', begin: '-----BEGIN PRIVATE KEY-----', parse: createPrivateKey },
  public: { name: 'an SPKI PEM', begin: '-----BEGIN PUBLIC KEY-----', parse: createPublicKey },
} as const

/** The Ed25519 key of `type` in `pem`; anything else in it is refused before or after OpenSSL parses it. */
function keyFromPem(pem: string, type: 'public' | 'private'): KeyObject {
  const format = PEM_FORMATS[type]
  // A private-key PEM is refused as a public one (see publicKeyFromPem).
  if (pem.length > MAX_PEM_LENGTH || !pem.includes(format.begin) || (type === 'public' && pem.includes('PRIVATE KEY'))) {
    throw new KeyRejected('malformed_key', `expected ${format.name} (${format.begin})`)
  }
  let key: KeyObject
  try {
    key = format.parse({ key: pem, format: 'pem' })
  } catch (cause) {
    throw new KeyRejected('malformed_key', `${type} key PEM does not parse`, { cause })
  }
  return requireEd25519(key, type)
}

function requireEd25519(key: KeyObject, type: 'public' | 'private'): KeyObject {
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new KeyRejected('not_ed25519', `expected an Ed25519 key, got ${key.asymmetricKeyType ?? 'unknown'}`)
  }
  if (key.type !== type) throw new KeyRejected('wrong_key_type', `expected a ${type} key, got ${key.type}`)
  return key
}
