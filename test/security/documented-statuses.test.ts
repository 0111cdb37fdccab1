/**
 * Requests the body parser refuses before the validator sees them (an unknown charset or content coding, a
 * coded body that does not decode) are answered with a status the operation documents, in the documented
 * shape, and write nothing: responses to refused requests are not checked by the response validator, so this
 * file checks them against the document, for every operation that takes a body. The shape is the operation's
 * `x-error-format`: `{detail}`, a `google.rpc.Status` (A2A v1.0 HTTP+JSON, `application/a2a+json` unless the client
 * accepts only JSON), or a JSON-RPC error response, which the JSON-RPC binding answers with HTTP 200.
 */
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { testEngines } from '../helpers/engines.js'
import { wireRequest } from '../helpers/raw-http.js'
import { OPERATOR_TOKEN, rawRequest } from '../helpers/test-app.js'
import { concretePath, errorBodyProblem, loadOperations, validBody, worldFixture } from './support.js'

const OPERATIONS = loadOperations()
const WITH_BODY = OPERATIONS.filter((op) => op.hasBody)
/** `/a2a/v0/tasks` reads its body raw and checks it by hand (Bernstein's 400s), so the document declares no body. */
const V0 = OPERATIONS.filter((op) => op.rootPath === '/a2a/v0/tasks')

interface Refusal {
  readonly name: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: (json: string) => string | Buffer
}

const CHARSETS: readonly Refusal[] = [
  { name: 'an unknown charset', headers: { 'content-type': 'application/json; charset=bogus' }, body: (j) => j },
  { name: 'a latin-1 charset', headers: { 'content-type': 'application/json; charset=iso-8859-1' }, body: (j) => j },
  // JSON is UTF-8: other Unicode encodings too are refused, not decoded (UTF-7 would let `+ADw-` stand for `<`).
  { name: 'UTF-7', headers: { 'content-type': 'application/json; charset=utf-7' }, body: (j) => j },
  { name: 'UTF-16', headers: { 'content-type': 'application/json; charset=utf-16le' }, body: (j) => Buffer.from(j, 'utf16le') },
  {
    name: 'UTF-32',
    headers: { 'content-type': 'application/json; charset=utf-32le' },
    body: (j) => Buffer.concat([...j].map((c) => Buffer.from([c.charCodeAt(0) & 0xff, c.charCodeAt(0) >> 8, 0, 0]))),
  },
]
const CODINGS: readonly Refusal[] = [
  { name: 'an unknown content coding', headers: { 'content-type': 'application/json', 'content-encoding': 'bogus' }, body: (j) => j },
  { name: 'gzip that is not gzip', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: (j) => j },
  { name: 'a truncated gzip body', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: (j) => gzipSync(j).subarray(0, 12) },
]

/** A GET with a body (fetch refuses to send one), answering its status. */
async function getWithBody(url: string, path: string, headers: Readonly<Record<string, string>>, body: string | Buffer): Promise<number> {
  return (await wireRequest(url, { method: 'GET', path, headers: { ...headers }, body })).status
}

