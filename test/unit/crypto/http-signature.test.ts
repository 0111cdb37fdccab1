import { describe, expect, it } from 'vitest'
import { generateEd25519KeyPair, privateKeyFromSeed, publicKeyFromJwk, publicKeyOf } from '../../../src/crypto/ed25519.js'
import {
  type SignableRequest,
  contentDigest,
  contentDigestMatches,
  signHttpRequest,
  signHttpResponse,
  signatureMember,
  verifyHttpRequest,
  verifyHttpResponse,
} from '../../../src/crypto/http-signature.js'

// RFC 9421 Appendix B.1.4, "Example Ed25519 Test Key" (test-key-ed25519), as its JWK: `d` is the 32-byte seed.
const RFC_KEY_D = 'n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU'
const RFC_KEY_X = 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs'
const rfcPrivate = privateKeyFromSeed(Buffer.from(RFC_KEY_D, 'base64url'))
const rfcPublic = publicKeyFromJwk({ kty: 'OKP', crv: 'Ed25519', x: RFC_KEY_X })

// RFC 9421 Appendix B.2, the test request: `POST /foo?param=Value&Pet=dog` to example.com with an 18-byte JSON body.
const TEST_BODY = '{"hello": "world"}'
const testRequest: SignableRequest = {
  method: 'POST',
  url: 'https://example.com/foo?param=Value&Pet=dog',
  headers: {
    Host: 'example.com',
    Date: 'Tue, 20 Apr 2021 02:07:55 GMT',
    'Content-Type': 'application/json',
    'Content-Digest': 'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
    'Content-Length': '18',
  },
}

// RFC 9421 Appendix B.2.6, "Signing a Request Using ed25519".
const B26_INPUT = 'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"'
const B26_SIGNATURE = 'sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:'
const B26_COMPONENTS = ['"date"', '"@method"', '"@path"', '"@authority"', '"content-type"', '"content-length"']

describe('RFC 9421 B.2.6 (Ed25519) through the library as configured', () => {
  it('derives the B.1.4 public key from its seed', () => {
    expect(publicKeyOf(rfcPrivate).export({ format: 'jwk' }).x).toBe(RFC_KEY_X)
  })

  it('signs the test request into exactly the RFC’s Signature-Input and Signature', async () => {
    const fields = await signHttpRequest(testRequest, {
      label: 'sig-b26',
      components: B26_COMPONENTS,
      privateKey: rfcPrivate,
      keyid: 'test-key-ed25519',
      created: 1618884473,
      alg: false,
    })
    expect(fields).toEqual({ 'signature-input': B26_INPUT, signature: B26_SIGNATURE })
  })

  it('verifies the RFC’s signature, and not once one covered field or the signature changes', async () => {
    const signed = { ...testRequest, headers: { ...testRequest.headers, 'Signature-Input': B26_INPUT, Signature: B26_SIGNATURE } }
    const options = { label: 'sig-b26', publicKey: rfcPublic, requiredComponents: B26_COMPONENTS, requiredParams: ['created', 'keyid'] as const }
    const verified = await verifyHttpRequest(signed, { ...options, keyid: 'test-key-ed25519' })
    expect(verified).toEqual({ ok: true, value: { created: 1618884473, expires: null, nonce: null, keyid: 'test-key-ed25519', components: B26_COMPONENTS } })

    expect(await verifyHttpRequest({ ...signed, method: 'PUT' }, options)).toMatchObject({ ok: false, code: 'signature_invalid' })
    expect(await verifyHttpRequest({ ...signed, url: 'https://example.org/foo' }, options)).toMatchObject({ ok: false, code: 'signature_invalid' })
    expect(await verifyHttpRequest({ ...signed, headers: { ...signed.headers, 'Content-Length': '19' } }, options)).toMatchObject({
      ok: false,
      code: 'signature_invalid',
    })
    const flipped = B26_SIGNATURE.replace(':wqc', ':wqd')
    expect(await verifyHttpRequest({ ...signed, headers: { ...signed.headers, Signature: flipped } }, options)).toMatchObject({
      ok: false,
      code: 'signature_invalid',
    })
    // Another key does not verify it; a required component or parameter it lacks is refused before any crypto.
    expect(await verifyHttpRequest(signed, { ...options, publicKey: generateEd25519KeyPair().publicKey })).toMatchObject({ code: 'signature_invalid' })
    expect(await verifyHttpRequest(signed, { ...options, requiredComponents: ['"@target-uri"'] })).toMatchObject({ code: 'signature_unacceptable' })
    expect(await verifyHttpRequest(signed, { ...options, requiredParams: ['nonce'] })).toMatchObject({ code: 'signature_unacceptable' })
    expect(await verifyHttpRequest(signed, { ...options, keyid: 'other' })).toMatchObject({ code: 'signature_unacceptable' })
    expect(await verifyHttpRequest(signed, { ...options, label: 'sig1' })).toMatchObject({ code: 'signature_missing' })
    expect(await verifyHttpRequest(testRequest, options)).toMatchObject({ code: 'signature_missing' })
  })
})

