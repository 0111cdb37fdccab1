/**
 * `POST /a2a/v0/tasks` on a node that pins its peers: a delivery is recognised as a repeat only after it has passed
 * every check a new delivery must pass, so a request the node would refuse as new is refused as a repeat too, with
 * the same answer, and learns nothing about the delegation it names.
 */
import { describe, expect, it } from 'vitest'
import { issueCapabilityCard } from '../../src/cards/issue-capability-card.js'
import type { SignedCapabilityCard } from '../../src/cards/index.js'
import { generateEd25519KeyPair } from '../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { testEngines } from '../helpers/engines.js'
import { type TestApp, rawRequest } from '../helpers/test-app.js'
import { openStoreDump } from '../security/support.js'
import { OPEN, federationNodes, signedCall, signedDelivery } from './nodes.js'

const PEER = generateEd25519KeyPair()
const STRANGER = generateEd25519KeyPair()
/** A second pinned peer, which may call itself anything, `peerorg` included. */
const OTHER = generateEd25519KeyPair()
const NOW = Date.now() / 1000
const POLICIES = { cost_cap_usd: 10, redaction_tier: 'standard', sandbox_profile: 'container' } as const

/** A capability card for `peerorg`, signed with `key`, issued at `issuedAt` and valid for an hour. */
function peerCard(key = PEER, issuedAt = NOW - 120): Promise<SignedCapabilityCard> {
  return issueCapabilityCard({
    issuer: 'peerorg',
    name: 'Peer Org',
    tools: ['task_orchestration'],
    policies: POLICIES,
    ttlSeconds: 3600,
    privateKey: key.privateKey,
    now: issuedAt,
  })
}

type Json = Record<string, unknown>

const sender = (extra: Json = {}): Json => ({
  name: 'peerorg',
  description: '',
  capabilities: ['task_orchestration'],
  endpoint: 'http://peerorg.test',
  ...extra,
})

/** A delivery as a peer sends it: signed by the key of the card it carries (unsigned when it carries none). */
function v0(app: TestApp, body: Json, token?: string): ReturnType<typeof rawRequest> {
  const text = JSON.stringify(body)
  const card = (body['sender'] as Json | undefined)?.['capability_card'] as Partial<SignedCapabilityCard> | null | undefined
  const pem = typeof card === 'object' && card !== null ? card.card?.public_key_pem : undefined
  const key = [PEER, STRANGER, OTHER].find((k) => pem !== undefined && keyFingerprint(k.publicKey) === keyFingerprint(pem))
  if (key === undefined) return rawRequest(app.url, { method: 'POST', path: '/a2a/v0/tasks', body: text, ...(token !== undefined && { token }) })
  return signedDelivery(app, text, key.privateKey, token)
}

/** What a 202 answer says about the delegation, and whether it was new. */
async function delivered(res: ReturnType<typeof rawRequest>): Promise<{ status: number; delivery: string | null; json: Json }> {
  const r = await res
  return { status: r.status, delivery: r.headers.get('bernstein-delivery'), json: r.json as Json }
}

