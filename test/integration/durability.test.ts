import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type TestEngine, testEngines } from '../helpers/engines.js'
import { type ServerProcess, spawnServer } from '../helpers/cli.js'
import { migratedSchema } from '../helpers/pg-schema.js'
import { httpRequest } from '../helpers/raw-http.js'

const TOKEN = `durability-token-${randomBytes(8).toString('hex')}`

const servers = new Set<ServerProcess>()

/** `bernstein-a2a serve` as an operator starts it, resolved once it prints its URL. */
async function serve(env: Record<string, string>): Promise<ServerProcess> {
  // The federation follower runs, as it does for an operator (the helper turns it off unless told otherwise).
  const served = await spawnServer({ BERNSTEIN_FEDERATION_POLL_MS: '5000', ...env }, { timeoutMs: 30_000 })
  servers.add(served)
  void served.exited.then(() => servers.delete(served))
  // The URL it prints is the address it bound: loopback, and the port the kernel gave it.
  expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/)
  return served
}

interface Storage {
  readonly env: Record<string, string>
  readonly dataDir: string
  /** How many tasks the engine's own storage holds, read behind the server's back. */
  countTasks(): Promise<number>
  cleanup(): Promise<void>
}

/**
 * Where the server keeps its state: a data directory, plus a private PostgreSQL schema for the postgres run. The
 * schema is provisioned here (migrated with its own schema named) because `serve` can only select a schema through
 * the URL's search_path, and its migrator would otherwise see other test schemas' bookkeeping tables.
 */
