/**
 * Hostile request bodies and paths found by adversarial probing, each answered with the contract's client error and
 * leaving every table as it was: JSON nested past the parser's limit (it used to exhaust the stack: a 500, or a 400
 * quoting "Maximum call stack size exceeded"), bytes that are not UTF-8 (they used to be stored as U+FFFD),
 * compressed bodies that inflate past the cap (the 413 quoted the compressed size), and paths that do not
 * percent-decode (express-openapi-validator's "malformed uri'" located at the raw URL segments).
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MALFORMED_PATH_MESSAGE } from '../../src/http/problem.js'
import { findUtf8Fault, pythonUtf8DecodeText } from '../../src/text/utf8.js'
import { testEngines } from '../helpers/engines.js'
import { wireRequest } from '../helpers/raw-http.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'
import { type Dump, type StoreDump, openStoreDump } from './support.js'

const LIMIT = 1_048_576
const SENDER = { name: 'hostile-peer', description: 'probe', capabilities: [], endpoint: 'http://peer.test' }
const ENGINE_TEXT = /Maximum call stack|RangeError|stack size|at position|Unexpected token|is not valid JSON/i

/** A delegation body with `tail` spliced in as the value of `bernstein.lineage_v2`; returns where `tail` starts. */
function delegation(id: string, tail: string): { body: string; at: number } {
  const head = `{"sender":${JSON.stringify(SENDER)},"task":{"id":${JSON.stringify(id)},"message":"probe"},"bernstein.lineage_v2":`
  return { body: `${head}${tail}}`, at: head.length }
}

const jsonInvalid = (position: number): unknown => ({ detail: [{ loc: ['body', position], msg: 'JSON decode error', type: 'json_invalid' }] })
const bytes = (...parts: (string | number[])[]): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))))

