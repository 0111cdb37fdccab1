/**
 * The client SDK's proof of possession against a live node on loopback: with `signWith` every request is signed
 * (the node answers signed, which it does only for a request carrying a `peer` signature), with `pinnedFingerprint`
 * every answer must be signed by the node's card key for that request. A relay in between (an in-process loopback
 * proxy) records what crosses it and can change one byte or drop the signature on the way back.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AnswerUnverified, createApiClient } from '../../src/client/index.js'
import { generateEd25519KeyPair } from '../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { pinnedPeerKey, verifyPeerRequest } from '../../src/crypto/peer-http-signature.js'
import { systemClock } from '../../src/runtime.js'
import { testEngines } from '../helpers/engines.js'
import { fetchOnce } from '../helpers/raw-http.js'
import { OPERATOR_TOKEN, type TestApp, startTestApp } from '../helpers/test-app.js'

const CARD_PATH = '/.well-known/a2a-capability-card.json'

interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: Buffer
}

/** What the relay does to an answer (not to the card's): pass it, change one byte of its body, or drop its signature. */
type Mode = 'pass' | 'flip-byte' | 'strip-signature'

interface Relay {
  readonly url: string
  readonly seen: Seen[]
  mode: Mode
  close(): Promise<void>
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** Forwards every request to `target` as it came (its Host too, so the node binds its answer to the relay's address). */
async function startRelay(target: string): Promise<Relay> {
  const seen: Seen[] = []
  const relay = { seen, mode: 'pass' as Mode }
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readAll(req)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
    seen.push({ method: req.method ?? '', path: req.url ?? '', headers, body })
    const answer = await new Promise<IncomingMessage>((resolve, reject) => {
      const forward = request(target + (req.url ?? ''), { method: req.method, headers: { ...headers, connection: 'close' } }, resolve)
      forward.on('error', reject)
      forward.end(body)
    })
    let answered = await readAll(answer)
    const out: Record<string, string | string[]> = {}
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !['connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name)) out[name] = value
    if (req.url !== CARD_PATH) {
      if (relay.mode === 'flip-byte') {
        answered = Buffer.from(answered)
        const at = answered.indexOf('a'.charCodeAt(0))
        answered[at] = 'b'.charCodeAt(0)
      } else if (relay.mode === 'strip-signature') {
        delete out['signature']
        delete out['signature-input']
      }
    }
    res.writeHead(answer.statusCode ?? 502, { ...out, 'content-length': String(answered.length), connection: 'close' })
    res.end(answered)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (typeof address !== 'object' || address === null) throw new Error('no address')
  return Object.assign(relay, {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  })
}

describe.each(testEngines())('the client signs its requests and verifies signed answers (%s)', (engine) => {
  let app: TestApp
  let relay: Relay
  let nodeFingerprint: string
  const mine = generateEd25519KeyPair()
  const signWith = { privateKey: mine.privateKey, keyid: keyFingerprint(mine.publicKey) }

  beforeAll(async () => {
    app = await startTestApp({ engine })
    relay = await startRelay(app.url)
    nodeFingerprint = keyFingerprint(app.keys.capabilityCard.publicKey)
  })
  afterAll(async () => {
    await relay?.close()
    await app?.close()
  })

  const client = (options: { pinnedFingerprint?: string; now?: () => number; prefix?: string } = {}) =>
    createApiClient({ baseUrl: relay.url + (options.prefix ?? ''), token: OPERATOR_TOKEN, fetch: fetchOnce, signWith, ...options })

  it('signs every request (verifiable under its key, body digest included) and takes the answers the pinned node signed', async () => {
    relay.mode = 'pass'
    relay.seen.length = 0
    const pinned = client({ pinnedFingerprint: nodeFingerprint })
    const sent = await pinned.POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'Fix the flaky test' } })
    expect(sent.response.status).toBe(201)
    expect(sent.data?.status).toBe('submitted')
    expect(sent.response.headers.get('signature-input')).toContain(`keyid="${nodeFingerprint}"`)
    // An error answer is signed too, and comes back as data.
    const missing = await pinned.GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } })
    expect(missing.response.status).toBe(404)
    expect(missing.error?.detail).toContain('ffffffffffff')
    // Under the /api/v1 mirrors as well (the card is fetched from the node's root).
    const v1 = await client({ pinnedFingerprint: nodeFingerprint, prefix: '/api/v1' }).GET('/a2a/tasks/{a2a_task_id}', {
      params: { path: { a2a_task_id: sent.data?.id ?? '' } },
    })
    expect(v1.data?.id).toBe(sent.data?.id)

