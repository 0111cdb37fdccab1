import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { type ApiClient, createApiClient, fetchAndVerifyPeerCard, sendAndWait, verifyTaskReceipt } from '../../src/client/index.js'
import { OPEN_REQUIREMENTS } from '../../src/cards/policy-gate.js'
import { contractSchemas, violations } from '../helpers/contract-schemas.js'
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
    const result = await sendAndWait(
      t.client,
      { sender: 'peer@globex', message: 'Fix the flaky login test' },
      { initialDelayMs: 100, maxDelayMs: 500, timeoutMs: 60_000, sleep: time.sleep, now: time.now },
    )
    expect(time.waits).toEqual([100, 200, 400, 500])
    expect(result.ok).toBe(true)
    if (!result.ok) return
    const done = result.value
    expect(done.polls).toBe(4)
    expect(done.status).toBe('completed')
    expect(done.task.artifacts).toEqual([expect.objectContaining({ name: 'result', data: 'patched login()' })])
    expect(done.receipt?.['task_id']).toBe(done.task.id)
    expect(JSON.parse(done.responseText)).toEqual(done.task)
    const verdict = await verifyTaskReceipt(done.responseText, { jwks })
    expect(verdict).toMatchObject({ ok: true, value: { keyPinned: true } })
  })

  it('verifyTaskReceipt rejects a tampered response, a wrong key and an unattested response', async () => {
    const result = await sendAndWait(
      t.client,
      { sender: 'peer@globex', message: 'Tamper test' },
      { initialDelayMs: 1, maxDelayMs: 1, sleep: () => finishNewest(t.client, 'complete') },
    )
    if (!result.ok) throw new Error(`expected completion, got ${result.code}`)
    const tampered = await verifyTaskReceipt(result.value.responseText.replace('patched login()', 'patched logout()'), { jwks })
    expect(tampered.ok).toBe(false)
    expect(tampered).toMatchObject({ code: 'receipt_invalid' })
    if (!tampered.ok && tampered.code === 'receipt_invalid') expect(tampered.failures[0]).toMatch(/^content_hash mismatch/)
    const otherKey = { kty: 'OKP', crv: 'Ed25519', x: (jwks as { keys: { x: string }[] }).keys[0]?.x, kid: t.keys.receipt.kid }
    const wrongKey = await verifyTaskReceipt(result.value.responseText, { trustedJwk: otherKey })
    expect(wrongKey.ok).toBe(false)
    expect(await verifyTaskReceipt(JSON.stringify({ ...result.value.task, receipt: null }), { jwks })).toEqual({
      ok: false,
      code: 'unattested',
      detail: 'the response carries no receipt (unattested)',
    })
    expect(await verifyTaskReceipt('not json', { jwks })).toMatchObject({ ok: false, code: 'malformed_response' })
  })

  describe('verifyTaskReceipt, from what the caller holds, pinned by the receipt key fingerprint', () => {
    const receiptFingerprint = () => keyFingerprint(t.keys.receipt.publicKey)
    const wrongFingerprint = 'sha256:' + '0'.repeat(64)

    it('verifies what the typed client returns (parsed JSON), fetching the JWKS from the node it came from', async () => {
      const jwksRequests: string[] = []
      const recording: typeof fetch = async (input, init) => {
        jwksRequests.push(String(input))
        return fetch(input, init)
      }
      const sent = await t.client.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'verify me as sent' } })
      expect(sent.data?.status).toBe('submitted')
      expect(await verifyTaskReceipt(sent, { trustedFingerprints: [receiptFingerprint()], fetch: recording })).toMatchObject({
        ok: true,
        value: { keyPinned: true },
      })
      expect(jwksRequests).toEqual([`${t.url}/.well-known/agent.json/keys`])
      // Under the versioned prefix, the JWKS is still the node's own.
      const v1 = t.clientWith({ token: OPERATOR_TOKEN, prefix: '/api/v1' })
      const result = await sendAndWait(
        v1,
        { sender: 'peer@globex', message: 'verify me when done' },
        { initialDelayMs: 5, sleep: () => finishNewest(v1, 'complete') },
      )
      if (!result.ok) throw new Error(`expected completion, got ${result.code}`)
      const got = await v1.GET('/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: result.value.task.id } } })
      expect(got.data?.receipt?.task_id).toBe(result.value.task.id)
      jwksRequests.length = 0
      expect(await verifyTaskReceipt(got, { trustedFingerprints: receiptFingerprint(), fetch: recording })).toMatchObject({ ok: true })
      expect(jwksRequests).toEqual([`${t.url}/.well-known/agent.json/keys`])
      // sendAndWait's result (or its value), and a plain fetch Response, are accepted as they are.
      for (const waited of [result, result.value]) {
        expect(await verifyTaskReceipt(waited, { trustedFingerprints: [receiptFingerprint()], jwksUrl: `${t.url}/.well-known/agent.json/keys` })).toMatchObject(
          {
            ok: true,
          },
        )
      }
      const raw = await fetch(`${t.url}/a2a/tasks/${result.value.task.id}`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
      expect(await verifyTaskReceipt(raw, { trustedFingerprints: [receiptFingerprint()] })).toMatchObject({ ok: true })
    })

    it('refuses a key whose fingerprint is not pinned, and reports a JWKS it cannot fetch, both as data', async () => {
      const sent = await t.client.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'not pinned' } })
      const untrusted = await verifyTaskReceipt(sent, { trustedFingerprints: [wrongFingerprint] })
      expect(untrusted).toMatchObject({ ok: false, code: 'receipt_invalid' })
      if (!untrusted.ok && untrusted.code === 'receipt_invalid')
        expect(untrusted.failures).toEqual([
          expect.stringContaining(`(fingerprint ${receiptFingerprint()}, from ${t.url}/.well-known/agent.json/keys) is not among the trusted fingerprints`),
        ])
      const down = await verifyTaskReceipt(sent, {
        trustedFingerprints: [receiptFingerprint()],
        fetch: async () => {
          throw new TypeError('fetch failed')
        },
      })
      expect(down).toEqual({ ok: false, code: 'jwks_unavailable', detail: `could not fetch JWKS from ${t.url}/.well-known/agent.json/keys: fetch failed` })
      const missing = await verifyTaskReceipt(sent, { trustedFingerprints: [receiptFingerprint()], jwksUrl: `${t.url}/.well-known/no-such-keys` })
      expect(missing).toMatchObject({ ok: false, code: 'jwks_unavailable', detail: expect.stringMatching(/^could not fetch JWKS from .*: HTTP 40\d$/) })
      // Text alone does not say which node it came from.
      expect(await verifyTaskReceipt(JSON.stringify(sent.data), { trustedFingerprints: [receiptFingerprint()] })).toMatchObject({
        ok: false,
        code: 'invalid_argument',
        detail: expect.stringMatching(/^no JWKS URL/),
      })
      // An error response has no receipt to verify.
      const notFound = await t.client.GET('/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: 'ffffffffffff' } } })
      expect(await verifyTaskReceipt(notFound, { trustedFingerprints: [receiptFingerprint()] })).toEqual({
        ok: false,
        code: 'unattested',
        detail: 'the request failed (HTTP 404): no receipt to verify',
      })
    })

    it('sendAndWait verifies the final receipt when asked, and ends with receipt_rejected when it does not verify', async () => {
      const verified = await sendAndWait(
        t.client,
        { sender: 'peer@globex', message: 'verify on the way' },
        { initialDelayMs: 5, sleep: () => finishNewest(t.client, 'complete'), verify: { trustedFingerprints: [receiptFingerprint()] } },
      )
      expect(verified).toMatchObject({ ok: true, value: { status: 'completed', verification: { ok: true } } })
      const rejected = await sendAndWait(
        t.client,
        { sender: 'peer@globex', message: 'wrong pin' },
        { initialDelayMs: 5, sleep: () => finishNewest(t.client, 'complete'), verify: { trustedFingerprints: [wrongFingerprint] } },
      )
      expect(rejected).toMatchObject({
        ok: false,
        code: 'receipt_rejected',
        detail: expect.stringMatching(/^the task ended, but its receipt did not verify: receipt key .* is not among the trusted fingerprints$/),
        httpStatus: null,
        task: { status: 'completed' },
        error: { ok: false, code: 'receipt_invalid' },
      })
    })

    it("carries receipts that match the contract's A2AReceipt", async () => {
      const sent = await t.client.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'shape' } })
      expect(violations(contractSchemas()('A2AReceipt'), sent.data?.receipt)).toBe('')
    })
  })

  it('sendAndWait reports failed and canceled tasks as finished waits with their status', async () => {
    for (const [how, status] of [
      ['fail', 'failed'],
      ['cancel', 'canceled'],
    ] as const) {
      const result = await sendAndWait(
        t.client,
        { sender: 'peer@globex', message: `to be ${status}` },
        { initialDelayMs: 5, sleep: () => finishNewest(t.client, how) },
      )
      expect(result).toMatchObject({ ok: true, value: { status, task: { status } } })
    }
  })

  it('sendAndWait works on the /api/v1 prefix too', async () => {
    const v1 = t.clientWith({ token: OPERATOR_TOKEN, prefix: '/api/v1' })
    const result = await sendAndWait(v1, { sender: 'peer@globex', message: 'versioned' }, { initialDelayMs: 5, sleep: () => finishNewest(v1, 'complete') })
    expect(result).toMatchObject({ ok: true, value: { status: 'completed' } })
  })

  it('sendAndWait times out with the last state seen when nobody works on the task', async () => {
    const time = virtualTime()
    const result = await sendAndWait(
      t.client,
      { sender: 'peer@globex', message: 'nobody home' },
      { initialDelayMs: 1_000, maxDelayMs: 4_000, timeoutMs: 10_000, sleep: time.sleep, now: time.now },
    )
    expect(result).toMatchObject({
      ok: false,
      code: 'timeout',
      detail: 'the task did not end within timeoutMs',
      httpStatus: null,
      task: { status: 'submitted' },
      polls: 4,
    })
    expect(time.waits).toEqual([1_000, 2_000, 4_000, 3_000])
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
    const result = await sendAndWait(
      t.client,
      { sender: 'peer@globex', message: 'abort me' },
      { initialDelayMs: 3_600_000, maxDelayMs: 3_600_000, timeoutMs: 7_200_000, signal: controller.signal, now },
    )
    expect(readings).toBe(2)
    expect(result).toEqual({
      ok: false,
      code: 'aborted',
      detail: 'the signal aborted the wait',
      httpStatus: null,
      error: reason,
      task: expect.objectContaining({ message: 'abort me', status: 'submitted' }),
      polls: 0,
    })
  })

  it('sendAndWait returns HTTP errors as data: a refused send, a failing poll', async () => {
    const agent = await t.tokens.create({ role: 'agent', tenant: 'default', expiresInSeconds: null })
    const refused = await sendAndWait(t.clientWith({ token: agent.token }), { sender: 'a', message: 'b' })
    expect(refused).toEqual({
      ok: false,
      code: 'send_failed',
      detail: 'POST /a2a/tasks/send answered an error: HTTP 403',
      httpStatus: 403,
      error: { detail: 'Agent tokens cannot access operator-only endpoints', required_permission: 'admin:manage' },
      task: null,
      polls: 0,
    })
    // The network answers 503 to every GET (a proxy in trouble); the send itself goes through.
    const flaky = createApiClient({
      baseUrl: t.url,
      token: OPERATOR_TOKEN,
      fetch: async (input: Request | string | URL, init?: RequestInit) => {
        const request = new Request(input, init)
        return request.method === 'GET'
          ? new Response('{"detail":"Service Unavailable"}', { status: 503, headers: { 'content-type': 'application/json' } })
          : fetch(request)
      },
    })
    const poll = await sendAndWait(flaky, { sender: 'a', message: 'b' }, { initialDelayMs: 1 })
    expect(poll).toMatchObject({
      ok: false,
      code: 'poll_failed',
      detail: 'GET /a2a/tasks/{a2a_task_id} answered an error: HTTP 503',
      httpStatus: 503,
      error: { detail: 'Service Unavailable' },
      task: { status: 'submitted' },
      polls: 1,
    })
  })

  it('sendAndWait answers arguments of the wrong shape (from JavaScript) with invalid_argument, before sending anything', async () => {
    let requests = 0
    const counting = createApiClient({
      baseUrl: t.url,
      token: OPERATOR_TOKEN,
      fetch: async (input: Request | string | URL, init?: RequestInit) => {
        requests++
        return fetch(input, init)
      },
    })
    const body = { sender: 'a', message: 'b' }
    const wrong = [
      [counting, body, { initialDelayMs: 0 }, 'need 0 < initialDelayMs <= maxDelayMs and timeoutMs >= 0'],
      [counting, body, { initialDelayMs: 10, maxDelayMs: 5 }, 'need 0 < initialDelayMs <= maxDelayMs and timeoutMs >= 0'],
      [counting, body, { timeoutMs: -1 }, 'need 0 < initialDelayMs <= maxDelayMs and timeoutMs >= 0'],
      [counting, body, { timeoutMs: '60000' }, 'timeoutMs must be a number of milliseconds (got string)'],
      [counting, body, { initialDelayMs: Number.NaN }, 'initialDelayMs must be a number of milliseconds (got number)'],
      [counting, body, { maxDelayMs: null }, 'maxDelayMs must be a number of milliseconds (got null)'],
      [counting, body, { sleep: 'soon' }, 'sleep must be a function (got string)'],
      [counting, body, { now: 1 }, 'now must be a function (got number)'],
      [counting, body, { signal: 'stop' }, 'signal must be an AbortSignal'],
      [counting, body, { verify: 'sha256:abc' }, 'verify must be the receipt trust: { trustedFingerprints }, { jwks } or { trustedJwk }'],
      [counting, body, 'fast', 'options must be an object (got string)'],
      [counting, body, null, 'options must be an object (got null)'],
      [counting, 'Fix the flaky test', {}, 'body must be an object (got string)'],
      [counting, [body], {}, 'body must be an object (got array)'],
      [null, body, {}, 'client must be the typed client (createApiClient)'],
      [{ POST: () => {} }, body, {}, 'client must be the typed client (createApiClient)'],
    ] as const
    for (const [client, sent, options, detail] of wrong) {
      const result = await sendAndWait(client as never, sent as never, options as never)
      expect(result, JSON.stringify(options)).toEqual({ ok: false, code: 'invalid_argument', detail, httpStatus: null, error: null, task: null, polls: 0 })
    }
    expect(requests).toBe(0)
  })

  describe('fetchAndVerifyPeerCard', () => {
    const fingerprint = () => keyFingerprint(t.keys.capabilityCard.publicKey)

    it('accepts the card when its key is pinned and its policies meet the requirements', async () => {
      const verdict = await fetchAndVerifyPeerCard(t.url, {
        trustedIssuerFingerprints: [fingerprint()],
        requirements: { maxCostCapUsd: 10, minRedactionTier: 'standard', minSandboxProfile: 'container' },
        expectedIssuer: 'test-node',
      })
      expect(verdict).toMatchObject({
        ok: true,
        value: { fingerprint: fingerprint(), card: { card: { issuer: 'test-node', policies: { cost_cap_usd: 10 } } } },
      })
    })

    it('refuses with the code: untrusted key, policy, issuer, expiry', async () => {
      const cases = [
        [{ trustedIssuerFingerprints: ['sha256:' + '0'.repeat(64)], requirements: OPEN_REQUIREMENTS }, 'untrusted_issuer'],
        [{ trustedIssuerFingerprints: [fingerprint()], requirements: { ...OPEN_REQUIREMENTS, maxCostCapUsd: 5 } }, 'policy'],
        [{ trustedIssuerFingerprints: [fingerprint()], requirements: { ...OPEN_REQUIREMENTS, minSandboxProfile: 'microvm' } }, 'policy'],
        [{ trustedIssuerFingerprints: [fingerprint()], requirements: OPEN_REQUIREMENTS, expectedIssuer: 'someone-else' }, 'issuer_mismatch'],
        [{ trustedIssuerFingerprints: [fingerprint()], requirements: OPEN_REQUIREMENTS, now: Date.now() / 1000 + 10 * 86_400 }, 'signature'],
      ] as const
      for (const [options, code] of cases) {
        const verdict = await fetchAndVerifyPeerCard(t.url, options)
        expect(verdict, code).toMatchObject({ ok: false, code, httpStatus: 200 })
        if (!verdict.ok) expect(verdict.detail.length).toBeGreaterThan(0)
      }
    })

    it("takes the CLI's names: trustedFingerprints and require* (the former names still work)", async () => {
      const modern = await fetchAndVerifyPeerCard(t.url, {
        trustedFingerprints: fingerprint(),
        requireCostCapUsd: 10,
        requireRedactionTier: 'standard',
        requireSandboxProfile: 'container',
        expectedIssuer: 'test-node',
      })
      expect(modern).toMatchObject({ ok: true, value: { fingerprint: fingerprint() } })
      expect(await fetchAndVerifyPeerCard(t.url, { trustedFingerprints: [fingerprint()] })).toMatchObject({ ok: true })
      const stricter = await fetchAndVerifyPeerCard(t.url, { trustedFingerprints: [fingerprint()], requireSandboxProfile: 'microvm' })
      expect(stricter).toMatchObject({ ok: false, code: 'policy', detail: "sandbox profile: peer profile 'container' is weaker than required 'microvm'" })
      expect(await fetchAndVerifyPeerCard(t.url, { requireCostCapUsd: 10 })).toMatchObject({ ok: false, code: 'untrusted_issuer' })
    })

    it('answers arguments of the wrong shape (from JavaScript) with invalid_argument, before fetching anything', async () => {
      let fetched = 0
      const counting: typeof fetch = async (input, init) => {
        fetched++
        return fetch(input, init)
      }
      const wrong = [
        [{ trustedFingerprints: [fingerprint()], requireCostCapUsd: '10' }, /^requireCostCapUsd must be a number of USD/],
        [
          { trustedFingerprints: [fingerprint()], requirements: { maxCostCapUsd: '10', minRedactionTier: 'none', minSandboxProfile: 'none' } },
          /^requirements\.maxCostCapUsd must be a number/,
        ],
        [{ trustedFingerprints: [fingerprint()], requirements: 'strict' }, /^requirements must be an object/],
        [{ trustedFingerprints: 42 }, /^trustedFingerprints must be a fingerprint/],
        [{ trustedFingerprints: [fingerprint()], trustedIssuerFingerprints: [fingerprint()] }, /not also its former name/],
        [{ trustedFingerprints: [fingerprint()], requireCostCapUsd: 5, requirements: OPEN_REQUIREMENTS }, /not also the former requirements/],
        [{ trustedFingerprints: [fingerprint()], requirements: null }, /^requirements must be an object \(got null\)$/],
        [{ trustedFingerprints: [fingerprint()], requirements: [] }, /^requirements must be an object \(got object\)$/],
        [
          { trustedFingerprints: [fingerprint()], requirements: { ...OPEN_REQUIREMENTS, minSandboxProfile: 3 } },
          /^requirements\.minSandboxProfile must be a string \(got number\)$/,
        ],
        [{ trustedFingerprints: [fingerprint()], requireRedactionTier: 2 }, /^requireRedactionTier must be a string \(got number\)$/],
        [{ trustedFingerprints: [fingerprint()], requireCostCapUsd: -1 }, /^requireCostCapUsd must be a number of USD, 0 or more \(got -1\)$/],
        [{ trustedFingerprints: null }, /^trustedFingerprints must be a fingerprint/],
        [{ trustedFingerprints: [fingerprint(), 7] }, /^trustedFingerprints must be a fingerprint/],
        [{ trustedFingerprints: [fingerprint()], expectedIssuer: 42 }, /^expectedIssuer must be a string \(got number\)$/],
        [{ trustedFingerprints: [fingerprint()], now: '1700000000' }, /^now must be a finite number of Unix seconds \(got "1700000000"\)$/],
        [{ trustedFingerprints: [fingerprint()], metrics: 5 }, /^metrics must have a signatureVerified\(kind, valid\) method$/],
      ] as const
      for (const [options, detail] of wrong) {
        const verdict = await fetchAndVerifyPeerCard(t.url, { ...options, fetch: counting } as never)
        expect(verdict, JSON.stringify(options)).toEqual({ ok: false, code: 'invalid_argument', detail: expect.stringMatching(detail), httpStatus: null })
      }
      expect(await fetchAndVerifyPeerCard(t.url, null as never)).toEqual({
        ok: false,
        code: 'invalid_argument',
        detail: 'options must be an object',
        httpStatus: null,
      })
      expect(await fetchAndVerifyPeerCard(t.url, { trustedFingerprints: [fingerprint()], fetch: 'fetch' } as never)).toEqual({
        ok: false,
        code: 'invalid_argument',
        detail: 'fetch must be a function (got "fetch")',
        httpStatus: null,
      })
      for (const [baseUrl, shown] of [
        [42, 'number'],
        ['peer.example', '"peer.example"'],
        ['ftp://peer.example', '"ftp://peer.example"'],
      ] as const) {
        expect(await fetchAndVerifyPeerCard(baseUrl as never, { trustedFingerprints: [fingerprint()], fetch: counting })).toEqual({
          ok: false,
          code: 'invalid_argument',
          detail: `baseUrl must be the peer's http(s) URL (got ${shown})`,
          httpStatus: null,
        })
      }
      expect(fetched).toBe(0)
    })

    it('reports an HTTP error and a malformed card as data', async () => {
      // Not a peer's root: the path under it is no public document, so the node asks for a token.
      const missing = await fetchAndVerifyPeerCard(`${t.url}/nowhere`, { trustedIssuerFingerprints: [], requirements: OPEN_REQUIREMENTS })
      expect(missing).toMatchObject({ ok: false, code: 'http', detail: 'GET /.well-known/a2a-capability-card.json answered 401', httpStatus: 401 })
      const garbage = await fetchAndVerifyPeerCard(t.url, {
        trustedIssuerFingerprints: [],
        requirements: OPEN_REQUIREMENTS,
        fetch: async () => new Response('{"alg":"EdDSA","card":{}}', { status: 200, headers: { 'content-type': 'application/json' } }),
      })
      expect(garbage).toMatchObject({ ok: false, code: 'malformed', httpStatus: 200 })
    })
  })
})
