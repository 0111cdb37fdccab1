/**
 * Issue 24, the receiving side after the delivery: a delegation delivered signed by the sender's card key binds its
 * task to that key. Every later request on the task by a tenant-bound caller (polls, messages, artifacts) must carry
 * a valid signature by it, fresh and never seen before; otherwise 401 with a `reason`, and nothing changes. The
 * node's own operator token (bound to no tenant) still reads unsigned; tasks delivered unsigned are as before.
 */
import { describe, expect, it } from 'vitest'
import { generateEd25519KeyPair } from '../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { testClock } from '../helpers/clock.js'
import { testEngines } from '../helpers/engines.js'
import { rawRequest } from '../helpers/test-app.js'
import { openStoreDump } from '../security/support.js'
import { OPEN, cardFingerprint, delegate, federationNodes, localTask, signedCall } from './nodes.js'
import { DELEGATOR, delegated, delivery, signedDelegationNode } from './signed-delegation.js'

const IMPOSTOR = generateEd25519KeyPair()

type Json = Record<string, unknown>

/** The node's own operator token acts in a tenant named by this header. */
const AS_PEERORG = { 'x-tenant-id': 'peerorg' }

for (const engine of testEngines()) {
  describe(`requests on a task delegated by a signed delivery (${engine})`, () => {
    const node = federationNodes(engine)

    const setUp = (options: { requireInbound?: boolean } = {}) => signedDelegationNode(node, options)

    const poll = (a2aTaskId: string): string => `/a2a/tasks/${a2aTaskId}`
    const message = (taskId: string, content = 'the tests are in tests/parser') =>
      JSON.stringify({ sender: 'peerorg', recipient: 'org-b', content, task_id: taskId })

    it('takes signed polls, messages and artifacts, and signs its answers to them with its own card key', async () => {
      const { b, token } = await setUp()
      const { a2aTaskId, taskId } = await delegated(b, token)

      const polled = await signedCall(b, { method: 'GET', path: poll(a2aTaskId), key: DELEGATOR.privateKey, token })
      expect(polled.status, polled.text).toBe(200)
      expect((polled.json as Json)['bernstein_task_id']).toBe(taskId)
      expect(polled.headers.get('signature-input')).toContain(`keyid="${cardFingerprint(b)}"`)
      // The same under the versioned prefix (the signed target URI includes it).
      const v1 = await signedCall(b, { method: 'GET', path: `/api/v1${poll(a2aTaskId)}`, key: DELEGATOR.privateKey, token })
      expect(v1.status, v1.text).toBe(200)

      const sent = await signedCall(b, { method: 'POST', path: '/a2a/message', body: message(taskId), key: DELEGATOR.privateKey, token })
      expect(sent.status, sent.text).toBe(201)
      expect(sent.json).toMatchObject({ task_id: taskId, direction: 'inbound', content: 'the tests are in tests/parser' })
      expect(sent.headers.get('signature')).not.toBeNull()
      const task = await rawRequest(b.url, { method: 'GET', path: `/tasks/${taskId}`, headers: AS_PEERORG })
      expect(JSON.stringify(task.json)).toContain('[A2A:peerorg->org-b] the tests are in tests/parser')

      const artifact = await signedCall(b, {
        method: 'POST',
        path: `/a2a/tasks/${a2aTaskId}/artifacts`,
        body: JSON.stringify({ name: 'notes', data: 'from the delegator' }),
        key: DELEGATOR.privateKey,
        token,
      })
      expect(artifact.status, artifact.text).toBe(201)
    })

    it('refuses unsigned, replayed, impostor-signed and tampered requests with 401 and a reason, changing nothing', async () => {
      const { b, token } = await setUp()
      const { a2aTaskId, taskId } = await delegated(b, token)
      const dump = await openStoreDump(b)
      try {
        // The first signed message goes through; everything after it is refused and leaves the store as it was then.
        const body = message(taskId)
        const nonce = 'captured-nonce-0001'
        const first = await signedCall(b, { method: 'POST', path: '/a2a/message', body, key: DELEGATOR.privateKey, token, nonce })
        expect(first.status, first.text).toBe(201)
        const before = await dump.dump()

        const refusals: [string, Promise<{ status: number; json: unknown; headers: Headers }>, string][] = [
          ['unsigned poll', rawRequest(b.url, { method: 'GET', path: poll(a2aTaskId), token }), 'peer_signature_required'],
          [
            'unsigned message',
            rawRequest(b.url, { method: 'POST', path: '/a2a/message', body: message(taskId, 'unsigned'), token }),
            'peer_signature_required',
          ],
          [
            'unsigned artifact',
            rawRequest(b.url, { method: 'POST', path: `/a2a/tasks/${a2aTaskId}/artifacts`, body: JSON.stringify({ name: 'x' }), token }),
            'peer_signature_required',
          ],
          // The captured message sent again, same nonce: a replay, refused though the signature is genuine.
          [
            'replayed message',
            signedCall(b, { method: 'POST', path: '/a2a/message', body, key: DELEGATOR.privateKey, token, nonce }),
            'peer_signature_replayed',
          ],
          // Someone holding the delegator's token, signing with a key of its own.
          ['impostor poll', signedCall(b, { method: 'GET', path: poll(a2aTaskId), key: IMPOSTOR.privateKey, token }), 'peer_signature_invalid'],
          [
            'impostor message',
            signedCall(b, { method: 'POST', path: '/a2a/message', body: message(taskId, 'forged'), key: IMPOSTOR.privateKey, token }),
            'peer_signature_invalid',
          ],
          // Tampering: each covered component changed after signing.
          [
            'method changed',
            signedCall(b, { method: 'GET', path: poll(a2aTaskId), key: DELEGATOR.privateKey, token, signed: { method: 'HEAD' } }),
            'peer_signature_invalid',
          ],
          [
            'URI changed',
            signedCall(b, { method: 'GET', path: poll(a2aTaskId), key: DELEGATOR.privateKey, token, signed: { path: `/api/v1${poll(a2aTaskId)}` } }),
            'peer_signature_invalid',
          ],
          [
            'one body byte changed',
            signedCall(b, {
              method: 'POST',
              path: '/a2a/message',
              body: message(taskId, 'the tests are in tests/parsex'),
              key: DELEGATOR.privateKey,
              token,
              signed: { body: message(taskId, 'the tests are in tests/parser') },
            }),
            'peer_signature_invalid',
          ],
          [
            'created outside the window',
            signedCall(b, { method: 'GET', path: poll(a2aTaskId), key: DELEGATOR.privateKey, token, clock: testClock({ start: Date.now() / 1000 - 301 }) }),
            'peer_signature_stale',
          ],
        ]
        for (const [what, request, reason] of refusals) {
          const refused = await request
          expect(refused.status, what).toBe(401)
          expect(refused.json, what).toMatchObject({ reason })
          expect(typeof (refused.json as Json)['detail'], what).toBe('string')
          expect(refused.headers.get('www-authenticate'), what).toContain('Bearer')
        }
        const unsigned = (await rawRequest(b.url, { method: 'GET', path: poll(a2aTaskId), token })).json as Json
        expect(unsigned['detail']).toContain(`signed by that sender's card key ${keyFingerprint(DELEGATOR.publicKey)}`)
        expect(await dump.dump()).toEqual(before)
      } finally {
        await dump.close()
      }
    })

    it('between two real nodes: A delegates with a tenant-bound token of B, its signed polls and messages pass, and the follow settles', async () => {
      let token = ''
      const a = await node('org-a', {}, { peerToken: () => token })
      const b = await node('org-b', {
        inboundTrust: { trustedPeerFingerprints: [cardFingerprint(a)], requirements: OPEN, strictLineage: false },
      })
      token = (await b.tokens.create({ role: 'operator', tenant: 'org-a', expiresInSeconds: null })).token
      const taskId = await localTask(a)
      const d = await delegate(a, b, taskId, { peerToken: token })
      expect(d).toMatchObject({ status: 'accepted', trustLevel: 'proven' })
      const atB = { 'x-tenant-id': 'org-a' }

      // The token alone, unsigned, is refused on the task it delegated.
      const unsigned = await rawRequest(b.url, { method: 'GET', path: poll(d.remoteA2ATaskId!), token })
      expect(unsigned.status).toBe(401)
      expect(unsigned.json).toMatchObject({ reason: 'peer_signature_required' })

      // A's message into the task, signed by A's card key, is taken.
      const sent = await a.app.services.delegation.sendMessage({
        tenantId: 'default',
        peerUrl: b.url,
        peerToken: token,
        sender: 'org-a',
        recipient: 'org-b',
        content: 'the fixtures are in tests/data',
        taskId: d.remoteTaskId!,
      })
      expect(sent).toMatchObject({ direction: 'outbound', delivered: true })

      // B does the work; A's follower polls (signed) and settles its own task with B's result.
      const claimed = await rawRequest(b.url, { method: 'POST', path: `/tasks/${d.remoteTaskId!}/claim`, headers: atB })
      expect(claimed.status, claimed.text).toBe(200)
      const completed = await rawRequest(b.url, {
        method: 'POST',
        path: `/tasks/${d.remoteTaskId!}/complete`,
        body: JSON.stringify({ result_summary: 'parser ported' }),
        headers: atB,
      })
      expect(completed.status, completed.text).toBe(200)
      const followed = await a.app.services.delegation.follow((await a.store.repos.federation.get(d.id))!)
      expect(followed.lastError).toBeNull()
      expect(followed.status).toBe('completed')
      const local = await rawRequest(a.url, { method: 'GET', path: `/tasks/${taskId}` })
      expect(local.json).toMatchObject({ status: 'done', result_summary: 'parser ported' })
      const notes = JSON.stringify((await rawRequest(b.url, { method: 'GET', path: `/tasks/${d.remoteTaskId!}`, headers: atB })).json)
      expect(notes).toContain('the fixtures are in tests/data')
    })

    it("leaves the node's own operator token, tasks delivered unsigned and other tasks as they were", async () => {
      const { b, token } = await setUp({ requireInbound: false })
      const signed = await delegated(b, token)
      // The node-wide operator token administers the node: it reads the task unsigned.
      expect((await rawRequest(b.url, { method: 'GET', path: poll(signed.a2aTaskId), headers: AS_PEERORG })).status).toBe(200)
      // …but a signature it does carry is checked like any other.
      const wrongKey = await signedCall(b, { method: 'GET', path: poll(signed.a2aTaskId), key: IMPOSTOR.privateKey, headers: AS_PEERORG })
      expect(wrongKey.status).toBe(401)

      // Delivered unsigned (the operator's opt-out): polled and messaged unsigned, as before.
      const plain = await rawRequest(b.url, { method: 'POST', path: '/a2a/v0/tasks', body: await delivery('remote-2'), token })
      expect(plain.status, plain.text).toBe(202)
      const { a2a_task_id: a2aTaskId, task_id: taskId } = plain.json as Record<string, string>
      expect((await rawRequest(b.url, { method: 'GET', path: poll(a2aTaskId!), token })).status).toBe(200)
      expect((await rawRequest(b.url, { method: 'POST', path: '/a2a/message', body: message(taskId!), token })).status).toBe(201)

      // A task sent through the A2A API, not delegated: untouched.
      const own = await rawRequest(b.url, { method: 'POST', path: '/a2a/tasks/send', body: JSON.stringify({ sender: 'x', message: 'local' }), token })
      expect((await rawRequest(b.url, { method: 'GET', path: poll((own.json as Json)['id'] as string), token })).status).toBe(200)
    })
  })
}
