import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto'
import type { KeyObject } from 'node:crypto'
import type { Ed25519Verifier } from '../../../src/receipts/receipt-verify.js'

// PKCS#8 DER header for an Ed25519 private key; the 32-byte seed follows it.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')

export interface TestSigner {
  privateKey: KeyObject
  publicKey: Buffer
  sign: (message: Uint8Array) => Promise<Uint8Array>
}

/** An Ed25519 signer from a 32-byte seed, with node:crypto only. */
export function signerFromSeed(seed: Buffer): TestSigner {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' })
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' })
  return {
    privateKey,
    publicKey: Buffer.from(String(jwk.x), 'base64url'),
    sign: async (message) => sign(null, message, privateKey),
  }
}

/** Ed25519 verification with node:crypto, as the injected primitive. */
export const verifyEd25519: Ed25519Verifier = ({ publicKey, message, signature }) =>
  verify(null, message, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' }), signature)
