import { calculateJwkThumbprint } from 'jose'

/**
 * The RFC 7638 SHA-256 thumbprint of an Ed25519 public JWK (base64url), from its required members only.
 *
 * @example await jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' })
 * // 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k' (RFC 8037 A.3)
 */
export function jwkThumbprint(jwk: { readonly kty: string; readonly crv: string; readonly x: string }): Promise<string> {
  return calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, 'sha256')
}
