import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_ARTIFACTS_PER_TASK, MAX_ARTIFACT_BYTES_PER_TASK } from '../../src/a2a/a2a-task.js'
import { verifyA2AReceipt } from '../../src/receipts/verify-a2a-receipt.js'
import { MAX_PROGRESS_BYTES, MAX_PROGRESS_ENTRIES, MAX_TASK_PAGE_BYTES } from '../../src/tasks/task.js'
import { testEngines } from '../helpers/engines.js'
import { type TestApp, publishedJwks, rawRequest, startTestApp } from '../helpers/test-app.js'

/**
 * The tests that make a thousand requests, or write and verify 16 MiB, get longer than the suite's 30 s: with
 * PostgreSQL on a loaded machine they take that long (the receipt check of a 16 MiB response alone takes about
 * 10 s on a quiet one).
 */
const HEAVY_TEST_TIMEOUT_MS = 120_000

/** Runs `work(0 .. count - 1)` 25 at a time. */
async function inBatches(count: number, work: (i: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < count; start += 25) {
    await Promise.all(Array.from({ length: Math.min(25, count - start) }, (_, k) => work(start + k)))
  }
}

/**
 * What a task accumulates after it is created is bounded (Bernstein bounds only each request, so a task could grow
 * past what one response can carry and then fail every read and transition): progress entries, the artifacts of an
 * A2A task, and the size of one page of a listing.
 */
