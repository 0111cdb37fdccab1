import { describe, expect, it } from 'vitest'
import { parsePythonJson, pythonCanonical } from '../../src/canonical/python-json.js'
import { crossOrgBoundaryMarkerBytes } from '../../src/lineage/boundary.js'
import { LINEAGE_ENVELOPE_FIELD, lineageEnvelopePayload, lineageEnvelopePayloadBytes } from '../../src/lineage/envelope.js'
import { sha256Prefixed } from '../../src/crypto/sha256-prefixed.js'
import { parseTrackerEntry, verifyTrackerAuditLines } from '../../src/lineage/tracker-audit.js'
import { testEngines } from '../helpers/engines.js'
import { OPERATOR_TOKEN, TEST_AUDIT_KEY, type TestApp, rawRequest } from '../helpers/test-app.js'
import { OPEN, cardFingerprint, chainLines, delegate, federationNodes, localTask, signedDelivery } from './nodes.js'

for (const engine of testEngines()) {
  describe(`federation between two nodes (${engine})`, () => {
    const node = federationNodes(engine)

    async function taskCount(app: TestApp): Promise<number> {
      const page = await app.client.GET('/tasks', { params: { query: { limit: 500 } } })
      return page.data!.tasks.length
    }

    it('A delegates to B, B completes, A settles after verifying B’s completion receipt; both chains verify', async () => {
      const a = await node('org-a')
      const b = await node('org-b', { inboundTrust: { trustedPeerFingerprints: [], requirements: OPEN, strictLineage: true } })
      const taskId = await localTask(a)
      const envelopeAtDelegation = await a.app.services.lineage.envelope(taskId)
      const d = await delegate(a, b, taskId, { requirements: { maxCostCapUsd: 10, minRedactionTier: 'standard', minSandboxProfile: 'container' } })
      expect(d).toMatchObject({ status: 'accepted', peerIssuer: 'org-b', peerFingerprint: cardFingerprint(b), attempts: 1, lastError: null })
      expect(d.remoteA2ATaskId).toMatch(/^[0-9a-f]{12}$/)
      // The peer's linked task, the one a message into it names, is recorded (not the id we offered).
      expect(d.remoteTaskId).toMatch(/^[0-9a-f]{12}$/)
      expect(d.remoteTaskId).not.toBe(taskId)
      expect((await a.client.GET('/tasks/{task_id}', { params: { path: { task_id: taskId } } })).data!.status).toBe('claimed')

      // A worker on B claims and completes the delegated task.
      const claimed = await b.client.GET('/tasks/next/{role}', { params: { path: { role: 'backend' } } })
      expect(claimed.data!.description).toBe('port the parser, with tests')
      expect(claimed.data!.id).toBe(d.remoteTaskId)
      await b.client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: claimed.data!.id } }, body: { result_summary: 'parser ported, 42 tests' } })

      const [settled] = await a.app.services.delegation.syncDue({ all: true })
      expect(settled).toMatchObject({ status: 'completed', result: 'parser ported, 42 tests', lastError: null })
      const local = await a.client.GET('/tasks/{task_id}', { params: { path: { task_id: taskId } } })
      expect(local.data).toMatchObject({ status: 'done', result_summary: 'parser ported, 42 tests' })

      // B's chain holds the boundary entry bound to the digest of A's envelope for that task.
      const boundaryLine = (await chainLines(b))
        .map((l) => parseTrackerEntry(parsePythonJson(l)))
        .find((e) => e.ok && e.value.tracker_name === 'a2a-cross-org-boundary')
      expect(boundaryLine?.ok).toBe(true)
      if (boundaryLine?.ok) {
        expect(boundaryLine.value.ticket_id).toBe(claimed.data!.id)
        expect(boundaryLine.value.input_prompt_hash).toBe(sha256Prefixed(crossOrgBoundaryMarkerBytes(envelopeAtDelegation)))
        expect(boundaryLine.value.output_blob_hash).toBe(sha256Prefixed(lineageEnvelopePayloadBytes(envelopeAtDelegation)))
      }
      expect(await verifyTrackerAuditLines(await chainLines(a), TEST_AUDIT_KEY)).toMatchObject({ ok: true })
      expect(await verifyTrackerAuditLines(await chainLines(b), TEST_AUDIT_KEY)).toMatchObject({ ok: true })

      // Re-running the delegation is idempotent: same ledger row, no second task on B.
      const again = await delegate(a, b, taskId)
      expect(again.id).toBe(d.id)
      expect(await taskCount(b)).toBe(1)
    })

    it('B accepts only pinned senders whose envelope issuer is their card issuer', async () => {
      const a = await node('org-a')
      const b = await node('org-b', {
        inboundTrust: {
          trustedPeerFingerprints: [cardFingerprint(a)],
          requirements: { maxCostCapUsd: 10, minRedactionTier: 'basic', minSandboxProfile: 'process' },
          strictLineage: false,
        },
      })
      const ok = await delegate(a, b, await localTask(a))
      expect(ok.status).toBe('accepted')

      const stranger = await node('org-x')
      const refused = await delegate(stranger, b, await localTask(stranger))
      expect(refused.status).toBe('rejected')
      expect(refused.lastError).toMatch(
        /^peer answered 409: sender capability card rejected \(untrusted_issuer\): card key fingerprint sha256:[0-9a-f]{64} is not in the trusted-issuer set$/,
      )
      expect(await taskCount(b)).toBe(1)

      // A sender without its card, and unsigned, when B pins its peers: 401 before anything is read, nothing stored.
      const bare = await rawRequest(b.url, {
        method: 'POST',
        path: '/a2a/v0/tasks',
        body: JSON.stringify({ sender: { name: 'org-a', description: '' }, task: { id: 'x1', message: 'hi' } }),
      })
      expect(bare.status).toBe(401)
      expect(bare.json).toMatchObject({ reason: 'peer_signature_required' })
      expect(await taskCount(b)).toBe(1)
    })

    it('B refuses a pinned sender whose envelope names another issuer than its card with 409, storing nothing', async () => {
      const a = await node('org-a')
      const c = await node('org-c')
      // B pins both A and C: being pinned must not let A speak for C.
      const b = await node('org-b', {
        inboundTrust: { trustedPeerFingerprints: [cardFingerprint(a), cardFingerprint(c)], requirements: OPEN, strictLineage: true },
      })
      const taskId = await localTask(a)
      // A's real signed card as it serves it, and A's real lineage envelope for the task.
      const card = parsePythonJson(await (await fetch(`${a.url}/.well-known/a2a-capability-card.json`)).text())
      const payload = lineageEnvelopePayload(await a.app.services.lineage.envelope(taskId))
      expect(payload['source_issuer']).toBe('org-a')
      const request = (sourceIssuer: string): string =>
        pythonCanonical({
          sender: { name: 'org-a', description: '', capability_card: card },
          task: { id: taskId, message: 'port the parser, with tests', role: 'backend' },
          [LINEAGE_ENVELOPE_FIELD]: { ...payload, source_issuer: sourceIssuer },
        })
      const tasksBefore = await taskCount(b)
      const chainBefore = await chainLines(b)

      // Signed by A itself: A proves who it is, and still may not speak for C.
      const aKey = a.keys.capabilityCard.privateKey
      const forged = await signedDelivery(b, request('org-c'), aKey)
      expect(forged.status).toBe(409)
      expect(forged.json).toEqual({
        detail: "sender capability card rejected (issuer_mismatch): card issuer 'org-a' does not match the message origin 'org-c'",
      })
      expect(await taskCount(b)).toBe(tasksBefore)
      expect(await chainLines(b)).toEqual(chainBefore)
      expect(
        await b.store.repos.a2a.getInbound({ tenantId: 'default', peerName: 'org-a', senderKey: cardFingerprint(a), remoteTaskId: taskId }),
      ).toBeUndefined()

      // The same request naming A's own issuer is accepted: the issuer alone made the difference.
      const genuine = await signedDelivery(b, request('org-a'), aKey)
      expect(genuine.status).toBe(202)
      expect(await taskCount(b)).toBe(tasksBefore + 1)
      expect(await b.store.repos.a2a.getInbound({ tenantId: 'default', peerName: 'org-a', senderKey: cardFingerprint(a), remoteTaskId: taskId })).toMatchObject(
        { taskId: (genuine.json as { task_id: string }).task_id },
      )
      const added = (await chainLines(b)).slice(chainBefore.length).map((l) => parseTrackerEntry(parsePythonJson(l)))
      expect(added.filter((e) => e.ok && e.value.tracker_name === 'a2a-cross-org-boundary')).toHaveLength(1)
    })

    it('refuses untrusted, weaker, expired and tampered cards before any delegation I/O', async () => {
      const a = await node('org-a')
      const b = await node('org-b')
      const taskId = await localTask(a)

      const untrusted = await delegate(a, b, taskId, { trustedFingerprints: ['sha256:' + '0'.repeat(64)] })
      expect(untrusted).toMatchObject({ status: 'rejected', attempts: 0 })
      expect(untrusted.lastError).toBe(
        `capability card rejected (untrusted_issuer): card key fingerprint ${cardFingerprint(b)} is not in the trusted-issuer set`,
      )

      const weaker = await delegate(a, b, taskId, { requirements: { maxCostCapUsd: 5, minRedactionTier: 'strict', minSandboxProfile: 'microvm' } })
      expect(weaker.status).toBe('rejected')
      expect(weaker.lastError).toBe(
        "capability card rejected (policy): cost cap: peer advertises 10.0 USD, operator ceiling is 5.0 USD; redaction tier: peer tier 'standard' is weaker than required 'strict'; sandbox profile: peer profile 'container' is weaker than required 'microvm'",
      )

      const past = Date.now() / 1000 - 3 * 86_400
      const stale = await node('org-stale', { clock: { now: () => past, nowNs: () => BigInt(Math.round(past * 1e9)) } })
      const expired = await delegate(a, stale, taskId)
      expect(expired.status).toBe('rejected')
      expect(expired.lastError).toMatch(/^capability card rejected \(signature\)/)

      const tamperingFetch: typeof fetch = async (input, init) => {
        const res = await fetch(input, init)
        if (!String(input).endsWith('/.well-known/a2a-capability-card.json')) return res
        const text = (await res.text()).replace('"cost_cap_usd": 10.0', '"cost_cap_usd": 1.0')
        return new Response(text, { status: res.status, headers: res.headers })
      }
      const a2 = await node('org-a2', {}, { fetch: tamperingFetch })
      const tampered = await delegate(a2, b, await localTask(a2))
      expect(tampered.status).toBe('rejected')
      expect(tampered.lastError).toMatch(/^capability card rejected \(signature\)/)
      expect(await taskCount(b)).toBe(0)
    })

    it('rejects a tampered lineage envelope with 409 and stores nothing', async () => {
      const a = await node('org-a')
      const b = await node('org-b')
      const taskId = await localTask(a)
      const envelope = await a.app.services.lineage.envelope(taskId)
      const payload = lineageEnvelopePayload(envelope)
      const text = pythonCanonical({ sender: { name: 'org-a', description: '' }, task: { id: taskId, message: 'm' }, 'bernstein.lineage_v2': payload }).replace(
        '"ticket_id":"' + taskId + '"',
        '"ticket_id":"forged"',
      )
      const res = await rawRequest(b.url, { method: 'POST', path: '/a2a/v0/tasks', body: text })
      expect(res.status).toBe(409)
      expect((res.json as { detail: string }).detail).toMatch(
        /^lineage envelope rejected: lineage envelope chain_digest mismatch \(carried sha256:[0-9a-f]{64}, recomputed sha256:[0-9a-f]{64}\)$/,
      )
      expect(await taskCount(b)).toBe(0)
      expect(await chainLines(b)).toEqual([])
    })

    it('retries a peer answering 503 then accepts once; fails after retries when the peer is down', async () => {
      let v0Calls = 0
      const flakyFetch: typeof fetch = async (input, init) => {
        if (String(input).endsWith('/a2a/v0/tasks') && ++v0Calls === 1)
          return new Response('{"detail":"busy"}', { status: 503, headers: { 'retry-after': '0' } })
        return fetch(input, init)
      }
      const a = await node('org-a', {}, { fetch: flakyFetch })
      const b = await node('org-b')
      const d = await delegate(a, b, await localTask(a))
      expect(d).toMatchObject({ status: 'accepted', attempts: 2 })
      expect(await taskCount(b)).toBe(1)

      const c = await node('org-c')
      const fp = cardFingerprint(c)
      const url = c.url
      await c.close()
      const down = await a.app.services.delegation.delegate({
        tenantId: 'default',
        peerUrl: url,
        peerToken: OPERATOR_TOKEN,
        taskId: await localTask(a),
        trustedFingerprints: [fp],
        requirements: OPEN,
      })
      expect(down.status).toBe('failed')
      expect(down.lastError).toMatch(/^capability card unreachable: /)
    })

    it('records an outbound message once the peer accepted it, and nothing when it refuses', async () => {
      const a = await node('org-a')
      const b = await node('org-b')
      const remote = await localTask(b, 'remote work')
      const sent = await a.app.services.delegation.sendMessage({
        tenantId: 'default',
        peerUrl: b.url + '/',
        peerToken: OPERATOR_TOKEN,
        sender: 'alice',
        recipient: 'bob',
        content: 'use the v2 API',
        taskId: remote,
      })
      expect(sent).toMatchObject({ direction: 'outbound', delivered: true, externalEndpoint: b.url, taskId: remote })
      expect(await a.store.repos.a2a.messages('default')).toEqual([sent])
      const atB = await b.client.GET('/tasks/{task_id}', { params: { path: { task_id: remote } } })
      expect(atB.data!.progress_log.map((p) => p.message)).toEqual(['[A2A:alice->bob] use the v2 API'])

      await expect(
        a.app.services.delegation.sendMessage({
          tenantId: 'default',
          peerUrl: b.url,
          peerToken: OPERATOR_TOKEN,
          sender: 'alice',
          recipient: 'bob',
          content: 'x',
          taskId: 'ffffffffffff',
        }),
      ).rejects.toMatchObject({ code: 'rejected', message: "peer answered 404: Task 'ffffffffffff' not found" })
      expect(await a.store.repos.a2a.messages('default')).toHaveLength(1)
    })

    it('leases due delegations, so followers on several replicas never poll the same one at once', async () => {
      const a = await node('org-a')
      const b = await node('org-b')
      const d = await delegate(a, b, await localTask(a))
      expect(d.status).toBe('accepted')
      const now = Date.now() / 1000
      const [first, second] = await Promise.all([
        a.store.transaction((repos) => repos.federation.claimDue(now + 1, now + 60)),
        a.store.transaction((repos) => repos.federation.claimDue(now + 1, now + 60)),
      ])
      expect([...first!, ...second!].map((x) => x.id)).toEqual([d.id])
      expect(await a.store.transaction((repos) => repos.federation.claimDue(now + 1, now + 60))).toEqual([])
      expect((await a.store.transaction((repos) => repos.federation.claimDue(now + 61, now + 120))).map((x) => x.id)).toEqual([d.id])
    })

    it('a duplicate delivery creates one task on the peer', async () => {
      const a = await node('org-a')
      const b = await node('org-b')
      const taskId = await localTask(a)
      const body = JSON.stringify({ sender: { name: 'org-a', description: '' }, task: { id: taskId, message: 'once' } })
      const [r1, r2] = await Promise.all([
        rawRequest(b.url, { method: 'POST', path: '/a2a/v0/tasks', body }),
        rawRequest(b.url, { method: 'POST', path: '/a2a/v0/tasks', body }),
      ])
      expect(r1.status).toBe(202)
      expect(r2.status).toBe(202)
      expect(r1.json).toEqual(r2.json)
      expect(await taskCount(b)).toBe(1)
    })
  })
}