for (const engine of testEngines()) {
  describe(`inbound delegations to a node pinning its peers (${engine})`, () => {
    const node = federationNodes(engine)
    const pinning = (): Promise<TestApp> =>
      node('org-b', {
        inboundTrust: { trustedPeerFingerprints: [keyFingerprint(PEER.publicKey)], requirements: OPEN, strictLineage: false },
        // Signed deliveries are still verified; unsigned ones reach the card checks this suite is about.
        peerSignatures: { requireInbound: false },
      })

    it('refuses a sender endpoint that is not an http(s) URL, or carries credentials, with a 400 that stores nothing', async () => {
      const b = await pinning()
      const card = await peerCard()
      const dump = await openStoreDump(b)
      try {
        const before = await dump.dump()
        for (const endpoint of ['file:///etc/passwd', 'javascript:alert(1)', 'peerorg.test', 'http://user:secret@peerorg.test']) {
          const r = await v0(b, { sender: sender({ capability_card: card, endpoint }), task: { id: `ep-${endpoint.length}`, message: 'm' } })
          expect(r.status, endpoint).toBe(400)
          expect(r.json, endpoint).toEqual({ detail: "Invalid sender card: AgentCard 'endpoint' must be an absolute http(s) URL without credentials" })
          expect(r.text, 'the secret is not echoed').not.toContain('secret')
        }
        expect(await dump.dump()).toEqual(before)
        // An empty endpoint stays what Bernstein sends by default.
        expect((await v0(b, { sender: sender({ capability_card: card, endpoint: '' }), task: { id: 'ep-empty', message: 'm' } })).status).toBe(202)
      } finally {
        await dump.close()
      }
    })

    it('refuses a repeat of an accepted id exactly as it refuses a new delivery, before recognising it, and stores nothing', async () => {
      const b = await pinning()
      const card = await peerCard()
      const task = { id: 'dup-1', message: 'port the parser, with tests', role: 'backend' }
      const first = await v0(b, { sender: sender({ capability_card: card }), task })
      expect(first.status).toBe(202)
      expect(first.headers.get('bernstein-delivery')).toBe('new')
      const accepted = first.json as Json

      const dump = await openStoreDump(b)
      try {
        const before = await dump.dump()
        expect(before['federated_inbound']).toHaveLength(1)

        // The reported repro, byte for byte: no card at all and another message. It used to be answered 202
        // `duplicate` with the accepted delegation's task_id and a2a_task_id.
        const repro = await rawRequest(b.url, {
          method: 'POST',
          path: '/a2a/v0/tasks',
          body: '{"sender":{"name":"peerorg","description":""},"task":{"id":"dup-1","message":"something else entirely"}}',
        })
        expect(repro.status).toBe(409)
        expect(repro.json).toEqual({ detail: 'sender capability card required: this node only accepts pinned peers' })
        expect(repro.headers.get('bernstein-delivery')).toBeNull()
        expect(repro.text).not.toContain(String(accepted['task_id']))
        expect(repro.text).not.toContain(String(accepted['a2a_task_id']))
        expect(await dump.dump()).toEqual(before)

        const tampered = { ...card, card: { ...card.card, description: 'not what was signed' } }
        const refusals: readonly (readonly [string, Json, string | RegExp])[] = [
          ['no card, the accepted task unchanged', { sender: sender(), task }, 'sender capability card required: this node only accepts pinned peers'],
          ['a null card', { sender: sender({ capability_card: null }), task }, 'sender capability card required: this node only accepts pinned peers'],
          [
            'a tampered card',
            { sender: sender({ capability_card: tampered }), task },
            'sender capability card rejected (signature): card signature is invalid or the card has expired',
          ],
          [
            'an expired card under the pinned key',
            { sender: sender({ capability_card: await peerCard(PEER, NOW - 7200) }), task },
            'sender capability card rejected (signature): card signature is invalid or the card has expired',
          ],
          [
            'a valid card under a key that is not pinned',
            { sender: sender({ capability_card: await peerCard(STRANGER) }), task },
            `sender capability card rejected (untrusted_issuer): card key fingerprint ${keyFingerprint(STRANGER.publicKey)} is not in the trusted-issuer set`,
          ],
          ['a card that is not a card', { sender: sender({ capability_card: 'trust me' }), task }, /^sender capability card unusable: /],
          [
            'the pinned card with a lineage envelope that does not verify',
            { sender: sender({ capability_card: card }), task, 'bernstein.lineage_v2': { source_issuer: 'peerorg' } },
            /^lineage envelope rejected: /,
          ],
        ]
        for (const [label, body, detail] of refusals) {
          const repeat = await v0(b, body)
          expect(repeat.status, label).toBe(409)
          expect((repeat.json as { detail: string }).detail, label).toMatch(detail)
          expect(repeat.headers.get('bernstein-delivery'), label).toBeNull()
          expect(await dump.dump(), label).toEqual(before)
          // The same body under an id never seen gets the very same answer: the accepted id makes no difference.
          const fresh = await v0(b, { ...body, task: { ...task, id: `fresh-${label}` } })
          expect({ status: fresh.status, json: fresh.json }, label).toEqual({ status: repeat.status, json: repeat.json })
          expect(await dump.dump(), label).toEqual(before)
        }

        // What a legitimate redelivery looks like, each still answered with the first acceptance and writing nothing:
        // the same body retried after a timeout; the task with a card the peer re-issued under the same key since
        // (new dates and signature) and a refreshed sender card; the default role spelled out or left out.
        const redeliveries: readonly (readonly [string, Json])[] = [
          ['the same body again', { sender: sender({ capability_card: card }), task }],
          [
            'a re-issued card, same key',
            { sender: sender({ capability_card: await peerCard(PEER, NOW), description: 'Peer Org, v2', endpoint: 'http://peerorg.test/' }), task },
          ],
          ['the default role left out', { sender: sender({ capability_card: card }), task: { id: task.id, message: task.message } }],
        ]
        for (const [label, body] of redeliveries) {
          const again = await v0(b, body)
          expect(again.status, label).toBe(202)
          expect(again.headers.get('bernstein-delivery'), label).toBe('duplicate')
          expect(again.json, label).toEqual(accepted)
        }
        expect(await dump.dump()).toEqual(before)
      } finally {
        await dump.close()
      }
    })

    it('refuses the accepted id with another message or role from the trusted peer itself (409), storing nothing', async () => {
      const b = await pinning()
      const card = await peerCard()
      const task = { id: 'dup-2', message: 'port the parser, with tests', role: 'backend' }
      const first = await v0(b, { sender: sender({ capability_card: card }), task })
      expect(first.status).toBe(202)
      const dump = await openStoreDump(b)
      try {
        const before = await dump.dump()
        for (const changed of [{ message: 'something else entirely' }, { message: `${task.message} ` }, { role: 'qa' }]) {
          const res = await v0(b, { sender: sender({ capability_card: card }), task: { ...task, ...changed } })
          expect(res.status, JSON.stringify(changed)).toBe(409)
          expect(res.json).toEqual({
            detail:
              "'task.id' was already accepted with a different task: a redelivery must repeat the message and role unchanged, new work needs a new 'task.id'",
          })
          expect(res.headers.get('bernstein-delivery')).toBeNull()
          expect(await dump.dump()).toEqual(before)
        }
        // The delegation itself is untouched: its own redelivery is still a duplicate of the first acceptance.
        const again = await v0(b, { sender: sender({ capability_card: card }), task })
        expect({ status: again.status, delivery: again.headers.get('bernstein-delivery'), json: again.json }).toEqual({
          status: 202,
          delivery: 'duplicate',
          json: first.json,
        })
      } finally {
        await dump.close()
      }
    })

    it("keys deliveries by the verified card key: a pinned peer using another's name and ids neither learns of nor blocks its delegations", async () => {
      const b = await node('org-b', {
        inboundTrust: { trustedPeerFingerprints: [keyFingerprint(PEER.publicKey), keyFingerprint(OTHER.publicKey)], requirements: OPEN, strictLineage: false },
      })
      const peer = sender({ capability_card: await peerCard(PEER) })
      // OTHER's card is valid and pinned, and names the same issuer: only the key tells them apart.
      const other = sender({ capability_card: await peerCard(OTHER) })

      const mine = await delivered(v0(b, { sender: peer, task: { id: 'dup-3', message: "the peer's task" } }))
      expect(mine).toMatchObject({ status: 202, delivery: 'new' })
      // Under the accepted id and name, with another task: neither the accepted ids nor a conflict (which would say
      // the id is taken), but a delegation of its own.
      const theirs = await delivered(v0(b, { sender: other, task: { id: 'dup-3', message: 'another task' } }))
      expect(theirs).toMatchObject({ status: 202, delivery: 'new', json: { remote_task_id: 'dup-3', peer_name: 'peerorg' } })
      for (const field of ['id', 'task_id', 'a2a_task_id']) expect(theirs.json[field], field).not.toBe(mine.json[field])
      // And with the very task the peer sent: still its own, not the peer's.
      const copied = await delivered(v0(b, { sender: other, task: { id: 'dup-4', message: "the peer's task" } }))
      const first = await delivered(v0(b, { sender: peer, task: { id: 'dup-4', message: "the peer's task" } }))
      expect([copied.delivery, first.delivery]).toEqual(['new', 'new'])
      expect(first.json['task_id']).not.toBe(copied.json['task_id'])

      // Each one's redelivery finds its own delegation.
      expect(await delivered(v0(b, { sender: peer, task: { id: 'dup-3', message: "the peer's task" } }))).toEqual({ ...mine, delivery: 'duplicate' })
      expect(await delivered(v0(b, { sender: other, task: { id: 'dup-3', message: 'another task' } }))).toEqual({ ...theirs, delivery: 'duplicate' })
      expect(await delivered(v0(b, { sender: peer, task: { id: 'dup-4', message: "the peer's task" } }))).toEqual({ ...first, delivery: 'duplicate' })
      const tasks = (await b.client.GET('/tasks', { params: { query: { limit: 500 } } })).data!.tasks
      expect(tasks.map((t) => t.id).sort()).toEqual([mine, theirs, copied, first].map((d) => String(d.json['task_id'])).sort())
    })

    it('keys deliveries by tenant: the same peer, card and id in another tenant is another delegation, invisible to the first', async () => {
      const b = await pinning()
      const acme = (await b.tokens.create({ role: 'operator', tenant: 'acme', expiresInSeconds: null })).token
      const globex = (await b.tokens.create({ role: 'operator', tenant: 'globex', expiresInSeconds: null })).token
      const peer = sender({ capability_card: await peerCard(PEER) })

      const atAcme = await delivered(v0(b, { sender: peer, task: { id: 'dup-5', message: 'for acme' } }, acme))
      const atGlobex = await delivered(v0(b, { sender: peer, task: { id: 'dup-5', message: 'for globex' } }, globex))
      expect([atAcme.delivery, atGlobex.delivery]).toEqual(['new', 'new'])
      for (const field of ['id', 'task_id', 'a2a_task_id']) expect(atGlobex.json[field], field).not.toBe(atAcme.json[field])
      expect(await delivered(v0(b, { sender: peer, task: { id: 'dup-5', message: 'for acme' } }, acme))).toEqual({ ...atAcme, delivery: 'duplicate' })
      expect(await delivered(v0(b, { sender: peer, task: { id: 'dup-5', message: 'for globex' } }, globex))).toEqual({ ...atGlobex, delivery: 'duplicate' })

      // Neither tenant sees the other's delegation.
      const read = (token: string, id: unknown) => rawRequest(b.url, { method: 'GET', path: `/a2a/tasks/${String(id)}`, token })
      expect((await read(globex, atAcme.json['a2a_task_id'])).status).toBe(404)
      expect((await read(acme, atGlobex.json['a2a_task_id'])).status).toBe(404)
      // The delegation came signed: its own tenant's token reads it only with the delegator's signature (delegator-signature.test.ts).
      expect((await read(acme, atAcme.json['a2a_task_id'])).status).toBe(401)
      const signedRead = (token: string, id: unknown) => signedCall(b, { method: 'GET', path: `/a2a/tasks/${String(id)}`, key: PEER.privateKey, token })
      expect((await signedRead(globex, atAcme.json['a2a_task_id'])).status).toBe(404)
      expect((await signedRead(acme, atAcme.json['a2a_task_id'])).status).toBe(200)
    })
  })
}
