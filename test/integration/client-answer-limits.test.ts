/**
 * The client SDK reads a node's answers within limits (issue 24): at most `maxAnswerBytes` (1 MiB by default), and the
 * whole answer within `answerTimeoutMs`; past either the call throws AnswerRefused with a stable code, and an
 * oversized answer is not read to its end. Against real servers on loopback that answer too much, or too slowly.
 */
import { type Server, type ServerResponse, createServer } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { AnswerRefused, DEFAULT_MAX_ANSWER_BYTES, createApiClient } from '../../src/client/index.js'

const MiB = 1_048_576
/** What the flooding server would send in all, far beyond any cap. */
const FLOOD_BYTES = 256 * MiB

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeAllConnections()
        }),
    ),
  )
})

async function serve(handle: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => handle(res))
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (typeof address !== 'object' || address === null) throw new Error('no address')
  return `http://127.0.0.1:${address.port}`
}

/** A JSON answer of exactly `bytes` bytes (a `detail` string), with its Content-Length. */
function sized(bytes: number): (res: ServerResponse) => void {
  const body = `{"detail":"${'x'.repeat(bytes - '{"detail":""}'.length)}"}`
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }
}

/**
 * A chunked answer of up to {@link FLOOD_BYTES}, written as fast as the reader takes it; `written` says how far it got
 * before the reader hung up (`closed` resolves then).
 */
function flood(): { handle: (res: ServerResponse) => void; written: () => number; closed: Promise<void> } {
  let written = 0
  let hungUp: () => void = () => undefined
  const closed = new Promise<void>((resolve) => {
    hungUp = resolve
  })
  const chunk = Buffer.alloc(64 * 1024, 'x')
  return {
    written: () => written,
    closed,
    handle: (res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.on('close', hungUp)
      const pump = (): void => {
        while (written < FLOOD_BYTES && !res.destroyed) {
          written += chunk.length
          if (!res.write(chunk)) {
            res.once('drain', pump)
            return
          }
        }
        if (!res.destroyed) res.end()
      }
      pump()
    },
  }
}

async function refusal(call: Promise<unknown>): Promise<AnswerRefused> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AnswerRefused)
  return error as AnswerRefused
}

describe('client answer limits', () => {
  it('reads an answer of exactly the cap; one byte more (declared in Content-Length) is refused unread as too_large', async () => {
    expect(DEFAULT_MAX_ANSWER_BYTES).toBe(MiB)
    const exact = await serve(sized(MiB))
    const { data, response } = await createApiClient({ baseUrl: exact }).GET('/health')
    expect(response.status).toBe(200)
    expect((data as unknown as { detail: string }).detail).toHaveLength(MiB - '{"detail":""}'.length)

    const over = await serve(sized(MiB + 1))
    const refused = await refusal(createApiClient({ baseUrl: over }).GET('/health'))
    expect(refused.code).toBe('too_large')
    expect(refused.status).toBe(200)
    expect(refused.message).toContain(`exceeds ${MiB} bytes (maxAnswerBytes)`)

    // Configurable: a client that allows 2 MiB reads it.
    const { response: allowed } = await createApiClient({ baseUrl: over, maxAnswerBytes: 2 * MiB }).GET('/health')
    expect(allowed.status).toBe(200)
  })

  it('stops reading an undeclared flood at the cap: the server is hung up on long before it is done', async () => {
    const answer = flood()
    const url = await serve(answer.handle)
    const refused = await refusal(createApiClient({ baseUrl: url }).GET('/health'))
    expect(refused).toMatchObject({ code: 'too_large', status: 200 })
    await answer.closed
    // Whatever the socket buffers held beyond the cap, the reader did not take the flood.
    expect(answer.written()).toBeLessThan(FLOOD_BYTES)
  })

  it('gives up on an answer that does not arrive whole within answerTimeoutMs: timeout, with the status when it came', async () => {
    // Headers, a first piece of the body, then nothing.
    const stalls = await serve((res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"status":')
    })
    const midBody = await refusal(createApiClient({ baseUrl: stalls, answerTimeoutMs: 200 }).GET('/health'))
    expect(midBody).toMatchObject({ code: 'timeout', status: 200 })
    expect(midBody.message).toContain('within 200 ms (answerTimeoutMs)')

    // Not even a status line.
    const silent = await serve(() => undefined)
    const noStatus = await refusal(createApiClient({ baseUrl: silent, answerTimeoutMs: 200 }).GET('/health'))
    expect(noStatus).toMatchObject({ code: 'timeout', status: null })
  })

  it('refuses limits that are not positive numbers when the client is made', () => {
    for (const bad of [0, -1, Number.NaN]) {
      expect(() => createApiClient({ baseUrl: 'http://127.0.0.1:9', maxAnswerBytes: bad })).toThrow(/maxAnswerBytes must be a positive number/)
      expect(() => createApiClient({ baseUrl: 'http://127.0.0.1:9', answerTimeoutMs: bad })).toThrow(/answerTimeoutMs must be a positive number/)
    }
  })
})
