/**
 * What Node's HTTP server answers, or would answer, before Express sees a request: every answer is JSON in the
 * contract's error shape, and no connection is dropped unanswered. Raw sockets, since no HTTP client sends these
 * requests (a request without Host, a CONNECT to an origin server, a Transfer-Encoding beside a Content-Length).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { type RunningServer, startServer } from '../../src/server.js'
import { RawConnection, type RawResponse, exchange } from '../helpers/raw-http.js'
import { OPERATOR_TOKEN, type TestApp, startTestApp } from '../helpers/test-app.js'

const AUTH = `Authorization: Bearer ${OPERATOR_TOKEN}\r\n`

function expectJson(res: RawResponse, statusLine: string, body: unknown): void {
  expect(res.statusLine).toBe(statusLine)
  expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  expect(res.json).toEqual(body)
}

/** The app's refusals carry the headers every other answer does. */
function expectAppHeaders(res: RawResponse): void {
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
}

describe('answers Node would make before Express', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startTestApp()
  })
  afterAll(async () => app.close())

  it('an HTTP/1.1 request without Host: 400 in JSON, and the connection closed', async () => {
    const { connection, res } = await exchange(app.url, 'GET /health/live HTTP/1.1\r\n\r\n')
    expectJson(res, 'HTTP/1.1 400 Bad Request', { detail: 'Missing Host header' })
    expect(res.headers.get('connection')).toBe('close')
    expectAppHeaders(res)
    await connection.closed
  })

  it.each([
    ['HTTP/1.1', 'GET /health/live HTTP/1.1\r\nHost: x\r\nHOST: y\r\n\r\n'],
    ['HTTP/1.0', 'GET /health/live HTTP/1.0\r\nhost: x\r\nHost: x\r\n\r\n'],
  ])('two Host lines (%s, RFC 9112 §3.2): 400 in JSON, and the connection closed', async (_, request) => {
    const { connection, res } = await exchange(app.url, request)
    expectJson(res, 'HTTP/1.1 400 Bad Request', { detail: 'More than one Host header' })
    expect(res.headers.get('connection')).toBe('close')
    expectAppHeaders(res)
    await connection.closed
  })

  it('an HTTP/1.0 request without Host is served (HTTP/1.0 has no Host requirement)', async () => {
    const { connection, res } = await exchange(app.url, 'GET /health/live HTTP/1.0\r\n\r\n')
    expect(res.statusLine).toBe('HTTP/1.1 200 OK')
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.json).toEqual({ status: 'alive' })
    await connection.closed
  })

  it('an expectation other than 100-continue: 417 in JSON, nothing done, and the connection still usable', async () => {
    const body = JSON.stringify({ title: 'expected' })
    const request = `POST /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: bogus\r\n\r\n${body}`
    const { connection, res } = await exchange(app.url, request)
    expectJson(res, 'HTTP/1.1 417 Expectation Failed', { detail: 'Only the 100-continue expectation is supported' })
    expectAppHeaders(res)
    // As Node's own 417: the body is discarded and the connection kept alive.
    connection.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n')
    expect((await connection.response()).statusLine).toBe('HTTP/1.1 200 OK')
    connection.destroy()
    expect((await app.client.GET('/tasks')).data?.tasks).toEqual([])
  })

  it('Expect: 100-continue is Node’s default: 100 Continue at once, then the request is served', async () => {
    const body = JSON.stringify({ title: 'continued' })
    const connection = await RawConnection.open(app.url)
    connection.write(
      `POST /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    )
    const interim = await connection.response()
    expect(interim.statusLine).toBe('HTTP/1.1 100 Continue')
    connection.write(body)
    const res = await connection.response()
    expect(res.statusLine).toBe('HTTP/1.1 201 Created')
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.json).toMatchObject({ title: 'continued', status: 'open' })
    expect(await connection.stillOpenAfter(100)).toBe(true)
    connection.destroy()
  })

  it('HTTP/1.0 expectations are ignored, as Node ignores them', async () => {
    const body = JSON.stringify({ title: 'old client' })
    const { connection, res } = await exchange(
      app.url,
      `POST /tasks HTTP/1.0\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: bogus\r\n\r\n${body}`,
    )
    expect(res.statusLine).toBe('HTTP/1.1 201 Created')
    expect(res.json).toMatchObject({ title: 'old client' })
    await connection.closed
  })

  it('Upgrade: websocket is served as an ordinary request (no upgrade listener), the connection kept', async () => {
    const { connection, res } = await exchange(
      app.url,
      'GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    )
    expect(res.statusLine).toBe('HTTP/1.1 200 OK')
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.json).toEqual({ status: 'alive' })
    expect(await connection.stillOpenAfter(100)).toBe(true)
    connection.destroy()
  })

  it('Transfer-Encoding beside Content-Length (RFC 9112 §6.1, request smuggling): 400 in JSON, and closed', async () => {
    const { connection, res } = await exchange(
      app.url,
      `POST /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    )
    expectJson(res, 'HTTP/1.1 400 Bad Request', { detail: 'Bad Request' })
    await connection.closed
  })

  it('oversized headers: 431 in JSON, and closed', async () => {
    const { connection, res } = await exchange(app.url, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(40_000)}\r\n\r\n`)
    expectJson(res, 'HTTP/1.1 431 Request Header Fields Too Large', { detail: 'Request header fields too large' })
    await connection.closed
  })

  it('a target Express cannot parse (a malformed authority): 404 in JSON, as any target naming nothing here, and the connection kept', async () => {
    const { connection, res } = await exchange(app.url, `GET http://[::1/a2a/tasks/x HTTP/1.1\r\nHost: x\r\n${AUTH}\r\n`)
    expectJson(res, 'HTTP/1.1 404 Not Found', { detail: 'Not Found' })
    expectAppHeaders(res)
    connection.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n')
    const next = await connection.response()
    expect(next.statusLine).toBe('HTTP/1.1 200 OK')
    expect(next.json).toEqual({ status: 'alive' })
    connection.destroy()
  })

  describe('CONNECT, answered as any method the contract does not list, then closed', () => {
    it.each([
      [
        'without a token',
        'CONNECT /tasks HTTP/1.1\r\nHost: x\r\n\r\n',
        'HTTP/1.1 401 Unauthorized',
        { detail: 'Missing or invalid Authorization header' },
        undefined,
      ],
      [
        'on a path of the contract',
        `CONNECT /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}\r\n`,
        'HTTP/1.1 405 Method Not Allowed',
        { detail: 'Method Not Allowed' },
        'GET, POST',
      ],
      ['on a public path', 'CONNECT /health/live HTTP/1.1\r\nHost: x\r\n\r\n', 'HTTP/1.1 405 Method Not Allowed', { detail: 'Method Not Allowed' }, 'GET'],
      [
        'under /api/v1',
        `CONNECT /api/v1/tasks/next/backend HTTP/1.1\r\nHost: x\r\n${AUTH}\r\n`,
        'HTTP/1.1 405 Method Not Allowed',
        { detail: 'Method Not Allowed' },
        'GET',
      ],
      ['on an unknown path', `CONNECT /nope HTTP/1.1\r\nHost: x\r\n${AUTH}\r\n`, 'HTTP/1.1 404 Not Found', { detail: 'Not Found' }, undefined],
      [
        'to an authority (a tunnel), with a token',
        `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n${AUTH}\r\n`,
        'HTTP/1.1 404 Not Found',
        { detail: 'Not Found' },
        undefined,
      ],
      [
        'to an authority, without a token',
        'CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n',
        'HTTP/1.1 401 Unauthorized',
        { detail: 'Missing or invalid Authorization header' },
        undefined,
      ],
      ['without Host', `CONNECT /tasks HTTP/1.1\r\n${AUTH}\r\n`, 'HTTP/1.1 400 Bad Request', { detail: 'Missing Host header' }, undefined],
      [
        'with a body',
        `CONNECT /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}Content-Length: 5\r\n\r\nhello`,
        'HTTP/1.1 405 Method Not Allowed',
        { detail: 'Method Not Allowed' },
        'GET, POST',
      ],
      ['in HTTP/1.0', `CONNECT /tasks HTTP/1.0\r\n${AUTH}\r\n`, 'HTTP/1.1 405 Method Not Allowed', { detail: 'Method Not Allowed' }, 'GET, POST'],
    ] as const)('%s', async (_name, request, statusLine, body, allow) => {
      const { connection, res } = await exchange(app.url, request)
      expectJson(res, statusLine, body)
      expectAppHeaders(res)
      expect(res.headers.get('allow')).toBe(allow)
      expect(res.headers.get('connection')).toBe('close')
      await connection.closed
    })

    it('pipelined behind other requests: answered in order, after them, and nothing after it is read', async () => {
      const connection = await RawConnection.open(app.url)
      connection.write(
        `GET /health/live HTTP/1.1\r\nHost: x\r\n\r\nGET /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}\r\nCONNECT /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}\r\nGET /health/live HTTP/1.1\r\nHost: x\r\n\r\n`,
      )
      expect((await connection.response()).json).toEqual({ status: 'alive' })
      expect((await connection.response()).json).toMatchObject({ tasks: expect.any(Array) })
      expectJson(await connection.response(), 'HTTP/1.1 405 Method Not Allowed', { detail: 'Method Not Allowed' })
      await connection.closed
      await expect(connection.response()).rejects.toThrow(/closed without a \(complete\) response; received: ""/)
    })

    it('a client that resets the connection at once does not take the server down', async () => {
      await Promise.all(
        Array.from({ length: 5 }, async () => {
          const connection = await RawConnection.open(app.url)
          connection.write(`CONNECT /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}Content-Length: 100000\r\n\r\n${'a'.repeat(50_000)}`)
          connection.destroy()
        }),
      )
      const { connection, res } = await exchange(app.url, 'GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      expect(res.statusLine).toBe('HTTP/1.1 200 OK')
      await connection.closed
    })
  })
})

