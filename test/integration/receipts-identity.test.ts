import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyA2AReceipt } from '../../src/receipts/verify-a2a-receipt.js'
import { checkAgentCardConformance } from '../../src/agent-card/index.js'
import { consumePeerCard, parseCardFile, verifyCapabilityCard } from '../../src/cards/index.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { testEngines } from '../helpers/engines.js'
import { type TestApp, publishedJwks, rawRequest, startTestApp } from '../helpers/test-app.js'

for (const engine of testEngines()) {
  describe(`receipts and the published identity (${engine})`, () => {
    let app: TestApp
    let jwks: unknown
    beforeAll(async () => {
      app = await startTestApp({ engine })
      jwks = await publishedJwks(app.url)
    })
    afterAll(async () => app.close())

    it('attests acceptance with a receipt that verifies against the published JWKS', async () => {
      const res = await rawRequest(app.url, { method: 'POST', path: '/a2a/tasks/send', body: JSON.stringify({ sender: 'peer', message: 'héllo 🌍' }) })
      expect(res.status).toBe(201)
      expect(res.headers.get('bernstein-attestation')).toBe('acceptance')
      const receipt = (res.json as { receipt: Record<string, unknown> }).receipt
      expect(receipt['kid']).toBe(app.keys.receipt.kid)
      const verdict = await verifyA2AReceipt(receipt, res.text, { jwks })
      expect(verdict).toMatchObject({ ok: true, value: { keyPinned: true } })
      const tampered = await verifyA2AReceipt(receipt, res.text.replace('héllo', 'hello'), { jwks })
      expect(tampered.ok).toBe(false)
      expect(tampered).toMatchObject({ code: 'receipt_invalid' })
      if (!tampered.ok && tampered.code === 'receipt_invalid')
        expect(tampered.failures[0]).toMatch(/^content_hash mismatch: response hashes to sha256:[0-9a-f]{64}, receipt claims sha256:/)
    })

    it('reads an unfinished task with its acceptance receipt, which covers the 201 body and not the later one', async () => {
      const sent = await rawRequest(app.url, { method: 'POST', path: '/a2a/tasks/send', body: JSON.stringify({ sender: 'peer', message: 'in progress' }) })
      const accepted = sent.json as { id: string; bernstein_task_id: string; receipt: Record<string, unknown> }
      expect((await rawRequest(app.url, { method: 'POST', path: `/tasks/${accepted.bernstein_task_id}/claim`, body: '{}' })).status).toBe(200)
      const read = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${accepted.id}` })
      const body = read.json as { status: string; receipt: Record<string, unknown> }
      expect(body.status).toBe('working')
      expect(read.headers.get('bernstein-attestation')).toBe('acceptance')
      expect(body.receipt).toEqual(accepted.receipt)
      expect(await verifyA2AReceipt(body.receipt, sent.text, { jwks })).toMatchObject({ ok: true })
      const againstLater = await verifyA2AReceipt(body.receipt, read.text, { jwks })
      expect(againstLater.ok).toBe(false)
      if (!againstLater.ok && againstLater.code === 'receipt_invalid') expect(againstLater.failures[0]).toMatch(/^content_hash mismatch/)
    })

    it('attests completion once the task finishes, identically on every read', async () => {
      const sent = await app.client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: 'finish me' } })
      const taskId = sent.data!.bernstein_task_id!
      await app.client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: taskId } }, body: { result_summary: 'all green' } })
      const first = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${sent.data!.id}` })
      const second = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${sent.data!.id}` })
      expect(first.text).toBe(second.text)
      expect(first.headers.get('bernstein-attestation')).toBe('completion')
      const body = first.json as { status: string; artifacts: { name: string; data: string }[]; receipt: Record<string, unknown> }
      expect(body.status).toBe('completed')
      expect(body.artifacts).toEqual([expect.objectContaining({ name: 'result', data: 'all green' })])
      expect(body.receipt['entry_hash']).not.toBe(sent.data!.receipt!['entry_hash'])
      expect(await verifyA2AReceipt(body.receipt, first.text, { jwks })).toMatchObject({ ok: true })
    })

    it('keeps the completion receipt covering what GET shows through later changes (close, a message, an artifact)', async () => {
      const sent = await app.client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: 'finish, then more' } })
      const a2aId = sent.data!.id
      const taskId = sent.data!.bernstein_task_id!
      await app.client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: taskId } }, body: { result_summary: 'all green' } })
      const read = async () => {
        const res = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${a2aId}` })
        const body = res.json as { status: string; artifacts: { name: string }[]; receipt: Record<string, unknown>; updated_at: number }
        expect(res.headers.get('bernstein-attestation')).toBe('completion')
        expect(await verifyA2AReceipt(body.receipt, res.text, { jwks }), res.text).toMatchObject({ ok: true })
        return body
      }
      const completed = await read()
      const changes: [string, () => Promise<unknown>][] = [
        ['close', () => rawRequest(app.url, { method: 'POST', path: `/tasks/${taskId}/close`, body: '{}' })],
        [
          'message',
          () =>
            rawRequest(app.url, {
              method: 'POST',
              path: '/a2a/message',
              body: JSON.stringify({ sender: 'peer', recipient: 'bernstein', content: 'thanks', task_id: taskId }),
            }),
        ],
        [
          'artifact',
          () => rawRequest(app.url, { method: 'POST', path: `/a2a/tasks/${a2aId}/artifacts`, body: JSON.stringify({ name: 'follow-up', data: 'late log' }) }),
        ],
      ]
      let previous = completed
      for (const [name, change] of changes) {
        expect(((await change()) as { status: number }).status, name).toBeLessThan(300)
        const now = await read()
        // Each change is attested anew: a new receipt for a response that changed.
        expect(now.receipt['entry_hash'], name).not.toBe(previous.receipt['entry_hash'])
        previous = now
      }
      expect(previous.status).toBe('completed')
      expect(previous.artifacts.map((a) => a.name)).toEqual(['result', 'follow-up'])
    })

    it('says explicitly when a response is unattested', async () => {
      const bare = await startTestApp({ engine, attest: false })
      try {
        const res = await rawRequest(bare.url, { method: 'POST', path: '/a2a/tasks/send', body: JSON.stringify({ sender: 'p', message: 'm' }) })
        expect(res.status).toBe(201)
        expect(res.headers.get('bernstein-attestation')).toBe('none')
        expect((res.json as { receipt: unknown }).receipt).toBeNull()
      } finally {
        await bare.close()
      }
    })

    it('serves a signed capability card that a peer can consume', async () => {
      const res = await rawRequest(app.url, { method: 'GET', path: '/.well-known/a2a-capability-card.json', token: null })
      expect(res.status).toBe(200)
      const signed = parseCardFile(res.text)
      expect(signed.card.issuer).toBe('test-node')
      expect(await verifyCapabilityCard(signed, { now: Date.now() / 1000 })).toMatchObject({ ok: true })
      const fingerprint = keyFingerprint(app.keys.capabilityCard.publicKey)
      await expect(
        consumePeerCard(signed, {
          trustedIssuerFingerprints: [fingerprint],
          requirements: { maxCostCapUsd: 10, minRedactionTier: 'standard', minSandboxProfile: 'container' },
        }),
      ).resolves.toEqual({ card: signed, fingerprint })
      const again = await rawRequest(app.url, {
        method: 'GET',
        path: '/.well-known/a2a-capability-card.json',
        token: null,
        headers: { 'if-none-match': res.headers.get('etag')! },
      })
      expect(again.status).toBe(304)
    })

    it('serves the JWKS with an ETag, a 304 for a current If-None-Match and the body for a stale one', async () => {
      const res = await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent.json/keys', token: null })
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('public, max-age=300')
      const etag = res.headers.get('etag')
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/)
      const current = await rawRequest(app.url, {
        method: 'GET',
        path: '/.well-known/agent.json/keys',
        token: null,
        headers: { 'if-none-match': `"stale", ${etag}` },
      })
      expect(current.status).toBe(304)
      expect(current.text).toBe('')
      // If-None-Match compares weakly: a cache that stored the tag as weak (W/"…") still gets its 304.
      const weak = await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent.json/keys', token: null, headers: { 'if-none-match': `W/${etag}` } })
      expect(weak.status).toBe(304)
      const weakStale = await rawRequest(app.url, {
        method: 'GET',
        path: '/.well-known/agent.json/keys',
        token: null,
        headers: { 'if-none-match': 'W/"stale"' },
      })
      expect(weakStale.status).toBe(200)
      const stale = await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent.json/keys', token: null, headers: { 'if-none-match': '"stale"' } })
      expect(stale.status).toBe(200)
      expect(stale.text).toBe(res.text)
      // A long or malformed If-None-Match is not an error (RFC 9110 §13.1.2): it matches nothing, or the ETag it holds.
      for (const path of ['/.well-known/agent.json/keys', '/.well-known/agent.json', '/.well-known/a2a-capability-card.json']) {
        const full = await rawRequest(app.url, { method: 'GET', path, token: null })
        const long = `${Array.from({ length: 60 }, (_, i) => `"stale-${i}"`).join(', ')}, garbage"`
        const unmatched = await rawRequest(app.url, { method: 'GET', path, token: null, headers: { 'if-none-match': long } })
        expect({ path, status: unmatched.status }).toEqual({ path, status: 200 })
        expect(unmatched.text).toBe(full.text)
        const matched = await rawRequest(app.url, { method: 'GET', path, token: null, headers: { 'if-none-match': `${long}, ${full.headers.get('etag')!}` } })
        expect({ path, status: matched.status }).toEqual({ path, status: 304 })
      }
    })

    it('serves Bernstein s signed agent card at agent.json and the A2A v1.0 card at agent-card.json', async () => {
      const a = await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent.json', token: null })
      const b = await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent-card.json', token: null })
      expect(a.status).toBe(200)
      expect(b.status).toBe(200)
      expect(a.headers.get('cache-control')).toBe('public, max-age=3600')
      expect(b.headers.get('cache-control')).toBe('public, max-age=3600')
      expect(a.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/)
      expect(b.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/)
      // Last-Modified: when the capability card was issued, the same on both cards and on the capability card.
      const capability = await rawRequest(app.url, { method: 'GET', path: '/.well-known/a2a-capability-card.json', token: null })
      const issued = new Date(Math.floor(parseCardFile(capability.text).card.created_at) * 1000).toUTCString()
      expect([a, b, capability].map((r) => r.headers.get('last-modified'))).toEqual([issued, issued, issued])
      const v1 = b.json as { supportedInterfaces: { protocolBinding: string; protocolVersion: string; url: string }[]; signatures: unknown[] }
      expect(v1.supportedInterfaces).toEqual([
        { url: 'http://bernstein.test/a2a/v1', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'http://bernstein.test/a2a/v1', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ])
      expect(v1.signatures).toHaveLength(1)
      const card = a.json as Record<string, unknown>
      expect(card['url']).toBe('http://bernstein.test')
      const report = await checkAgentCardConformance(card, jwks, {
        now: Date.now() / 1000,
        trustedFingerprints: [keyFingerprint(app.keys.agentCard.publicKey)],
      })
      expect(report.ok).toBe(true)
    })

    it('lists as public in its agent card exactly paths that answer without a token, and only endpoints it has', async () => {
      const card = (await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent.json', token: null })).json as {
        authentication: { publicPaths: string[] }
        endpoints: { method: string; path: string }[]
      }
      expect(card.authentication.publicPaths).toContain('/health/ready')
      for (const path of card.authentication.publicPaths) {
        const anonymous = await rawRequest(app.url, { method: 'GET', path, token: null })
        expect({ path, status: anonymous.status }).toEqual({ path, status: 200 })
      }
      for (const { method, path } of card.endpoints) {
        // A made-up id stands for each path parameter: the route exists if the answer is not 404 "no such path".
        const concrete = path.replace(/\{[^}]+\}/g, 'no-such-id')
        const answer = await rawRequest(app.url, { method, path: concrete, body: method === 'POST' ? '{}' : undefined })
        expect({ method, path, status: answer.status }).not.toEqual({ method, path, status: 405 })
        expect({ method, path, detail: (answer.json as { detail?: unknown } | undefined)?.detail }).not.toEqual({ method, path, detail: 'Not Found' })
      }
    })
  })
}