/** Sends a body in chunks without Content-Length (Transfer-Encoding: chunked). */
async function chunked(url: string, path: string, chunks: Buffer[]): Promise<{ status: number; json: unknown }> {
  const headers = { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' }
  const res = await wireRequest(url, { method: 'POST', path, headers, chunks })
  return { status: res.status, json: JSON.parse(res.text) as unknown }
}

describe('findUtf8Fault / pythonUtf8DecodeText (known answers from CPython 3.11 bytes.decode("utf-8"))', () => {
  const cases: Array<[number[], string, number]> = [
    [[255], "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte", 0],
    [[128], "'utf-8' codec can't decode byte 0x80 in position 0: invalid start byte", 0],
    [[192, 175], "'utf-8' codec can't decode byte 0xc0 in position 0: invalid start byte", 0],
    [[193, 191], "'utf-8' codec can't decode byte 0xc1 in position 0: invalid start byte", 0],
    [[194], "'utf-8' codec can't decode byte 0xc2 in position 0: unexpected end of data", 0],
    [[194, 65], "'utf-8' codec can't decode byte 0xc2 in position 0: invalid continuation byte", 0],
    [[224, 128, 128], "'utf-8' codec can't decode byte 0xe0 in position 0: invalid continuation byte", 0],
    [[224, 160], "'utf-8' codec can't decode bytes in position 0-1: unexpected end of data", 0],
    [[224, 128], "'utf-8' codec can't decode byte 0xe0 in position 0: invalid continuation byte", 0],
    [[225, 128, 65], "'utf-8' codec can't decode bytes in position 0-1: invalid continuation byte", 0],
    [[237, 160, 128], "'utf-8' codec can't decode byte 0xed in position 0: invalid continuation byte", 0],
    [[237, 159, 191, 255], "'utf-8' codec can't decode byte 0xff in position 3: invalid start byte", 1],
    [[239, 191, 189, 255], "'utf-8' codec can't decode byte 0xff in position 3: invalid start byte", 1],
    [[240, 128, 128, 128], "'utf-8' codec can't decode byte 0xf0 in position 0: invalid continuation byte", 0],
    [[240, 159, 152], "'utf-8' codec can't decode bytes in position 0-2: unexpected end of data", 0],
    [[240, 159, 152, 128, 254], "'utf-8' codec can't decode byte 0xfe in position 4: invalid start byte", 1],
    [[244, 144, 128, 128], "'utf-8' codec can't decode byte 0xf4 in position 0: invalid continuation byte", 0],
    [[244, 143, 191, 191, 245], "'utf-8' codec can't decode byte 0xf5 in position 4: invalid start byte", 1],
    [[248, 136, 128, 128, 128], "'utf-8' codec can't decode byte 0xf8 in position 0: invalid start byte", 0],
    [[97, 195, 169, 226, 130], "'utf-8' codec can't decode bytes in position 3-4: unexpected end of data", 2],
    [[123, 34, 116, 105, 116, 108, 101, 34, 58, 34, 255, 254, 34, 125], "'utf-8' codec can't decode byte 0xff in position 10: invalid start byte", 10],
  ]
  it.each(cases)('%j', (input, text, charOffset) => {
    const buf = Buffer.from(input)
    const fault = findUtf8Fault(buf)
    expect(fault).not.toBeNull()
    expect(pythonUtf8DecodeText(buf, fault!)).toBe(text)
    expect(fault?.charOffset).toBe(charOffset)
  })

  it('finds nothing in UTF-8, U+FFFD and astral characters included', () => {
    for (const text of ['', '{"title":"x"}', '\ufffd', 'é😀\u{10ffff}\ud7ff\ue000']) expect(findUtf8Fault(Buffer.from(text, 'utf8')), text).toBeNull()
  })
})

for (const engine of testEngines()) {
  describe(`hostile bodies and paths (${engine})`, () => {
    let app: TestApp
    let store: StoreDump
    let baseline: Dump

    beforeAll(async () => {
      app = await startTestApp({ engine })
      store = await openStoreDump(app)
      baseline = await store.dump()
    })
    afterAll(async () => {
      await store?.close()
      await app?.close()
    })

    /** Sends the request and asserts its exact answer, that no engine text leaks, and that no table changed. */
    const refused = async (init: Parameters<typeof rawRequest>[1], status: number, json: unknown): Promise<void> => {
      const res = await rawRequest(app.url, init)
      const label = `${init.method} ${init.path.slice(0, 80)}`
      expect({ label, status: res.status, json: res.json }).toEqual({ label, status, json })
      expect(res.headers.get('content-type'), label).toMatch(/^application\/json/)
      expect(res.text, label).not.toMatch(ENGINE_TEXT)
      expect(await store.dump(), label).toEqual(baseline)
    }

    describe('JSON nested past 1000 levels (defects 1 and 2)', () => {
      it('POST /a2a/v0/tasks with a 10 000-deep lineage envelope: 400 invalid JSON at the 1001st level, never a 500', async () => {
        for (const prefix of ['', '/api/v1']) {
          for (const [label, tail] of [
            ['arrays', '['.repeat(10_000) + ']'.repeat(10_000)],
            ['objects', '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)],
          ] as const) {
            const { body, at } = delegation(`deep-${label}`, tail)
            // The body object is level 1, so the envelope's 1000th bracket opens level 1001.
            const position = at + (label === 'arrays' ? 999 : 999 * 5)
            await refused({ method: 'POST', path: `${prefix}/a2a/v0/tasks`, body }, 400, {
              detail: `Invalid JSON body: Nesting deeper than 1000 levels: line 1 column ${position + 1} (char ${position})`,
            })
          }
        }
      })

      it('POST /a2a/v0/tasks: a body nested exactly 1000 levels is read (the envelope is then refused as an envelope, 409)', async () => {
        const { body } = delegation('deep-999', '['.repeat(999) + ']'.repeat(999))
        await refused({ method: 'POST', path: '/a2a/v0/tasks', body }, 409, {
          detail: "lineage envelope rejected: A2A envelope missing 'bernstein.lineage_v2' field",
        })
        const { body: over } = delegation('deep-1000', '['.repeat(1000) + ']'.repeat(1000))
        const res = await rawRequest(app.url, { method: 'POST', path: '/a2a/v0/tasks', body: over })
        expect(res.status).toBe(400)
      })

      it('an unterminated 100 000-deep body: the documented 400 / 422 with a fixed message, no engine text', async () => {
        const body = `{"title":${'['.repeat(100_000)}`
        await refused({ method: 'POST', path: '/a2a/v0/tasks', body }, 400, {
          detail: 'Invalid JSON body: Nesting deeper than 1000 levels: line 1 column 1009 (char 1008)',
        })
        for (const path of ['/tasks', '/api/v1/tasks', '/a2a/tasks/send', '/a2a/message']) {
          await refused({ method: 'POST', path, body }, 422, jsonInvalid(1008))
        }
      })
    })

    describe('bytes that are not UTF-8 (defect 3)', () => {
      it('POST /tasks: 422 json_invalid at the character where decoding fails; nothing stored', async () => {
        await refused({ method: 'POST', path: '/tasks', body: bytes('{"title":"', [0xff, 0xfe], '"}') }, 422, jsonInvalid(10))
        // The location counts characters, not bytes: "é😀" are 2 characters and 6 bytes.
        await refused({ method: 'POST', path: '/tasks', body: bytes('{"title":"é😀', [0xe2, 0x82], '"}') }, 422, jsonInvalid(12))
        // An encoded surrogate (CESU-8) and an overlong '/' are not UTF-8 either.
        await refused({ method: 'POST', path: '/api/v1/tasks', body: bytes('{"title":"', [0xed, 0xa0, 0x80], '"}') }, 422, jsonInvalid(10))
        const send = '{"sender":"a","message":"'
        await refused({ method: 'POST', path: '/a2a/tasks/send', body: bytes(send, [0xc0, 0xaf], '"}') }, 422, jsonInvalid(send.length))
        // Offsets start after a byte order mark, which is not part of the text.
        await refused({ method: 'POST', path: '/tasks', body: bytes([0xef, 0xbb, 0xbf], '{"title":"', [0xff], '"}') }, 422, jsonInvalid(10))
        // Checked after decompression: the bytes inside the gzip stream count.
        await refused(
          { method: 'POST', path: '/tasks', body: gzipSync(bytes('{"title":"', [0xff], '"}')), headers: { 'content-encoding': 'gzip' } },
          422,
          jsonInvalid(10),
        )
      })

      it("POST /a2a/v0/tasks: 400 with Bernstein's text, Python's UnicodeDecodeError; nothing stored", async () => {
        const head = '{"sender":{"name":"peer'
        const body = bytes(head, [0xff], `","description":""},"task":{"id":"utf8","message":"m"}}`)
        await refused({ method: 'POST', path: '/a2a/v0/tasks', body }, 400, {
          detail: `Invalid JSON body: 'utf-8' codec can't decode byte 0xff in position ${head.length}: invalid start byte`,
        })
        // As Python's json.loads(bytes) reports it: after a byte order mark, which it drops (utf-8-sig).
        await refused({ method: 'POST', path: '/a2a/v0/tasks', body: bytes([0xef, 0xbb, 0xbf], head, [0xff], '"}') }, 400, {
          detail: `Invalid JSON body: 'utf-8' codec can't decode byte 0xff in position ${head.length}: invalid start byte`,
        })
        const before = '{"sender":{"name":"p","description":""},"task":{"id":"utf8","message":"'
        const truncated = bytes(before, [0xe2, 0x82], '"}}')
        await refused({ method: 'POST', path: '/api/v1/a2a/v0/tasks', body: truncated }, 400, {
          detail: `Invalid JSON body: 'utf-8' codec can't decode bytes in position ${before.length}-${before.length + 1}: invalid continuation byte`,
        })
      })

      it('U+FFFD sent as UTF-8 is ordinary text and is kept', async () => {
        const res = await rawRequest(app.url, { method: 'POST', path: '/tasks', body: bytes('{"title":"', [0xef, 0xbf, 0xbd], '"}') })
        expect(res.status).toBe(201)
        expect((res.json as { title: string }).title).toBe('\ufffd')
        baseline = await store.dump()
      })
    })

    describe('compressed bodies over the cap (defect 4)', () => {
      const big = JSON.stringify({ title: 'x', description: ' '.repeat(2 * LIMIT) })
      it.each([
        ['gzip', gzipSync],
        ['deflate', deflateSync],
        ['br', brotliCompressSync],
      ] as const)('%s: 413 says the decoded body exceeds the limit, not the compressed size', async (encoding, compress) => {
        const body = compress(Buffer.from(big))
        expect(body.length).toBeLessThan(LIMIT)
        for (const path of ['/tasks', '/a2a/v0/tasks']) {
          await refused({ method: 'POST', path, body, headers: { 'content-encoding': encoding } }, 413, {
            detail: 'Decoded request body exceeds 1048576-byte limit',
          })
        }
      })

      it('a chunked body names no size it does not know; a declared one keeps its size', async () => {
        const chunk = Buffer.alloc(64 * 1024, 0x20)
        const res = await chunked(app.url, '/tasks', [Buffer.from('{"title":"x"'), ...Array.from({ length: 40 }, () => chunk), Buffer.from('}')])
        expect(res).toEqual({ status: 413, json: { detail: 'Request body exceeds 1048576-byte limit' } })
        await refused({ method: 'POST', path: '/tasks', body: big }, 413, { detail: `Request body ${Buffer.byteLength(big)} bytes exceeds 1048576-byte limit` })
        expect(await store.dump()).toEqual(baseline)
      })
    })

    describe('paths that do not percent-decode (defect 5)', () => {
      it('422 located at the path parameter, with a clean message', async () => {
        for (const [method, path, param] of [
          ['GET', '/tasks/%FF', 'task_id'],
          ['GET', '/tasks/%', 'task_id'],
          ['GET', '/tasks/%E0%A4%A', 'task_id'],
          ['GET', '/a2a/tasks/%FF', 'a2a_task_id'],
          ['POST', '/tasks/%FF/claim', 'task_id'],
          ['GET', '/tasks/next/%C0%AF', 'role'],
          ['GET', '/api/v1/tasks/%ZZ', 'task_id'],
          ['POST', '/a2a/tasks/%ED%A0%80/artifacts', 'a2a_task_id'],
        ] as const) {
          await refused({ method, path, ...(method === 'POST' && { body: '{}' }) }, 422, {
            detail: [{ loc: ['path', param], msg: MALFORMED_PATH_MESSAGE, type: 'value_error' }],
          })
        }
        expect(MALFORMED_PATH_MESSAGE).toBe('Path parameter is not valid percent-encoded UTF-8')
      })
    })
  })
}
