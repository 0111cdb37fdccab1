/**
 * Writes that race on one A2A task: completing its linked task while artifacts are attached to it. Each request
 * either succeeds or gets a documented refusal, never a 500, and the outcome is consistent afterwards: every
 * acknowledged artifact is stored, the task is done, the chain verifies and the completion receipt covers what
 * GET shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyA2AReceipt } from '../../src/receipts/verify-a2a-receipt.js'
import { verifyTrackerAuditLines } from '../../src/lineage/tracker-audit.js'
import { testEngines } from '../helpers/engines.js'
import { TEST_AUDIT_KEY, type TestApp, publishedJwks, rawRequest, startTestApp } from '../helpers/test-app.js'

const ROUNDS = 12
const ARTIFACTS = 5

for (const engine of testEngines()) {
  describe(`racing writes on one A2A task (${engine})`, () => {
    let app: TestApp
    let jwks: unknown
    beforeAll(async () => {
      app = await startTestApp({ engine })
      jwks = await publishedJwks(app.url)
    })
    afterAll(async () => app.close())

    it('complete and attach at once: no 500, every acknowledged write stored, the final receipt covers the body', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const sent = await app.client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: `race ${round}` } })
        const a2aId = sent.data!.id
        const taskId = sent.data!.bernstein_task_id!
        expect((await app.client.POST('/tasks/{task_id}/claim', { params: { path: { task_id: taskId } }, body: { agent_id: 'w' } })).response.status).toBe(200)
        const answers = await Promise.all([
          rawRequest(app.url, { method: 'POST', path: `/tasks/${taskId}/complete`, body: JSON.stringify({ result_summary: `done ${round}` }) }),
          ...Array.from({ length: ARTIFACTS }, (_, i) =>
            rawRequest(app.url, { method: 'POST', path: `/a2a/tasks/${a2aId}/artifacts`, body: JSON.stringify({ name: `a${i}`, data: `d${i}` }) }),
          ),
        ])
        const [complete, ...attached] = answers
        expect(complete!.status, `round ${round}: ${complete!.text}`).toBe(200)
        for (const a of attached) expect(a.status, `round ${round}: ${a.text}`).toBe(201)

        const read = await rawRequest(app.url, { method: 'GET', path: `/a2a/tasks/${a2aId}` })
        const body = read.json as { status: string; artifacts: { name: string }[]; receipt: unknown }
        expect(body.status).toBe('completed')
        expect(body.artifacts.map((a) => a.name).sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'result'])
        expect(read.headers.get('bernstein-attestation')).toBe('completion')
        expect(await verifyA2AReceipt(body.receipt, read.text, { jwks })).toMatchObject({ ok: true })
      }
      const lines: string[] = []
      for await (const line of app.app.services.lineage.exportJsonl()) lines.push(line)
      expect(await verifyTrackerAuditLines(lines, TEST_AUDIT_KEY)).toEqual({ ok: true, value: { entries: lines.length } })
    }, 120_000)

    it('a transition without expected_version racing messages into the task applies: never a 409 it did not ask for', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const sent = await app.client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: `notes ${round}` } })
        const taskId = sent.data!.bernstein_task_id!
        expect((await app.client.POST('/tasks/{task_id}/claim', { params: { path: { task_id: taskId } }, body: { agent_id: 'w' } })).response.status).toBe(200)
        const note = (i: number) =>
          rawRequest(app.url, {
            method: 'POST',
            path: '/a2a/message',
            body: JSON.stringify({ sender: 'peer', recipient: 'bernstein', content: `note ${i}`, task_id: taskId }),
          })
        const [complete, ...notes] = await Promise.all([
          rawRequest(app.url, { method: 'POST', path: `/tasks/${taskId}/complete`, body: JSON.stringify({ result_summary: `done ${round}` }) }),
          note(0),
          note(1),
        ])
        expect(complete!.status, `round ${round}: ${complete!.text}`).toBe(200)
        for (const n of notes) expect(n.status, `round ${round}: ${n.text}`).toBe(201)
        const task = (await app.client.GET('/tasks/{task_id}', { params: { path: { task_id: taskId } } })).data!
        expect(task.status).toBe('done')
        expect(task.progress_log.map((p) => p.message).sort()).toEqual(['[A2A:peer->bernstein] note 0', '[A2A:peer->bernstein] note 1'])
      }
    }, 120_000)
  })
}