describe('the real server (startServer) answers them the same way', () => {
  let server: RunningServer
  let dataDir: string
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-http-server-'))
    const config = loadConfig({ BERNSTEIN_PORT: '0', BERNSTEIN_DATA_DIR: dataDir, BERNSTEIN_AUTH_TOKEN: OPERATOR_TOKEN, BERNSTEIN_FEDERATION_POLL_MS: '0' })
    server = await startServer(config, pino({ level: 'silent' }))
  })
  afterAll(async () => {
    await server.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('without Host, with an unmet expectation, and with CONNECT', async () => {
    const noHost = await exchange(server.url, 'GET /health/live HTTP/1.1\r\n\r\n')
    expectJson(noHost.res, 'HTTP/1.1 400 Bad Request', { detail: 'Missing Host header' })
    await noHost.connection.closed
    const expectation = await exchange(
      server.url,
      `POST /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}Content-Type: application/json\r\nContent-Length: 2\r\nExpect: bogus\r\n\r\n{}`,
    )
    expectJson(expectation.res, 'HTTP/1.1 417 Expectation Failed', { detail: 'Only the 100-continue expectation is supported' })
    expectation.connection.destroy()
    const tunnel = await exchange(server.url, `CONNECT /tasks HTTP/1.1\r\nHost: x\r\n${AUTH}\r\n`)
    expectJson(tunnel.res, 'HTTP/1.1 405 Method Not Allowed', { detail: 'Method Not Allowed' })
    await tunnel.connection.closed
  })
})