describe('RFC 9530 Content-Digest', () => {
  it('is the sha-256 of the exact bytes: the RFC’s example content {"hello": "world"}', () => {
    // RFC 9530 Appendix B: the representation `{"hello": "world"}` has sha-256 X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=.
    expect(contentDigest(TEST_BODY)).toBe('sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:')
    expect(contentDigest(new TextEncoder().encode(TEST_BODY))).toBe(contentDigest(TEST_BODY))
  })

  it('matches only the body it was computed from; sha-512 alone or a broken field does not count', () => {
    const field = contentDigest(TEST_BODY)
    expect(contentDigestMatches(field, TEST_BODY)).toEqual({ ok: true, value: undefined })
    expect(contentDigestMatches(`sha-512=:AAAA:, ${field}`, TEST_BODY).ok).toBe(true)
    expect(contentDigestMatches(field, '{"hello": "world!"}')).toMatchObject({ ok: false, code: 'digest_mismatch' })
    expect(contentDigestMatches(testRequest.headers['Content-Digest'], TEST_BODY)).toMatchObject({ ok: false, code: 'digest_missing' })
    expect(contentDigestMatches(undefined, TEST_BODY)).toMatchObject({ ok: false, code: 'digest_missing' })
    expect(contentDigestMatches('sha-256=X48E', TEST_BODY)).toMatchObject({ ok: false, code: 'digest_mismatch' })
    expect(contentDigestMatches('sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE', TEST_BODY)).toMatchObject({ ok: false, code: 'digest_mismatch' })
  })
})

describe('a request signed with created, nonce and alg, and its answer bound to it with req', () => {
  const key = generateEd25519KeyPair()
  const components = ['"@method"', '"@target-uri"', '"content-digest"']
  const request: SignableRequest = { method: 'POST', url: 'http://127.0.0.1:9/a2a/v0/tasks', headers: { 'content-digest': contentDigest(TEST_BODY) } }
  const verifyOptions = { label: 'bernstein', publicKey: key.publicKey, requiredComponents: components, requiredParams: ['created', 'nonce', 'keyid'] as const }

  it('round-trips, states alg="ed25519" and its nonce, and refuses another alg', async () => {
    const fields = await signHttpRequest(request, {
      label: 'bernstein',
      components,
      privateKey: key.privateKey,
      keyid: 'kid-1',
      created: 1_700_000_000,
      nonce: 'n-1',
    })
    expect(fields['signature-input']).toBe('bernstein=("@method" "@target-uri" "content-digest");created=1700000000;keyid="kid-1";alg="ed25519";nonce="n-1"')
    const signed = { ...request, headers: { ...request.headers, ...fields } }
    expect(await verifyHttpRequest(signed, verifyOptions)).toMatchObject({ ok: true, value: { created: 1_700_000_000, nonce: 'n-1', keyid: 'kid-1' } })
    const otherAlg = { ...signed, headers: { ...signed.headers, 'signature-input': fields['signature-input'].replace('"ed25519"', '"hmac-sha256"') } }
    expect(await verifyHttpRequest(otherAlg, verifyOptions)).toMatchObject({ ok: false, code: 'signature_unacceptable' })
  })

  it('binds the answer to the request’s signature: the same answer to another request does not verify', async () => {
    const sign = (nonce: string) =>
      signHttpRequest(request, { label: 'bernstein', components, privateKey: key.privateKey, keyid: 'kid-1', created: 1_700_000_000, nonce })
    const first = { ...request, headers: { ...request.headers, ...(await sign('n-1')) } }
    const second = { ...request, headers: { ...request.headers, ...(await sign('n-2')) } }
    const answerComponents = ['"@status"', '"content-digest"', '"signature";req;key="bernstein"']
    const response = { status: 202, headers: { 'content-digest': contentDigest('{"status":"accepted"}') } }
    const fields = await signHttpResponse(response, first, {
      label: 'bernstein',
      components: answerComponents,
      privateKey: key.privateKey,
      keyid: 'kid-1',
      created: 1_700_000_001,
    })
    const answer = { ...response, headers: { ...response.headers, ...fields } }
    const options = { ...verifyOptions, requiredComponents: answerComponents, requiredParams: ['created'] as const }
    expect(await verifyHttpResponse(answer, first, options)).toMatchObject({ ok: true })
    expect(await verifyHttpResponse(answer, second, options)).toMatchObject({ ok: false, code: 'signature_invalid' })
    expect(await verifyHttpResponse({ ...answer, status: 200 }, first, options)).toMatchObject({ ok: false, code: 'signature_invalid' })
    expect(signatureMember(first.headers, 'bernstein')).toMatch(/^:[A-Za-z0-9+/]+=*:$/)
  })
})