for (const engine of testEngines()) {
  describe(`bodies refused before validation get a documented status (${engine})`, () => {
    const f = worldFixture(engine, 'claimed')

    it('covers every operation with a body', () => {
      expect(WITH_BODY.length).toBeGreaterThanOrEqual(20)
      expect(V0.map((op) => op.statuses.includes(400))).toEqual([true, true])
    })

    for (const op of [...WITH_BODY, ...V0]) {
      it(`${op.method} ${op.path}`, async () => {
        const before = await f.store.dump()
        const json = JSON.stringify(validBody(op, f.world))
        // v0 reads the bytes as UTF-8 whatever the charset says (as Bernstein does): a charset is no refusal there.
        for (const refusal of V0.includes(op) ? CODINGS : [...CHARSETS, ...CODINGS]) {
          const res = await rawRequest(f.app.url, {
            method: op.method,
            path: concretePath(op, f.world),
            token: OPERATOR_TOKEN,
            headers: { 'x-tenant-id': f.world.tenantA, ...op.headers, ...refusal.headers },
            body: refusal.body(json),
          })
          const label = `${refusal.name}: ${res.status} ${res.text.slice(0, 200)}`
          // JSON-RPC answers a request it could not read with a JSON-RPC error (HTTP 200); everything else is a 4xx.
          if (op.errorFormat === 'a2a-jsonrpc') expect(res.status, label).toBe(200)
          else expect(res.status, label).toBeGreaterThanOrEqual(400)
          expect(op.statuses, label).toContain(res.status)
          expect(res.headers.get('content-type'), label).toMatch(op.errorFormat === 'a2a-rest' ? /^application\/a2a\+json/ : /^application\/json/)
          expect(errorBodyProblem(op.errorFormat, res.status, res.json), label).toBeNull()
        }
        expect(await f.store.dump()).toEqual(before)
      })
    }

    it('a body sent with a GET is not read: every GET answers as it does without one', async () => {
      const hostile: readonly Refusal[] = [
        ...CHARSETS,
        ...CODINGS,
        { name: 'broken JSON', headers: { 'content-type': 'application/json' }, body: () => '{bad' },
        { name: 'a lone surrogate', headers: { 'content-type': 'application/json' }, body: () => '{"a":"\\ud800"}' },
        { name: 'over the body limit', headers: { 'content-type': 'application/json' }, body: () => `{"a":"${'x'.repeat(1_100_000)}"}` },
      ]
      const gets = OPERATIONS.filter((op) => op.method === 'GET' && op.rootPath !== '/tasks/next/{role}')
      expect(gets.length).toBeGreaterThanOrEqual(30)
      // The answers without a body first (the first read of a discovery document signs and stores it).
      const plainStatus = new Map<string, number>()
      for (const op of gets) {
        const plain = await rawRequest(f.app.url, {
          method: 'GET',
          path: concretePath(op, f.world),
          token: OPERATOR_TOKEN,
          headers: { 'x-tenant-id': f.world.tenantA },
        })
        plainStatus.set(op.path, plain.status)
      }
      const before = await f.store.dump()
      for (const op of gets) {
        const path = concretePath(op, f.world)
        const plain = { status: plainStatus.get(op.path) }
        for (const body of hostile) {
          const status = await getWithBody(
            f.app.url,
            path,
            { authorization: `Bearer ${OPERATOR_TOKEN}`, 'x-tenant-id': f.world.tenantA, ...body.headers },
            body.body('{}'),
          )
          expect({ op: `${op.method} ${op.path}`, body: body.name, status }).toEqual({ op: `${op.method} ${op.path}`, body: body.name, status: plain.status })
        }
      }
      expect(await f.store.dump()).toEqual(before)
    })

    it('v0 reads its body as UTF-8 whatever charset is declared, a byte order mark dropped, as Bernstein does', async () => {
      const [v0] = V0
      const body = validBody(v0!, f.world) as { task: { message: string } }
      const message = `délégué ✓ ${body.task.message}`
      const json = JSON.stringify({ ...body, task: { ...body.task, message } })
      const res = await rawRequest(f.app.url, {
        method: 'POST',
        path: '/a2a/v0/tasks',
        token: OPERATOR_TOKEN,
        headers: { 'x-tenant-id': f.world.tenantA, 'content-type': 'application/json; charset=iso-8859-1' },
        body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json, 'utf8')]),
      })
      expect(res.status, res.text).toBe(202)
      const created = await f.app.client.GET('/a2a/tasks/{a2a_task_id}', {
        params: { path: { a2a_task_id: (res.json as { a2a_task_id: string }).a2a_task_id } },
        headers: { 'x-tenant-id': f.world.tenantA },
      })
      expect(created.data?.message).toBe(message)
    })
  })
}
