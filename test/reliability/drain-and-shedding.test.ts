/**
 * The real server process on SIGTERM and under load (issue 26, findings 3 and 5), on SQLite and, with
 * TEST_DATABASE_URL, PostgreSQL. No timing assertions: the drain is observed through readiness, the
 * `Connection` header and the exit; shedding through the in-flight gauge and a write held open by its own slow body.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { type ServerProcess, spawnServer } from '../helpers/cli.js'
import { testEngines } from '../helpers/engines.js'
import { RawConnection } from '../helpers/raw-http.js'
import { type Schema, createSchema, waitUntil } from '../pg/support.js'

const TOKEN = 'reliability-operator-token-0123456789'

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** One request through node:http on `agent` (kept alive between requests), so the `Connection` header is seen as sent. */
function request(agent: http.Agent, url: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const { hostname, port } = new URL(url)
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: hostname,
        port,
        method,
        path,
        timeout: 30_000,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          ...(payload !== undefined && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end(payload)
  })
}

describe.each(testEngines())('drain and load shedding (serve, %s)', (engine) => {
  let server: ServerProcess | undefined
  let dataDir: string | undefined
  let schema: Schema | undefined
  const agents: http.Agent[] = []
  const raw: RawConnection[] = []

  afterEach(async () => {
    for (const a of agents.splice(0)) a.destroy()
    for (const c of raw.splice(0)) c.destroy()
    await server?.stop('SIGKILL')
    await schema?.drop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    server = dataDir = schema = undefined
  })

  const baseEnv = async (): Promise<Record<string, string>> => {
    dataDir ??= mkdtempSync(join(tmpdir(), 'bernstein-a2a-rel-'))
    if (engine === 'postgres') schema ??= await createSchema('reliability')
    return {
      BERNSTEIN_DATA_DIR: dataDir,
      BERNSTEIN_AUTH_TOKEN: TOKEN,
      BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN: '0',
      BERNSTEIN_RATE_LIMIT_READ_PER_MIN: '0',
      ...(schema && { DATABASE_URL: schema.url() }),
    }
  }
  const keepAlive = (): http.Agent => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    agents.push(agent)
    return agent
  }

  it('SIGTERM under keep-alive load: readiness red at once, answers close their connections, nothing acknowledged lost, the process exits', async () => {
    server = await spawnServer({ ...(await baseEnv()), BERNSTEIN_SHUTDOWN_GRACE_MS: '3000', BERNSTEIN_SHUTDOWN_TIMEOUT_MS: '8000' })
    const url = server.url
    const acked = new Map<string, string>()
    const afterSigterm: Answer[] = []
    let sigtermAt: number | null = null
    let running = true
    let n = 0
    const client = async (agent: http.Agent): Promise<void> => {
      while (running) {
        const title = `drain ${n++}`
        const sent = performance.now()
        let answer: Answer
        try {
          answer = await request(agent, url, 'POST', '/tasks', { title })
        } catch {
          // Refused once the listener closed (or cut at the shutdown timeout): nothing was acknowledged.
          if (sigtermAt !== null) return
          continue
        }
        if (answer.status === 201) acked.set((JSON.parse(answer.body) as { id: string }).id, title)
        else expect([503]).toContain(answer.status)
        if (sigtermAt !== null && sent > sigtermAt) afterSigterm.push(answer)
      }
    }
    const clients = Array.from({ length: 8 }, () => client(keepAlive()))
    await waitUntil('writes before SIGTERM', async () => acked.size >= 20)

    // A write whose body is still arriving holds its connection: the shutdown timeout bounds the exit anyway.
    const slow = await RawConnection.open(url)
    raw.push(slow)
    slow.write(`POST /tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":`)

    sigtermAt = performance.now()
    server.child.kill('SIGTERM')
    const probe = keepAlive()
    await waitUntil(
      'readiness to go red',
      async () => {
        const r = await request(probe, url, 'GET', '/health/ready')
        return r.status === 503 && JSON.parse(r.body).reason === 'draining: the node is shutting down'
      },
      2_500,
      20,
    )
    const exit = await server.exited
    running = false
    await Promise.all(clients)

    expect(exit).toEqual({ code: 0, signal: null })
    expect(afterSigterm.length).toBeGreaterThan(0)
    for (const answer of afterSigterm) expect(answer.headers['connection']).toBe('close')
    for (const answer of afterSigterm.filter((a) => a.status === 503)) expect(answer.headers['retry-after']).toBe('1')

    // Everything acknowledged is there after a restart on the same database.
    server = await spawnServer(await baseEnv())
    const reader = keepAlive()
    for (const [id, title] of acked) {
      const r = await request(reader, server.url, 'GET', `/tasks/${id}`)
      expect(r.status, id).toBe(200)
      expect(JSON.parse(r.body).title).toBe(title)
    }
  }, 120_000)

  it('writes past BERNSTEIN_MAX_WRITES_IN_FLIGHT: 503 with Retry-After at once, while health and discovery answer', async () => {
    server = await spawnServer({ ...(await baseEnv()), BERNSTEIN_MAX_WRITES_IN_FLIGHT: '1' })
    const url = server.url
    const agent = keepAlive()
    // A write held open by its own body, which the client sends only in part.
    const held = await RawConnection.open(url)
    raw.push(held)
    const body = JSON.stringify({ title: 'held write' })
    held.write(
      `POST /tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    )
    await waitUntil('the held write to count as in flight', async () => {
      const metrics = await request(agent, url, 'GET', '/metrics')
      return /^bernstein_http_writes_in_flight 1$/m.test(metrics.body)
    })

    const shed = await request(agent, url, 'POST', '/tasks', { title: 'shed' })
    expect(shed.status).toBe(503)
    expect(shed.headers['retry-after']).toBe('1')
    expect(JSON.parse(shed.body)).toEqual({ detail: 'Server is overloaded' })
    expect((await request(agent, url, 'GET', '/health/live')).status).toBe(200)
    expect((await request(agent, url, 'GET', '/health/ready')).status).toBe(200)
    expect((await request(agent, url, 'GET', '/.well-known/agent.json')).status).toBe(200)
    expect((await request(agent, url, 'GET', '/tasks')).status).toBe(200)

    // The held write completes, and writes are admitted again.
    held.write(body.slice(5))
    expect((await held.response()).statusLine).toBe('HTTP/1.1 201 Created')
    await waitUntil('the held write to leave', async () => /^bernstein_http_writes_in_flight 0$/m.test((await request(agent, url, 'GET', '/metrics')).body))
    expect((await request(agent, url, 'POST', '/tasks', { title: 'admitted' })).status).toBe(201)
    const listed = (JSON.parse((await request(agent, url, 'GET', '/tasks')).body) as { tasks: { title: string }[] }).tasks
    expect(listed.map((t) => t.title).sort()).toEqual(['admitted', 'held write'])
  }, 120_000)

  it('writes while the event loop runs later than BERNSTEIN_MAX_EVENT_LOOP_DELAY_MS: 503 with Retry-After, reads still served', async () => {
    // Node's monitor samples the loop every 10 ms, so a bound of 1 ms is always exceeded: the node behaves as a loop
    // backlog (SQLite's work queued on it) would make it, without needing the backlog.
    server = await spawnServer({ ...(await baseEnv()), BERNSTEIN_MAX_EVENT_LOOP_DELAY_MS: '1' })
    const url = server.url
    const agent = keepAlive()
    // Until the monitor has a sample, probes may pass.
    await waitUntil('the loop delay to be sampled', async () => (await request(agent, url, 'POST', '/tasks', { title: 'probe' })).status === 503)
    const shed = await request(agent, url, 'POST', '/tasks', { title: 'shed' })
    expect(shed.status).toBe(503)
    expect(shed.headers['retry-after']).toBe('1')
    expect(JSON.parse(shed.body)).toEqual({ detail: 'Server is overloaded' })
    expect((await request(agent, url, 'GET', '/health/live')).status).toBe(200)
    expect((await request(agent, url, 'GET', '/.well-known/agent.json')).status).toBe(200)
    // The shed write changed nothing.
    const listed = JSON.parse((await request(agent, url, 'GET', '/tasks')).body) as { tasks: { title: string }[] }
    expect(listed.tasks.filter((t) => t.title !== 'probe')).toEqual([])
  }, 120_000)

  it('writes while even the fastest write of the last half second took longer than BERNSTEIN_MAX_WRITE_LATENCY_MS: 503 with Retry-After on a connection kept open, then admitted again', async () => {
    // Every write takes more than 1 ms from its body read to its answer: once one was answered within an interval,
    // the node sees a standing queue of writes in the next one, as a backlog would make it, without needing the load.
    // A queue needs writes waiting (an eighth of the in-flight bound, here 2): four at a time, never the bound itself.
    server = await spawnServer({ ...(await baseEnv()), BERNSTEIN_MAX_WRITE_LATENCY_MS: '1', BERNSTEIN_MAX_WRITES_IN_FLIGHT: '16' })
    const url = server.url
    const agent = keepAlive()
    const senders = Array.from({ length: 4 }, () => keepAlive())
    const created: string[] = []
    let shed: Answer | undefined
    let n = 0
    await waitUntil('a write to be shed', async () => {
      const titles = senders.map(() => `probe ${n++}`)
      const answers = await Promise.all(titles.map((title, i) => request(senders[i] as http.Agent, url, 'POST', '/tasks', { title })))
      answers.forEach((answer, i) => {
        if (answer.status === 201) created.push(titles[i] as string)
        if (answer.status === 503) shed = answer
      })
      return shed !== undefined
    })
    expect(shed?.headers['retry-after']).toBe('1')
    expect(JSON.parse(shed?.body ?? '')).toEqual({ detail: 'Server is overloaded' })
    // Its small body had arrived with its headers: the connection stays open for the next request.
    expect(shed?.headers.connection).toBe('keep-alive')
    expect((await request(agent, url, 'GET', '/health/live')).status).toBe(200)
    // An interval without a write answered is no queue: writes are admitted again.
    await waitUntil('a write to be admitted again', async () => {
      const title = `again ${n++}`
      const answer = await request(agent, url, 'POST', '/tasks', { title })
      if (answer.status === 201) created.push(title)
      return answer.status === 201
    })
    // The shed writes changed nothing.
    const listed = JSON.parse((await request(agent, url, 'GET', '/tasks')).body) as { tasks: { title: string }[] }
    expect(listed.tasks.map((t) => t.title).sort()).toEqual([...created].sort())
  }, 120_000)

  it('with BERNSTEIN_MAX_EVENT_LOOP_DELAY_MS=0 the loop delay never sheds', async () => {
    server = await spawnServer({ ...(await baseEnv()), BERNSTEIN_MAX_EVENT_LOOP_DELAY_MS: '0' })
    const agent = keepAlive()
    for (let i = 0; i < 5; i++) expect((await request(agent, server.url, 'POST', '/tasks', { title: `t${i}` })).status).toBe(201)
  }, 120_000)

  // PostgreSQL: a write the database keeps waiting (a lock held by the test's own connection, as an unreachable or
  // saturated database would) is answered 503 with Retry-After at the request deadline instead of waiting for it.
  if (engine === 'postgres') {
    it('a write the database keeps waiting: 503 with Retry-After at BERNSTEIN_REQUEST_DEADLINE_MS, not when the database answers', async () => {
      server = await spawnServer({ ...(await baseEnv()), BERNSTEIN_REQUEST_DEADLINE_MS: '1000', BERNSTEIN_DB_STATEMENT_TIMEOUT_MS: '0' })
      const url = server.url
      const agent = keepAlive()
      expect((await request(agent, url, 'POST', '/tasks', { title: 'before' })).status).toBe(201)
      const blocker = new pg.Client({ connectionString: schema?.url() ?? '' })
      await blocker.connect()
      try {
        await blocker.query('begin')
        // Every partition's head (128 on PostgreSQL by default), those not yet created too: the write waits whichever
        // partition its new task lands in.
        await blocker.query('lock table chain_heads in exclusive mode')
        // Without a deadline this waits as long as the lock is held: longer than the client's own timeout here.
        const answer = await request(agent, url, 'POST', '/tasks', { title: 'waiting' })
        expect(answer.status).toBe(503)
        expect(answer.headers['retry-after']).toBe('1')
        expect((await request(keepAlive(), url, 'GET', '/health/live')).status).toBe(200)
      } finally {
        await blocker.query('commit')
        await blocker.end()
      }
      expect((await request(keepAlive(), url, 'POST', '/tasks', { title: 'after' })).status).toBe(201)
    }, 120_000)

    // `x-no-deadline` (the chain verifications): their work grows with the chain, so the deadline must not cut them.
    // The chain's table is locked by the test's own connection past the deadline: a page of the chain (a read with a
    // deadline) is 503 at the deadline, while the verification waits and answers 200 once the lock is gone.
    it('a chain verification held past BERNSTEIN_REQUEST_DEADLINE_MS answers 200 once it can read; a page read is 503 at the deadline', async () => {
      const DEADLINE_MS = 1000
      server = await spawnServer({ ...(await baseEnv()), BERNSTEIN_REQUEST_DEADLINE_MS: String(DEADLINE_MS), BERNSTEIN_DB_STATEMENT_TIMEOUT_MS: '0' })
      const url = server.url
      for (let i = 0; i < 3; i++) expect((await request(keepAlive(), url, 'POST', '/tasks', { title: `chain ${i}` })).status).toBe(201)
      const blocker = new pg.Client({ connectionString: schema?.url() ?? '' })
      await blocker.connect()
      let verified: Promise<Answer> | undefined
      try {
        await blocker.query('begin')
        await blocker.query('lock table chain_entries in access exclusive mode')
        const page = await request(keepAlive(), url, 'GET', '/lineage/tracker-audit')
        expect(page.status).toBe(503)
        expect(page.headers['retry-after']).toBe('1')
        verified = request(keepAlive(), url, 'GET', '/lineage/tracker-audit/verify')
        // The verification is waiting on the lock (not answered), well past its deadline.
        await waitUntil('the verification to wait on the lock', async () => {
          const waiting = await blocker.query<{ n: string }>("select count(*) as n from pg_locks where relation = 'chain_entries'::regclass and not granted")
          return Number(waiting.rows[0]?.n) > 0
        })
        await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS + 500))
      } finally {
        await blocker.query('commit')
        await blocker.end()
      }
      const answer = await verified
      expect(answer.status, answer.body).toBe(200)
      const verdict = JSON.parse(answer.body) as { ok: boolean; entries: number; failure: unknown }
      expect(verdict).toMatchObject({ ok: true, failure: null })
      expect(verdict.entries).toBeGreaterThanOrEqual(3)
    }, 120_000)
  }
})
