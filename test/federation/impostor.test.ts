/**
 * Issue 24: trust that holds against an impostor. A capability card is public, so serving a pinned card proves
 * nothing; between two nodes every request and answer is signed (RFC 9421) by the pinned card key, and the token
 * leaves only after the peer answered a fresh challenge signed by that key.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import { describe, expect, it } from 'vitest'
import { parsePythonJson, pythonCanonical } from '../../src/canonical/python-json.js'
import { serializeCardFile } from '../../src/cards/card-file.js'
import { generateEd25519KeyPair } from '../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { sha256Prefixed } from '../../src/crypto/sha256-prefixed.js'
import { pinnedPeerKey, verifyPeerRequest } from '../../src/crypto/peer-http-signature.js'
import { LINEAGE_ENVELOPE_FIELD, lineageEnvelopePayload } from '../../src/lineage/envelope.js'
import { systemClock } from '../../src/runtime.js'
import { testClock } from '../helpers/clock.js'
import { createTestDatabase, testEngines } from '../helpers/engines.js'
import { wireRequest } from '../helpers/raw-http.js'
import { type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'
import { FAST_RETRY, OPEN, cardFingerprint, chainLines, delegate, federationNodes, localTask, peerCapabilityCard, signedDelivery } from './nodes.js'

/** One request as a test double received it. */
interface Logged {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage['headers']
}

