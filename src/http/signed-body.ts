import type { IncomingMessage } from 'node:http'
import { carriesSignature } from '../crypto/peer-http-signature.js'
import type { BodyVerifier } from './utf8-guard.js'

/** The exact bytes of a signed request's JSON body, kept for the check of its `Content-Digest` (RFC 9530). */
const SIGNED_BYTES = Symbol('signed body bytes')
type WithSignedBytes = IncomingMessage & { [SIGNED_BYTES]?: Buffer }

/**
 * `verify`, and then, on a request that carries a signature, keeps the bytes it accepted (a reference, no copy) for
 * {@link signedBodyOf}: the parsed body cannot say which bytes were signed. Unsigned requests keep nothing.
 */
export function keepingSignedBytes(verify: BodyVerifier): BodyVerifier {
  return (req, res, buf, encoding) => {
    verify(req, res, buf, encoding)
    if (carriesSignature(req.headers)) (req as WithSignedBytes)[SIGNED_BYTES] = buf
  }
}

/** The JSON body's bytes as received, when the request is signed and had a body. */
export function signedBodyOf(req: IncomingMessage): Buffer | undefined {
  return (req as WithSignedBytes)[SIGNED_BYTES]
}