for (const engine of testEngines()) {
  describe(`growth bounds (${engine})`, () => {
    let app: TestApp
    let jwks: unknown
    beforeAll(async () => {
      app = await startTestApp({ engine })
      jwks = await publishedJwks(app.url)
    })
    afterAll(async () => app.close())

    const post = (path: string, body: unknown) => rawRequest(app.url, { method: 'POST', path, body: JSON.stringify(body) })
    const getJson = async <T>(path: string): Promise<T> => {
      const res = await rawRequest(app.url, { method: 'GET', path })
      expect(res.status, res.text).toBe(200)
      return res.json as T
    }
    type TaskBody = { id: string; status: string; version: number; progress_log: { message: string }[] }
    const sendA2A = async (message: string) => {
      const res = await post('/a2a/tasks/send', { sender: 'peer', message })
      expect(res.status).toBe(201)
      return res.json as { id: string; bernstein_task_id: string }
    }

    it(
      `refuses the progress entry after ${MAX_PROGRESS_ENTRIES} with 413, changing nothing, and the task still finishes`,
      async () => {
        const created = await post('/tasks', { title: 'chatty worker' })
        const id = (created.json as { id: string }).id
        expect((await post(`/tasks/${id}/claim`, { agent_id: 'w' })).status).toBe(200)
        expect((await post(`/tasks/${id}/progress`, { message: 'step 0', percent: 1 })).status).toBe(200)
        // The rest as inbound A2A messages (each one a progress entry), 25 at a time: notes for one task all land.
        await inBatches(MAX_PROGRESS_ENTRIES - 1, async (i) => {
          const res = await post('/a2a/message', { sender: 'peer', recipient: 'bernstein', content: `step ${i + 1}`, task_id: id })
          expect(res.status, res.text).toBe(201)
        })
        const full = await getJson<TaskBody>(`/tasks/${id}`)
        expect(full.progress_log).toHaveLength(MAX_PROGRESS_ENTRIES)
        const refused = await post(`/tasks/${id}/progress`, { message: 'one more', percent: 99 })
        expect(refused.status).toBe(413)
        expect(refused.json).toEqual({ detail: `Task '${id}' already has ${MAX_PROGRESS_ENTRIES} progress entries, the most a task keeps` })
        // An inbound A2A message is a progress entry too, refused alike.
        const note = await post('/a2a/message', { sender: 'peer', recipient: 'bernstein', content: 'hello?', task_id: id })
        expect(note.status).toBe(413)
        expect(await getJson<TaskBody>(`/tasks/${id}`)).toEqual(full)
        const done = await post(`/tasks/${id}/complete`, { result_summary: 'finished anyway' })
        expect(done.status, done.text).toBe(200)
        expect((done.json as TaskBody).status).toBe('done')
      },
      HEAVY_TEST_TIMEOUT_MS,
    )

    it(`refuses a progress message that would take the log past ${MAX_PROGRESS_BYTES} bytes of UTF-8`, async () => {
      const a2a = await sendA2A('talkative peer')
      const taskId = a2a.bernstein_task_id
      // 100 000 three-byte characters: each note is 11 + 300 000 bytes with its `[A2A:p->r] ` prefix.
      const content = '€'.repeat(100_000)
      const noteBytes = Buffer.byteLength(`[A2A:p->r] ${content}`)
      const fitting = Math.floor(MAX_PROGRESS_BYTES / noteBytes)
      for (let i = 0; i < fitting; i++) {
        const res = await post('/a2a/message', { sender: 'p', recipient: 'r', content, task_id: taskId })
        expect(res.status, res.text).toBe(201)
      }
      const before = await getJson<TaskBody>(`/tasks/${taskId}`)
      expect(before.progress_log).toHaveLength(fitting)
      const refused = await post('/a2a/message', { sender: 'p', recipient: 'r', content, task_id: taskId })
      expect(refused.status).toBe(413)
      expect(refused.json).toEqual({ detail: `Task '${taskId}' progress messages would exceed ${MAX_PROGRESS_BYTES} bytes, the most a task keeps` })
      expect(await getJson<TaskBody>(`/tasks/${taskId}`)).toEqual(before)
      // The bound is on bytes, not on entries: a short report still fits.
      expect((await post(`/tasks/${taskId}/claim`, { agent_id: 'w' })).status).toBe(200)
      const short = await post(`/tasks/${taskId}/progress`, { message: 'ok', percent: 50 })
      expect(short.status, short.text).toBe(200)
      expect((short.json as TaskBody).progress_log).toHaveLength(fitting + 1)
    })

    it(
      `refuses the artifact that would take an A2A task past ${MAX_ARTIFACT_BYTES_PER_TASK} bytes; the task still completes, attested`,
      async () => {
        const a2a = await sendA2A('collect large logs')
        const data = 'x'.repeat(1_000_000)
        const fitting = Math.floor(MAX_ARTIFACT_BYTES_PER_TASK / (data.length + 'log'.length))
        for (let i = 0; i < fitting; i++) {
          const res = await post(`/a2a/tasks/${a2a.id}/artifacts`, { name: 'log', data })
          expect(res.status, res.text.slice(0, 200)).toBe(201)
        }
        const refused = await post(`/a2a/tasks/${a2a.id}/artifacts`, { name: 'log', data })
        expect(refused.status).toBe(413)
        expect(refused.json).toEqual({ detail: `A2A task '${a2a.id}' artifacts would exceed ${MAX_ARTIFACT_BYTES_PER_TASK} bytes, the most a task keeps` })
        const read = await getJson<{ artifacts: unknown[] }>(`/a2a/tasks/${a2a.id}`)
        expect(read.artifacts).toHaveLength(fitting)
        // Finishing adds its `result` artifact beyond the bound, so that a full task can still finish.
        const done = await post(`/tasks/${a2a.bernstein_task_id}/complete`, { result_summary: 'r'.repeat(10_000) })
        expect(done.status).toBe(200)
        const res = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${a2a.id}` })
        const body = res.json as { status: string; artifacts: { name: string }[]; receipt: Record<string, unknown> }
        expect(body.status).toBe('completed')
        expect(body.artifacts).toHaveLength(fitting + 1)
        expect(body.artifacts.at(-1)?.name).toBe('result')
        expect(res.headers.get('bernstein-attestation')).toBe('completion')
        expect(await verifyA2AReceipt(body.receipt, res.text, { jwks })).toMatchObject({ ok: true })
      },
      HEAVY_TEST_TIMEOUT_MS,
    )

    it(
      `refuses the artifact after ${MAX_ARTIFACTS_PER_TASK} on one A2A task`,
      async () => {
        const a2a = await sendA2A('many small files')
        await inBatches(MAX_ARTIFACTS_PER_TASK, async (i) => {
          const res = await post(`/a2a/tasks/${a2a.id}/artifacts`, { name: `f${i}` })
          expect(res.status, res.text).toBe(201)
        })
        const refused = await post(`/a2a/tasks/${a2a.id}/artifacts`, { name: 'straw' })
        expect(refused.status).toBe(413)
        expect(refused.json).toEqual({ detail: `A2A task '${a2a.id}' already has ${MAX_ARTIFACTS_PER_TASK} artifacts, the most a task keeps` })
        const read = await getJson<{ artifacts: { name: string }[] }>(`/a2a/tasks/${a2a.id}`)
        expect(read.artifacts).toHaveLength(MAX_ARTIFACTS_PER_TASK)
        expect(new Set(read.artifacts.map((a) => a.name)).size).toBe(MAX_ARTIFACTS_PER_TASK)
      },
      HEAVY_TEST_TIMEOUT_MS,
    )

    it(`ends a page of GET /tasks early at about ${MAX_TASK_PAGE_BYTES} bytes, and the cursor walks every task once`, async () => {
      // Its own tenant, so that the other tests' tasks do not count.
      const tenant = 'bulky'
      const headers = { 'x-tenant-id': tenant }
      const created: string[] = []
      // About 1 MB each: 300 000 bytes of description and 700 000 of metadata.
      const description = '€'.repeat(100_000)
      const metadata = { blob: 'm'.repeat(700_000) }
      const count = Math.ceil(MAX_TASK_PAGE_BYTES / 1_000_000) + 3
      for (let i = 0; i < count; i++) {
        const res = await rawRequest(app.url, { method: 'POST', path: '/tasks', headers, body: JSON.stringify({ title: `bulky ${i}`, description, metadata }) })
        expect(res.status).toBe(201)
        created.push((res.json as { id: string }).id)
      }
      const seen: string[] = []
      const pageSizes: number[] = []
      let cursor: string | null = null
      do {
        const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`
        const res = await rawRequest(app.url, { method: 'GET', path: `/tasks?limit=500${query}`, headers })
        expect(res.status).toBe(200)
        const page = res.json as { tasks: { id: string }[]; next_cursor: string | null }
        expect(page.tasks.length).toBeGreaterThan(0)
        pageSizes.push(page.tasks.length)
        expect(Buffer.byteLength(res.text)).toBeLessThan(MAX_TASK_PAGE_BYTES + 2_000_000)
        seen.push(...page.tasks.map((t) => t.id))
        cursor = page.next_cursor
      } while (cursor !== null)
      expect(pageSizes.length).toBeGreaterThan(1)
      expect(pageSizes[0]).toBeLessThan(count)
      // Each task exactly once.
      expect(new Set(seen).size).toBe(seen.length)
      expect([...seen].sort()).toEqual([...created].sort())
    })
  })
}