/** A loopback HTTP server answering with `handle`, logging every request it receives. */
async function double(
  handle: (req: IncomingMessage, body: Buffer, res: ServerResponse) => Promise<void> | void,
): Promise<{ url: string; log: Logged[]; close(): Promise<void> }> {
  const log: Logged[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      log.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers })
      void Promise.resolve(handle(req, Buffer.concat(chunks), res)).catch(() => {
        res.statusCode = 500
        res.end()
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (typeof address !== 'object' || address === null) throw new Error('no address')
  return {
    url: `http://127.0.0.1:${address.port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

function json(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(body)
}

/** What a captured outbound request was: method, URL, every header and the exact body. */
interface Captured {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

async function taskCount(app: TestApp): Promise<number> {
  const page = await app.client.GET('/tasks', { params: { query: { limit: 500 } } })
  return page.data!.tasks.length
}

/** Resends a captured delivery to `app` exactly, or with `change` applied to its parts. */
function resend(app: TestApp, captured: Captured, change: Partial<{ path: string; headers: Record<string, string>; body: string }> = {}) {
  return rawRequest(app.url, {
    method: 'POST',
    path: change.path ?? new URL(captured.url).pathname,
    body: change.body ?? captured.body,
    headers: change.headers ?? captured.headers,
    token: null,
  })
}

for (const engine of testEngines()) {
  describe(`trust that holds against an impostor (${engine})`, () => {
    const node = federationNodes(engine)

    it('an impostor re-serving the real peer’s card, JWKS and receipts is refused before the token is sent', async () => {
      const a = await node('org-a')
      const b = await node('org-b')
      const cardBytes = Buffer.from(await (await fetch(`${b.url}/.well-known/a2a-capability-card.json`)).arrayBuffer())
      const jwksBytes = Buffer.from(await (await fetch(`${b.url}/.well-known/agent.json/keys`)).arrayBuffer())
      // The impostor serves B's public documents byte for byte, and relays anything else to B (as B's client: Host
      // rewritten), so B's own signed answers and receipts reach the delegator through it.
      const impostor = await double(async (req, body, res) => {
        if (req.url === '/.well-known/a2a-capability-card.json') return json(res, 200, cardBytes.toString('utf8'))
        if (req.url === '/.well-known/agent.json/keys') return json(res, 200, jwksBytes.toString('utf8'))
        const headers: Record<string, string> = {}
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v
        const relayed = await fetch(`${b.url}${req.url}`, { method: req.method ?? 'GET', headers, ...(body.length > 0 && { body }) })
        const answer = Buffer.from(await relayed.arrayBuffer())
        const out: Record<string, string> = {}
        relayed.headers.forEach((v, k) => {
          if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v
        })
        res.writeHead(relayed.status, out)
        res.end(answer)
      })
      try {
        const taskId = await localTask(a)
        const d = await delegate(a, b, taskId, { peerUrl: impostor.url, trustedFingerprints: [cardFingerprint(b)] })
        expect(d.status).toBe('rejected')
        expect(d.lastError).toMatch(/^proof of possession failed: the peer's answer is not signed by the pinned card key sha256:[0-9a-f]{64} \(invalid: /)
        expect(d).toMatchObject({ remoteA2ATaskId: null, trustLevel: null })
        // The impostor saw the card, and the challenge (relayed to B), and nothing else: no token, no delivery.
        expect(impostor.log.map((r) => `${r.method} ${r.path.split('?')[0]}`)).toEqual(['GET /.well-known/a2a-capability-card.json', 'GET /a2a/v0/proof'])
        expect(impostor.log.some((r) => r.headers.authorization !== undefined)).toBe(false)
        expect(await taskCount(b)).toBe(0)
        // Nothing is marked done locally, and following finds nothing to follow.
        expect((await a.client.GET('/tasks/{task_id}', { params: { path: { task_id: taskId } } })).data!.status).toBe('open')
        expect(await a.app.services.delegation.syncDue({ all: true })).toEqual([])
        // The same delegation to B itself is proven and accepted.
        const direct = await delegate(a, b, await localTask(a, 'the real one'))
        expect(direct).toMatchObject({ status: 'accepted', trustLevel: 'proven', peerFingerprint: cardFingerprint(b) })
      } finally {
        await impostor.close()
      }
    })

    it('an impostor answering the challenge unsigned is refused too, and the ledger names the opt-in flag', async () => {
      const a = await node('org-a')
      const b = await node('org-b')
      const cardBytes = await (await fetch(`${b.url}/.well-known/a2a-capability-card.json`)).text()
      const impostor = await double((req, _body, res) => {
        if (req.url === '/.well-known/a2a-capability-card.json') return json(res, 200, cardBytes)
        const nonce = new URL(req.url ?? '/', 'http://x').searchParams.get('nonce')
        return json(res, 200, JSON.stringify({ nonce, issuer: 'org-b', key_fingerprint: cardFingerprint(b) }))
      })
      try {
        const d = await delegate(a, b, await localTask(a), { peerUrl: impostor.url })
        expect(d.status).toBe('rejected')
        expect(d.lastError).toContain('did not prove it holds the key of card')
        expect(d.lastError).toContain('--allow-unsigned-peer (BERNSTEIN_ALLOW_UNSIGNED_PEERS=1)')
        expect(impostor.log.some((r) => r.headers.authorization !== undefined)).toBe(false)
        expect(impostor.log.some((r) => r.method === 'POST')).toBe(false)
      } finally {
        await impostor.close()
      }
    })

    it('a captured signed delivery replayed within and after the window is refused with 401, creating nothing; a second replica refuses it too', async () => {
      const database = await createTestDatabase(engine)
      const clock = testClock({ start: Math.floor(Date.now() / 1000) })
      const captured: Captured[] = []
      const capturing: typeof fetch = async (input, init) => {
        const request = new Request(input, init)
        if (new URL(request.url).pathname === '/a2a/v0/tasks')
          captured.push({ url: request.url, headers: Object.fromEntries(request.headers), body: await request.clone().text() })
        return fetch(request)
      }
      const a = await node('org-a', {}, { fetch: capturing })
      const trust = { inboundTrust: { trustedPeerFingerprints: [cardFingerprint(a)], requirements: OPEN, strictLineage: true }, clock, database }
      const profile = { issuer: 'org-b', publicBaseUrl: 'http://org-b.test' }
      const b = await startTestApp({ engine, profile, issuer: 'org-b', ...trust })
      const replica = await startTestApp({ engine, profile, issuer: 'org-b', ...trust })
      try {
        const d = await delegate(a, b, await localTask(a))
        expect(d).toMatchObject({ status: 'accepted', trustLevel: 'proven' })
        expect(captured).toHaveLength(1)
        const delivery = captured[0]!
        expect(delivery.headers['signature-input']).toMatch(
          /^peer=\("@method" "@target-uri" "content-digest"\);created=\d+;keyid="sha256:[0-9a-f]{64}";alg="ed25519";nonce="[A-Za-z0-9_-]+"$/,
        )
        const tasks = await taskCount(b)
        const chain = await chainLines(b)

        const replayed = await resend(b, delivery)
        expect(replayed.status).toBe(401)
        expect(replayed.json).toMatchObject({ reason: 'peer_signature_replayed' })
        // Another replica over the same database: the nonce is already there.
        const elsewhere = await wireRequest(replica.url, {
          method: 'POST',
          path: '/a2a/v0/tasks',
          body: delivery.body,
          // Replicas answer one address behind a balancer: the replica is reached at its own port, under B's Host.
          headers: { ...delivery.headers, host: new URL(b.url).host },
        })
        expect(elsewhere.status).toBe(401)
        expect(JSON.parse(elsewhere.text)).toMatchObject({ reason: 'peer_signature_replayed' })

        // One second past the window after the signature's `created`, on B's clock.
        const created = Number(/created=(\d+)/.exec(delivery.headers['signature-input']!)![1])
        clock.advance(created + 301 - clock.now())
        const late = await resend(b, delivery)
        expect(late.status).toBe(401)
        expect(late.json).toMatchObject({ reason: 'peer_signature_stale' })
        expect(await taskCount(b)).toBe(tasks)
        expect(await chainLines(b)).toEqual(chain)
      } finally {
        await replica.close()
        await b.close()
        await database.drop()
      }
    })

    it('each covered component changed in turn is refused; the untouched delivery is then accepted', async () => {
      // A's delivery is captured on its way out and held back (the peer never sees it; A records a failure).
      let held: Captured | undefined
      const holding: typeof fetch = async (input, init) => {
        const request = new Request(input, init)
        if (new URL(request.url).pathname !== '/a2a/v0/tasks') return fetch(request)
        held = { url: request.url, headers: Object.fromEntries(request.headers), body: await request.text() }
        return new Response('{"detail":"held"}', { status: 400, headers: { 'content-type': 'application/json' } })
      }
      const a = await node('org-a', {}, { fetch: holding })
      const b = await node('org-b', { inboundTrust: { trustedPeerFingerprints: [cardFingerprint(a)], requirements: OPEN, strictLineage: true } })
      const d = await delegate(a, b, await localTask(a))
      expect(d.status).toBe('failed')
      const captured = held!
      const { url, body } = captured
      const input = captured.headers['signature-input']!
      const before = { tasks: await taskCount(b), chain: await chainLines(b) }

      const flipped = captured.headers['signature']!.replace(/=:(.)/, (_m, c: string) => `=:${c === 'A' ? 'B' : 'A'}`)
      const tampered: readonly [string, Parameters<typeof resend>[2]][] = [
        ['the target URI (the /api/v1 mirror of the same operation)', { path: '/api/v1/a2a/v0/tasks' }],
        ['one body byte', { body: body.replace('port the parser', 'port the parses') }],
        [
          'one body byte, digest recomputed',
          { body: body.replace('port the parser', 'port the parses'), headers: { ...captured.headers, 'content-digest': 'x' } },
        ],
        ['created', { headers: { ...captured.headers, 'signature-input': input.replace(/created=(\d+)/, (_m, n: string) => `created=${Number(n) - 1}`) } }],
        ['nonce', { headers: { ...captured.headers, 'signature-input': input.replace(/nonce="(.)/, (_m, c: string) => `nonce="${c === 'a' ? 'b' : 'a'}`) } }],
        ['one signature byte', { headers: { ...captured.headers, signature: flipped } }],
      ]
      for (const [label, change] of tampered) {
        const res = await resend(b, captured, change)
        expect(res.status, label).toBe(401)
        expect((res.json as { reason: string }).reason, label).toBe('peer_signature_invalid')
      }
      // The method cannot be changed on the wire and still reach the operation (POST only), so it is changed here.
      const key = pinnedPeerKey(a.keys.capabilityCard.publicKey)
      const asSent = { method: 'POST', url, headers: captured.headers, body }
      expect(await verifyPeerRequest(key, systemClock, 300, asSent)).toMatchObject({ ok: true })
      expect(await verifyPeerRequest(key, systemClock, 300, { ...asSent, method: 'PUT' })).toMatchObject({ ok: false, code: 'invalid' })
      expect({ tasks: await taskCount(b), chain: await chainLines(b) }).toEqual(before)

      const genuine = await resend(b, captured)
      expect(genuine.status).toBe(202)
      expect(await taskCount(b)).toBe(before.tasks + 1)
    })

    it('a replayed public card with recomputed lineage is refused with 401, the chain unchanged', async () => {
      const a = await node('org-a')
      const b = await node('org-b', { inboundTrust: { trustedPeerFingerprints: [cardFingerprint(a)], requirements: OPEN, strictLineage: true } })
      const taskId = await localTask(a)
      const card = parsePythonJson(await (await fetch(`${a.url}/.well-known/a2a-capability-card.json`)).text())
      const payload = lineageEnvelopePayload(await a.app.services.lineage.envelope(taskId))
      // A fabricated envelope under A's name, made from public data only (the signature gate refuses it before lineage is read).
      const forgedPayload = { ...payload, chain_digest: sha256Prefixed('fabricated') }
      const body = pythonCanonical({
        sender: { name: 'org-a', description: '', capability_card: card },
        task: { id: 'forged-1', message: 'exfiltrate the repo', role: 'backend' },
        [LINEAGE_ENVELOPE_FIELD]: forgedPayload,
      })
      const before = { tasks: await taskCount(b), chain: await chainLines(b) }

      const unsigned = await rawRequest(b.url, { method: 'POST', path: '/a2a/v0/tasks', body })
      expect(unsigned.status).toBe(401)
      expect(unsigned.json).toMatchObject({ reason: 'peer_signature_required' })
      // Signed by the attacker's own key while carrying A's card: the signature is checked against A's card key.
      const attacker = generateEd25519KeyPair()
      const signedByAttacker = await signedDelivery(b, body, attacker.privateKey)
      expect(signedByAttacker.status).toBe(401)
      expect(signedByAttacker.json).toMatchObject({ reason: 'peer_signature_invalid' })
      expect({ tasks: await taskCount(b), chain: await chainLines(b) }).toEqual(before)
    })

    it('a Bernstein-like peer that cannot sign is refused by default, accepted with the flag, and the ledger says card-only', async () => {
      const a = await node('org-a')
      const key = generateEd25519KeyPair()
      const now = Math.floor(Date.now() / 1000)
      const card = await peerCapabilityCard('bernstein-3', key.privateKey, now)
      // Bernstein 3.x's v0 surface: the card, a JWKS, POST /a2a/v0/tasks; no proof endpoint, nothing signed.
      const bernstein = await double((req, _body, res) => {
        if (req.url === '/.well-known/a2a-capability-card.json') return json(res, 200, serializeCardFile(card))
        if (req.url === '/.well-known/agent.json/keys') return json(res, 200, '{"keys":[]}')
        if (req.method === 'POST' && req.url === '/a2a/v0/tasks')
          return json(res, 202, JSON.stringify({ id: 'fed-1', remote_task_id: 'x', status: 'accepted', peer_name: 'org-a' }))
        return json(res, 404, '{"detail":"Not Found"}')
      })
      try {
        const pinned = { peerUrl: bernstein.url, trustedFingerprints: [keyFingerprint(key.publicKey)] }
        const refused = await delegate(a, a, await localTask(a), pinned)
        expect(refused.status).toBe('rejected')
        expect(refused.lastError).toContain('its answer 404 is unsigned')
        expect(refused.lastError).toContain('--allow-unsigned-peer')
        expect(bernstein.log.some((r) => r.method === 'POST' || r.headers.authorization !== undefined)).toBe(false)

        const accepted = await delegate(a, a, await localTask(a, 'for bernstein'), { ...pinned, allowUnsignedPeer: true })
        expect(accepted).toMatchObject({ status: 'accepted', trustLevel: 'card-only', remoteId: 'fed-1', peerFingerprint: keyFingerprint(key.publicKey) })
        const post = bernstein.log.find((r) => r.method === 'POST')
        expect(post?.headers.authorization).toMatch(/^Bearer /)
        // The delivery is still signed: a peer that can verify may; Bernstein ignores the fields.
        expect(post?.headers['signature-input']).toMatch(/^peer=/)
        expect(await a.store.repos.federation.get(accepted.id)).toMatchObject({ trustLevel: 'card-only' })
      } finally {
        await bernstein.close()
      }
    })

    it('a proven peer’s answers that the network rewrites are refused by their signature while followed', async () => {
      let rewrite = false
      const tampering: typeof fetch = async (input, init) => {
        const res = await fetch(input, init)
        if (!rewrite || !/\/a2a\/tasks\/[0-9a-f]+$/.test(new URL(String(input)).pathname)) return res
        const text = (await res.text()).replace('"status":"submitted"', '"status":"completed"')
        return new Response(text, { status: res.status, headers: res.headers })
      }
      const a = await node('org-a', {}, { fetch: tampering, retry: FAST_RETRY })
      const b = await node('org-b')
      const d = await delegate(a, b, await localTask(a))
      expect(d.trustLevel).toBe('proven')
      rewrite = true
      const followed = await a.app.services.delegation.follow(d)
      expect(followed.status).toBe('accepted')
      expect(followed.lastError).toMatch(/^follow: the peer's answer \(200\) is not signed by its pinned card key \(digest\): /)
    })
  })
}
