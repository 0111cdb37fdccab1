import { describe, expect, it } from 'vitest'
import { createApiClient, fetchAndVerifyPeerCard, sendAndWait } from '../../../src/client/index.js'
import { vectorText } from '../../helpers/vectors.js'

// Bernstein's card_a: issuer acme-orch, cost cap 12.5 USD, standard redaction, container sandbox, valid at NOW.
const CARD = vectorText('capability_cards', 'card_a.signed.json')
const FINGERPRINT = 'sha256:10ba682c8ad13513971e8b56881aab8bd702bb807796eca81932c735a94d6e6d'
const NOW = 1700000100

/** A fetch serving card_a, counting the requests made. */
function peer() {
  const served = { requests: 0 }
  const fetch = async (): Promise<Response> => {
    served.requests++
    return new Response(CARD, { status: 200, headers: { 'content-type': 'application/json' } })
  }
  return { served, fetch }
}

describe('fetchAndVerifyPeerCard called from JavaScript with arguments of the wrong shape', () => {
  it('accepts the well-formed call (the control for the cases below)', async () => {
    const { served, fetch } = peer()
    const verdict = await fetchAndVerifyPeerCard('https://peer.example', { trustedFingerprints: FINGERPRINT, requireCostCapUsd: 20, now: NOW, fetch })
    expect(verdict).toMatchObject({ ok: true, value: { fingerprint: FINGERPRINT, card: { card: { issuer: 'acme-orch' } } } })
    expect(served.requests).toBe(1)
  })

  it('answers invalid_argument, not a TypeError, and fetches nothing', async () => {
    // Each of these threw (PyFloat, `now`, `fetch`, `metrics`, the URL) or was misread (null as no requirement).
    const cases: [unknown, Record<string, unknown>, string][] = [
      [
        'https://peer.example',
        { requirements: { maxCostCapUsd: '10', minRedactionTier: 'none', minSandboxProfile: 'none' } },
        'requirements.maxCostCapUsd must be a number of USD, 0 or more (got "10")',
      ],
      ['https://peer.example', { requirements: 'strict' }, 'requirements must be an object (got "strict")'],
      ['https://peer.example', { requirements: null }, 'requirements must be an object (got null)'],
      ['https://peer.example', { requireSandboxProfile: 3 }, 'requireSandboxProfile must be a string (got number)'],
      ['https://peer.example', { trustedFingerprints: [42] }, 'trustedFingerprints must be a fingerprint (sha256:…) or a list of them'],
      ['https://peer.example', { now: 'now' }, 'now must be a finite number of Unix seconds (got "now")'],
      ['https://peer.example', { now: Number.POSITIVE_INFINITY }, 'now must be a finite number of Unix seconds (got number)'],
      ['https://peer.example', { expectedIssuer: ['acme-orch'] }, 'expectedIssuer must be a string (got object)'],
      ['https://peer.example', { metrics: {} }, 'metrics must have a signatureVerified(kind, valid) method'],
      [undefined, {}, "baseUrl must be the peer's http(s) URL (got undefined)"],
      ['not a url', {}, `baseUrl must be the peer's http(s) URL (got "not a url")`],
    ]
    for (const [baseUrl, wrong, detail] of cases) {
      const { served, fetch } = peer()
      const options = { trustedFingerprints: FINGERPRINT, now: NOW, fetch, ...wrong }
      const verdict = await fetchAndVerifyPeerCard(baseUrl as never, options as never)
      expect(verdict, detail).toEqual({ ok: false, code: 'invalid_argument', detail, httpStatus: null })
      expect(served.requests, detail).toBe(0)
    }
  })
})

describe('sendAndWait called from JavaScript with arguments of the wrong shape', () => {
  it('answers invalid_argument, not a TypeError, and sends nothing', async () => {
    let requests = 0
    const client = createApiClient({
      baseUrl: 'http://127.0.0.1:9',
      fetch: async () => {
        requests++
        return new Response('{}', { status: 500 })
      },
    })
    const verdict = await sendAndWait(client, { sender: 'a', message: 'b' }, { timeoutMs: '1000' as never })
    expect(verdict).toEqual({
      ok: false,
      code: 'invalid_argument',
      detail: 'timeoutMs must be a number of milliseconds (got string)',
      httpStatus: null,
      error: null,
      task: null,
      polls: 0,
    })
    expect(await sendAndWait(client, undefined as never)).toMatchObject({
      ok: false,
      code: 'invalid_argument',
      detail: 'body must be an object (got undefined)',
    })
    expect(requests).toBe(0)
  })
})
