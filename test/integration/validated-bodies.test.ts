/**
 * Bodies the response validator passed are sent again without validating the same bytes twice; anything else is
 * still validated. Checked over HTTP against a real server and a row changed behind its back in the SQLite file.
 */
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { wireRequest } from '../helpers/raw-http.js'
import { OPERATOR_TOKEN, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

const SEND = JSON.stringify({ sender: 'peer-agent@globex', message: 'Fix the flaky login test' })

function withDatabase<T>(app: TestApp, run: (db: SQLite.Database) => T): T {
  const db = new SQLite(join(app.dataDir, 'bernstein-a2a.sqlite'), { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    return run(db)
  } finally {
    db.close()
  }
}

/** A GET as Node receives it: the status, every header line in order (values of the per-response ones blanked), the body. */
async function headerLines(url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; lines: string[]; body: string }> {
  const res = await wireRequest(url, { path, headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, ...headers } })
  const lines: string[] = []
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    const name = res.rawHeaders[i]!
    lines.push(/^(date|x-request-id)$/i.test(name) ? `${name}: …` : `${name}: ${res.rawHeaders[i + 1]}`)
  }
  return { status: res.status, lines, body: res.text }
}

describe('bodies the response validator passed', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startTestApp()
  })
  afterAll(async () => app.close())

  const stats = () => app.app.validatedBodies!.stats

  it('are sent again byte for byte, with the same headers, without being validated again', async () => {
    const empty = stats()
    const sent = await rawRequest(app.url, { method: 'POST', path: '/a2a/tasks/send', body: SEND })
    expect(sent.status).toBe(201)
    // A write's answer is new every time: it is validated and not remembered.
    expect(stats()).toEqual(empty)
    const id = (sent.json as { id: string }).id
    const first = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${id}` })
    const before = stats()
    const second = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${id}` })
    expect(stats().hits).toBe(before.hits + 1)
    expect(stats().entries).toBe(before.entries)
    expect(second.status).toBe(200)
    expect(second.text).toBe(first.text)
    for (const name of ['content-type', 'content-length', 'bernstein-attestation']) expect(second.headers.get(name)).toBe(first.headers.get(name))
    expect(second.headers.get('content-type')).toBe('application/json; charset=utf-8')
    // Every header line, in order, as when the body went through the validator (Express's res.json).
    const hitsBefore = stats().hits
    const other = (await rawRequest(app.url, { method: 'POST', path: '/a2a/tasks/send', body: SEND })).json as { id: string }
    const validatedAgain = await headerLines(app.url, `/a2a/tasks/${other.id}`)
    const remembered = await headerLines(app.url, `/a2a/tasks/${id}`)
    expect(stats().hits).toBe(hitsBefore + 1)
    expect(remembered.body).toBe(first.text)
    expect(remembered.lines).toEqual(
      validatedAgain.lines.map((line) => (/^content-length:/i.test(line) ? `Content-Length: ${Buffer.byteLength(first.text)}` : line)),
    )
    expect(remembered.lines).toContain('Content-Type: application/json; charset=utf-8')
  })

  it('answer conditional requests as Express does: If-None-Match: * is a 304 even without an ETag', async () => {
    const taskPath = async (): Promise<string> =>
      `/a2a/tasks/${((await rawRequest(app.url, { method: 'POST', path: '/a2a/tasks/send', body: SEND })).json as { id: string }).id}`
    // Through the validator (a 304 is not remembered), and for a body remembered by a plain GET just before.
    const validated = await headerLines(app.url, await taskPath(), { 'if-none-match': '*' })
    const path = await taskPath()
    expect((await headerLines(app.url, path)).status).toBe(200)
    const hitsBefore = stats().hits
    const remembered = await headerLines(app.url, path, { 'if-none-match': '*' })
    expect(stats().hits).toBe(hitsBefore + 1)
    expect(validated.status).toBe(304)
    expect(remembered).toEqual(validated)
    // No Last-Modified on the answer: an If-Modified-Since never makes it fresh.
    const since = await headerLines(app.url, path, { 'if-modified-since': new Date(Date.now() + 86_400_000).toUTCString() })
    expect(since.status).toBe(200)
    expect(since.body).toBe((await headerLines(app.url, path)).body)
  })

  it('are remembered per operation: the same bytes from another operation are validated for it', async () => {
    const before = stats()
    const card = await rawRequest(app.url, { method: 'GET', path: '/a2a/agent-card' })
    const agents = await rawRequest(app.url, { method: 'GET', path: '/a2a/agents' })
    const mirrored = await rawRequest(app.url, { method: 'GET', path: '/api/v1/a2a/agents' })
    expect(agents.text).toBe(card.text)
    expect(mirrored.text).toBe(card.text)
    expect(stats()).toMatchObject({ entries: before.entries + 3, hits: before.hits })
  })

  it('never include a body the validator refused: the same fault is refused every time', async () => {
    const sent = await rawRequest(app.url, { method: 'POST', path: '/a2a/tasks/send', body: SEND })
    const id = (sent.json as { id: string }).id
    const good = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${id}` })
    expect(good.status).toBe(200)
    const createdAt = withDatabase(app, (db) => db.prepare('select created_at from a2a_tasks where id = ?').pluck().get(id))
    // A timestamp that reads as NaN: `type: number` refuses it.
    withDatabase(app, (db) => db.prepare("update a2a_tasks set created_at = 'not a number' where id = ?").run(id))
    const before = stats()
    for (let i = 0; i < 2; i++) {
      const refused = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${id}` })
      expect(refused.status).toBe(500)
      expect(refused.json).toEqual({ detail: 'Internal Server Error' })
    }
    expect(stats()).toEqual(before)
    withDatabase(app, (db) => db.prepare('update a2a_tasks set created_at = ? where id = ?').run(createdAt, id))
    const again = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${id}` })
    expect(again.status).toBe(200)
    expect(again.text).toBe(good.text)
    expect(stats().hits).toBe(before.hits + 1)
  })
})

describe('with response validation off', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startTestApp({ validateResponses: false })
  })
  afterAll(async () => app.close())

  it('nothing is remembered and answers are unchanged', async () => {
    expect(app.app.validatedBodies).toBeNull()
    const sent = await rawRequest(app.url, { method: 'POST', path: '/a2a/tasks/send', body: SEND })
    expect(sent.status).toBe(201)
    const id = (sent.json as { id: string }).id
    const read = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${id}` })
    expect(read.status).toBe(200)
    expect(read.json).toMatchObject({ id, sender: 'peer-agent@globex', message: 'Fix the flaky login test' })
  })
})
