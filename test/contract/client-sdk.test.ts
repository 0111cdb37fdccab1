import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { type ApiClient, createApiClient, fetchAndVerifyPeerCard, sendAndWait, verifyTaskReceipt } from '../../src/client/index.js'
import { OPEN_REQUIREMENTS } from '../../src/cards/policy-gate.js'
import { OPERATOR_TOKEN, type TestApp, publishedJwks, startTestApp } from '../helpers/test-app.js'

/** A clock and a sleep that advance together without waiting, recording each wait. */
function virtualTime(onSleep: (waits: number[]) => Promise<void> | void = () => {}) {
  let now = 1_000_000
  const waits: number[] = []
  return {
    waits,
    now: () => now,
    sleep: async (ms: number) => {
      waits.push(ms)
      now += ms
      await onSleep(waits)
    },
  }
}

describe('client SDK helpers against the real server', () => {
  let t: TestApp
  let jwks: unknown
  beforeAll(async () => {
    t = await startTestApp()
    jwks = await publishedJwks(t.url)
  })
  afterAll(async () => t.close())

  /** Finishes the linked task of the newest A2A task the way a worker would, through the API. */
  async function finishNewest(client: ApiClient, how: 'complete' | 'fail' | 'cancel'): Promise<void> {
    const { data } = await client.GET('/tasks', { params: { query: { limit: 1 } } })
    const id = data?.tasks[0]?.id as string
    if (how === 'complete') await client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: id } }, body: { result_summary: 'patched login()' } })
    if (how === 'fail') await client.POST('/tasks/{task_id}/fail', { params: { path: { task_id: id } }, body: { reason: 'cannot reproduce' } })
    if (how === 'cancel') await client.POST('/tasks/{task_id}/cancel', { params: { path: { task_id: id } }, body: { reason: 'superseded' } })
  }

  it('sendAndWait polls with exponential backoff until completion and returns the completion receipt', async () => {
    const time = virtualTime(async (waits) => {
      if (waits.length === 4) await finishNewest(t.client, 'complete')
    })
    const result = await sendAndWait(t.client, { sender: 'peer@globex', message: 'Fix the flaky login test' }, { initialDelayMs: 100, maxDelayMs: 500, timeoutMs: 60_000, sleep: time.sleep, now: time.now })
    expect(time.waits).toEqual([100, 200, 400, 500])
    expect(result.ok).toBe(true)
    if (!result.ok) return
    expect(result.polls).toBe(4)
    expect(result.status).toBe('completed')
    expect(result.task.artifacts).toEqual([expect.objectContaining({ name: 'result', data: 'patched login()' })])
    expect(result.receipt?.['task_id']).toBe(result.task.id)
    expect(JSON.parse(result.responseText)).toEqual(result.task)
    const verdict = await verifyTaskReceipt(result.responseText, { jwks })
    expect(verdict).toMatchObject({ ok: true, value: { keyPinned: true } })
  })

  it('verifyTaskReceipt rejects a tampered response, a wrong key and an unattested response', async () => {
    const result = await sendAndWait(t.client, { sender: 'peer@globex', message: 'Tamper test' }, { initialDelayMs: 1, maxDelayMs: 1, sleep: () => finishNewest(t.client, 'complete') })
    if (!result.ok) throw new Error(`expected completion, got ${result.reason}`)
    const tampered = await verifyTaskReceipt(result.responseText.replace('patched login()', 'patched logout()'), { jwks })
    expect(tampered.ok).toBe(false)
    expect(tampered).toMatchObject({ code: 'receipt_invalid' })
    if (!tampered.ok && tampered.code === 'receipt_invalid') expect(tampered.failures[0]).toMatch(/^content_hash mismatch/)
    const otherKey = { kty: 'OKP', crv: 'Ed25519', x: (jwks as { keys: { x: string }[] }).keys[0]?.x, kid: t.keys.receipt.kid }
    const wrongKey = await verifyTaskReceipt(result.responseText, { trustedJwk: otherKey })
    expect(wrongKey.ok).toBe(false)
    expect(await verifyTaskReceipt(JSON.stringify({ ...result.task, receipt: null }), { jwks })).toEqual({ ok: false, code: 'unattested', detail: 'the response carries no receipt (unattested)' })
    expect(await verifyTaskReceipt('not json', { jwks })).toMatchObject({ ok: false, code: 'malformed_response' })
  })

  it('sendAndWait reports failed and canceled tasks as finished waits with their status', async () => {
    for (const [how, status] of [['fail', 'failed'], ['cancel', 'canceled']] as const) {
      const result = await sendAndWait(t.client, { sender: 'peer@globex', message: `to be ${status}` }, { initialDelayMs: 5, sleep: () => finishNewest(t.client, how) })
      expect(result).toMatchObject({ ok: true, status, task: { status } })
    }
  })

  it('sendAndWait works on the /api/v1 prefix too', async () => {
    const v1 = t.clientWith({ token: OPERATOR_TOKEN, prefix: '/api/v1' })
    const result = await sendAndWait(v1, { sender: 'peer@globex', message: 'versioned' }, { initialDelayMs: 5, sleep: () => finishNewest(v1, 'complete') })
    expect(result).toMatchObject({ ok: true, status: 'completed' })
  })

  it('sendAndWait times out with the last state seen when nobody works on the task', async () => {
    const time = virtualTime()
    const result = await sendAndWait(t.client, { sender: 'peer@globex', message: 'nobody home' }, { initialDelayMs: 1_000, maxDelayMs: 4_000, timeoutMs: 10_000, sleep: time.sleep, now: time.now })
    expect(result).toMatchObject({ ok: false, reason: 'timeout', httpStatus: null, task: { status: 'submitted' } })
    expect(time.waits).toEqual([1_000, 2_000, 4_000, 3_000])
    expect(result.polls).toBe(4)
  })

  it('sendAndWait stops when its signal is aborted, with real timers', async () => {
    const controller = new AbortController()
    const reason = new Error('caller gave up')
    // The first wait is an hour on the real timer: only the abort can end it, and if the abort did not cancel the
    // sleep, the test would hang until vitest's timeout fails it. The abort is fired once the task has been sent
    // and the wait has begun: the clock is read right before each wait, and setImmediate runs after the
    // synchronous step from that reading into the sleep.
    let readings = 0
    const now = (): number => {
      if (++readings === 2) setImmediate(() => controller.abort(reason))
      return Date.now()
    }
    const result = await sendAndWait(t.client, { sender: 'peer@globex', message: 'abort me' }, { initialDelayMs: 3_600_000, maxDelayMs: 3_600_000, timeoutMs: 7_200_000, signal: controller.signal, now })
    expect(readings).toBe(2)
    expect(result).toEqual({ ok: false, reason: 'aborted', httpStatus: null, error: reason, task: expect.objectContaining({ message: 'abort me', status: 'submitted' }), polls: 0 })
  })

  it('sendAndWait returns HTTP errors as data: a refused send, a failing poll', async () => {
    const agent = await t.tokens.create({ role: 'agent', tenant: 'default', expiresInSeconds: null })
    const refused = await sendAndWait(t.clientWith({ token: agent.token }), { sender: 'a', message: 'b' })
    expect(refused).toEqual({ ok: false, reason: 'send_failed', httpStatus: 403, error: { detail: 'Agent tokens cannot access operator-only endpoints', required_permission: 'admin:manage' }, task: null, polls: 0 })
    // The network answers 503 to every GET (a proxy in trouble); the send itself goes through.
    const flaky = createApiClient({
      baseUrl: t.url,
      token: OPERATOR_TOKEN,
      fetch: async (input: Request | string | URL, init?: RequestInit) => {
        const request = new Request(input, init)
        return request.method === 'GET' ? new Response('{"detail":"Service Unavailable"}', { status: 503, headers: { 'content-type': 'application/json' } }) : fetch(request)
      },
    })
    const poll = await sendAndWait(flaky, { sender: 'a', message: 'b' }, { initialDelayMs: 1 })
    expect(poll).toMatchObject({ ok: false, reason: 'poll_failed', httpStatus: 503, error: { detail: 'Service Unavailable' }, task: { status: 'submitted' }, polls: 1 })
  })

  it('sendAndWait refuses nonsensical timing options', async () => {
    await expect(sendAndWait(t.client, { sender: 'a', message: 'b' }, { initialDelayMs: 0 })).rejects.toThrow(TypeError)
    await expect(sendAndWait(t.client, { sender: 'a', message: 'b' }, { initialDelayMs: 10, maxDelayMs: 5 })).rejects.toThrow(TypeError)
  })

  describe('fetchAndVerifyPeerCard', () => {
    const fingerprint = () => keyFingerprint(t.keys.capabilityCard.publicKey)

    it('accepts the card when its key is pinned and its policies meet the requirements', async () => {
      const verdict = await fetchAndVerifyPeerCard(t.url, {
        trustedIssuerFingerprints: [fingerprint()],
        requirements: { maxCostCapUsd: 10, minRedactionTier: 'standard', minSandboxProfile: 'container' },
        expectedIssuer: 'test-node',
      })
      expect(verdict).toMatchObject({ ok: true, fingerprint: fingerprint(), card: { card: { issuer: 'test-node', policies: { cost_cap_usd: 10 } } } })
    })

    it('refuses with the reason: untrusted key, policy, issuer, expiry', async () => {
      const cases = [
        [{ trustedIssuerFingerprints: ['sha256:' + '0'.repeat(64)], requirements: OPEN_REQUIREMENTS }, 'untrusted_issuer'],
        [{ trustedIssuerFingerprints: [fingerprint()], requirements: { ...OPEN_REQUIREMENTS, maxCostCapUsd: 5 } }, 'policy'],
        [{ trustedIssuerFingerprints: [fingerprint()], requirements: { ...OPEN_REQUIREMENTS, minSandboxProfile: 'microvm' } }, 'policy'],
        [{ trustedIssuerFingerprints: [fingerprint()], requirements: OPEN_REQUIREMENTS, expectedIssuer: 'someone-else' }, 'issuer_mismatch'],
        [{ trustedIssuerFingerprints: [fingerprint()], requirements: OPEN_REQUIREMENTS, now: Date.now() / 1000 + 10 * 86_400 }, 'signature'],
      ] as const
      for (const [options, reason] of cases) {
        const verdict = await fetchAndVerifyPeerCard(t.url, options)
        expect(verdict, reason).toMatchObject({ ok: false, reason, httpStatus: 200 })
        if (!verdict.ok) expect(verdict.detail.length).toBeGreaterThan(0)
      }
    })

    it('reports an HTTP error and a malformed card as data', async () => {
      // Not a peer's root: the path under it is no public document, so the node asks for a token.
      const missing = await fetchAndVerifyPeerCard(`${t.url}/nowhere`, { trustedIssuerFingerprints: [], requirements: OPEN_REQUIREMENTS })
      expect(missing).toMatchObject({ ok: false, reason: 'http', httpStatus: 401 })
      const garbage = await fetchAndVerifyPeerCard(t.url, {
        trustedIssuerFingerprints: [],
        requirements: OPEN_REQUIREMENTS,
        fetch: async () => new Response('{"alg":"EdDSA","card":{}}', { status: 200, headers: { 'content-type': 'application/json' } }),
      })
      expect(garbage).toMatchObject({ ok: false, reason: 'malformed', httpStatus: 200 })
    })
  })
})