    // The card once per client, unsigned; every call signed as a node would check it.
    const calls = relay.seen.filter((s) => s.path !== CARD_PATH)
    expect(relay.seen.filter((s) => s.path === CARD_PATH)).toHaveLength(2)
    expect(calls.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /a2a/tasks/send', 'GET /tasks/ffffffffffff', `GET /api/v1/a2a/tasks/${sent.data?.id}`])
    for (const call of calls) {
      const verdict = await verifyPeerRequest(pinnedPeerKey(mine.publicKey), systemClock, 300, {
        method: call.method,
        url: relay.url + call.path,
        headers: call.headers,
        body: call.body.length > 0 ? call.body : undefined,
      })
      expect(verdict, `${call.method} ${call.path}`).toMatchObject({ ok: true, value: { keyid: signWith.keyid } })
    }
    expect(calls[0]?.headers['signature-input']).toMatch(
      /^peer=\("@method" "@target-uri" "content-digest"\);created=\d+;keyid="sha256:[0-9a-f]{64}";alg="ed25519";nonce="/,
    )
    // A changed body does not verify under the signature the client made.
    const forged = await verifyPeerRequest(pinnedPeerKey(mine.publicKey), systemClock, 300, {
      method: 'POST',
      url: `${relay.url}/a2a/tasks/send`,
      headers: calls[0]?.headers ?? {},
      body: Buffer.from((calls[0]?.body ?? Buffer.alloc(0)).toString().replace('flaky', 'fleky')),
    })
    expect(forged).toMatchObject({ ok: false, code: 'digest' })
  })

  it('refuses a node whose card is not signed by the pinned fingerprint, before sending the request', async () => {
    relay.mode = 'pass'
    relay.seen.length = 0
    const other = keyFingerprint(generateEd25519KeyPair().publicKey)
    const refused = await client({ pinnedFingerprint: other })
      .POST('/a2a/tasks/send', { body: { sender: 'peer@globex', message: 'not for an impostor' } })
      .then(
        () => null,
        (error: unknown) => error,
      )
    expect(refused).toBeInstanceOf(AnswerUnverified)
    expect(refused).toMatchObject({ name: 'AnswerUnverified', code: 'card', cardFailure: 'untrusted_issuer', status: null })
    expect(relay.seen.map((s) => s.path)).toEqual([CARD_PATH])
  })

  it.each([
    ['flip-byte', 'digest'],
    ['strip-signature', 'missing'],
  ] as const)('refuses an answer the relay changed (%s) as %s', async (mode, code) => {
    const pinned = client({ pinnedFingerprint: nodeFingerprint })
    relay.mode = 'pass'
    // The control: through the same relay, untouched, the same call is accepted.
    expect((await pinned.GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } })).response.status).toBe(404)
    relay.mode = mode
    const refused = await pinned.GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } }).then(
      () => null,
      (error: unknown) => error,
    )
    relay.mode = 'pass'
    expect(refused).toBeInstanceOf(AnswerUnverified)
    expect(refused).toMatchObject({ code, status: 404 })
  })

  it('refuses an answer signed outside the window of its clock (stale)', async () => {
    relay.mode = 'pass'
    const ahead = () => Date.now() / 1000 + 1000
    const refused = await client({ pinnedFingerprint: nodeFingerprint, now: ahead })
      .GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } })
      .then(
        () => null,
        (error: unknown) => error,
      )
    expect(refused).toMatchObject({ name: 'AnswerUnverified', code: 'stale', status: 404 })
  })

  it('without a pinned fingerprint, signs and takes answers as they come; a pinned fingerprint needs signWith', async () => {
    relay.mode = 'strip-signature'
    const unpinned = await client().GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } })
    relay.mode = 'pass'
    expect(unpinned.response.status).toBe(404)
    expect(() => createApiClient({ baseUrl: relay.url, pinnedFingerprint: nodeFingerprint })).toThrow(
      new TypeError('pinnedFingerprint needs signWith: a node signs only its answers to signed requests'),
    )
  })
})