async function storage(engine: TestEngine): Promise<Storage> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-durability-'))
  if (engine === 'sqlite') {
    return {
      env: { BERNSTEIN_DATA_DIR: dataDir },
      dataDir,
      countTasks: async () => {
        const db = new Database(join(dataDir, 'bernstein-a2a.sqlite'), { readonly: true, fileMustExist: true })
        try {
          return Number((db.prepare('select count(*) as n from tasks').get() as { n: number }).n)
        } finally {
          db.close()
        }
      },
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    }
  }
  const url = process.env['TEST_DATABASE_URL'] ?? ''
  const schema = await migratedSchema(url, dataDir, 'd')
  const separator = url.includes('?') ? '&' : '?'
  return {
    env: { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}` },
    dataDir,
    countTasks: async () => {
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      try {
        return Number((await c.query<{ n: string }>(`select count(*) as n from ${schema}.tasks`)).rows[0]?.n)
      } finally {
        await c.end()
      }
    },
    cleanup: async () => {
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      await c.query(`drop schema if exists ${schema} cascade`)
      await c.end()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

async function call(url: string, method: string, path: string, token: string | null, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await httpRequest(url, { method, path, token, ...(body !== undefined && { body: JSON.stringify(body) }) })
  return { status: res.status, json: res.json }
}

afterEach(() => {
  // Only the servers this file started, each by its own handle.
  for (const served of servers) served.child.kill('SIGKILL')
})

for (const engine of testEngines()) {
  describe(`serve: durability and process behaviour (${engine})`, () => {
    const cleanups: (() => Promise<void>)[] = []
    let store: Storage

    beforeAll(async () => {
      store = await storage(engine)
      cleanups.push(() => store.cleanup())
    })
    afterAll(async () => {
      for (const c of cleanups) await c()
    })

    it('every send acknowledged with 201 before a SIGKILL mid-burst is readable after a restart', { timeout: 120_000 }, async () => {
      const first = await serve({ ...store.env, BERNSTEIN_AUTH_TOKEN: TOKEN })
      interface Ack {
        id: string
        bernstein_task_id: string
        message: string
        sender: string
      }
      const acked: Ack[] = []
      let failures = 0
      let killed = false
      let sequence = 0
      const worker = async (w: number): Promise<void> => {
        while (!killed) {
          const message = `burst ${w}.${sequence++} 😀 ${randomBytes(4).toString('hex')}`
          try {
            const r = await call(first.url, 'POST', '/a2a/tasks/send', TOKEN, { sender: `worker-${w}`, message })
            if (r.status === 201) acked.push(r.json as Ack)
            else throw new Error(`unexpected ${r.status}: ${JSON.stringify(r.json)}`)
          } catch (error) {
            if (!killed) throw error
            failures++
          }
          if (acked.length >= 60 && !killed) {
            killed = true
            first.child.kill('SIGKILL')
          }
        }
      }
      await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)))
      const death = await first.exited
      expect(death.signal).toBe('SIGKILL')
      expect(acked.length).toBeGreaterThanOrEqual(60)
      // Requests were still in flight when the process died: the kill landed inside the burst.
      expect(failures).toBeGreaterThan(0)

      const second = await serve({ ...store.env, BERNSTEIN_AUTH_TOKEN: TOKEN })
      for (const ack of acked) {
        const a2a = await call(second.url, 'GET', `/a2a/tasks/${ack.id}`, TOKEN)
        expect(a2a.status, ack.id).toBe(200)
        expect(a2a.json).toMatchObject({ id: ack.id, bernstein_task_id: ack.bernstein_task_id, sender: ack.sender, message: ack.message, status: 'submitted' })
        const task = await call(second.url, 'GET', `/tasks/${ack.bernstein_task_id}`, TOKEN)
        expect(task.status, ack.bernstein_task_id).toBe(200)
        expect(task.json).toMatchObject({ id: ack.bernstein_task_id, title: `[A2A] ${ack.message}`, description: ack.message, status: 'open', version: 1 })
      }
      // Nothing half-written: every stored task is a complete A2A send (acknowledged or not).
      const list = await call(second.url, 'GET', '/tasks?limit=500', TOKEN)
      const tasks = (list.json as { tasks: { title: string; description: string }[] }).tasks
      expect(tasks.length).toBeGreaterThanOrEqual(acked.length)
      for (const x of tasks) expect(x.title).toBe(`[A2A] ${x.description}`)
      // The rows live in this engine's storage (not in some other default location).
      expect(await store.countTasks()).toBe(tasks.length)
      // And the restarted server keeps working.
      const after = await call(second.url, 'POST', '/a2a/tasks/send', TOKEN, { sender: 'after', message: 'after the crash' })
      expect(after.status).toBe(201)
      expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null })
    })

    it('prints its URL, generates a 0600 operator token file when BERNSTEIN_AUTH_TOKEN is unset, and exits 0 on SIGTERM', { timeout: 120_000 }, async () => {
      const own = await storage(engine)
      cleanups.push(() => own.cleanup())
      const served = await serve(own.env)
      const file = join(own.dataDir, 'auth.token')
      const stat = statSync(file)
      expect(stat.mode & 0o777).toBe(0o600)
      const token = readFileSync(file, 'utf8').trim()
      expect(token.length).toBeGreaterThanOrEqual(32)
      expect(served.output()).not.toContain(token)

      expect((await call(served.url, 'GET', '/health/ready', null)).status).toBe(200)
      expect((await call(served.url, 'GET', '/tasks', token)).status).toBe(200)
      const refused = await call(served.url, 'GET', '/tasks', 'not-the-generated-token')
      expect(refused).toEqual({ status: 401, json: { detail: 'Invalid or expired authentication token' } })
      expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null })

      // A restart reuses the file: same token, same mode, not rewritten.
      const again = await serve(own.env)
      expect(readFileSync(file, 'utf8').trim()).toBe(token)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(statSync(file).mtimeMs).toBe(stat.mtimeMs)
      expect((await call(again.url, 'GET', '/tasks', token)).status).toBe(200)
      expect(await again.stop('SIGTERM')).toEqual({ code: 0, signal: null })
    })

    it('with BERNSTEIN_AUTH_TOKEN set, that token is the operator token and no token file is written', { timeout: 120_000 }, async () => {
      const own = await storage(engine)
      cleanups.push(() => own.cleanup())
      const served = await serve({ ...own.env, BERNSTEIN_AUTH_TOKEN: TOKEN })
      expect((await call(served.url, 'GET', '/tasks', TOKEN)).status).toBe(200)
      expect(() => statSync(join(own.dataDir, 'auth.token'))).toThrow()
      expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null })
    })
  })
}
