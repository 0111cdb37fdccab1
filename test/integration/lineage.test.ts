import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parsePythonJson, pythonCanonical } from '../../src/canonical/python-json.js'
import { parseLineageEnvelope } from '../../src/lineage/envelope.js'
import { parseTrackerEntry, verifyTrackerAuditLines } from '../../src/lineage/tracker-audit.js'
import { testEngines } from '../helpers/engines.js'
import { TEST_AUDIT_KEY, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

for (const engine of testEngines()) {
  describe(`lineage over HTTP (${engine})`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await startTestApp({ engine })
    })
    afterAll(async () => app.close())

    async function runLifecycle(): Promise<{ taskId: string; a2aId: string }> {
      const sent = await app.client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: 'audit me' } })
      const a2aId = sent.data!.id
      const taskId = sent.data!.bernstein_task_id!
      await app.client.POST('/tasks/{task_id}/claim', { params: { path: { task_id: taskId } }, body: { agent_id: 'worker-1' } })
      await app.client.POST('/tasks/{task_id}/progress', { params: { path: { task_id: taskId } }, body: { message: 'half way', percent: 50 } })
      await app.client.POST('/a2a/tasks/{a2a_task_id}/artifacts', { params: { path: { a2a_task_id: a2aId } }, body: { name: 'log', data: 'ok' } })
      await app.client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: taskId } }, body: { result_summary: 'done it' } })
      return { taskId, a2aId }
    }

    it('records each lifecycle step of a task as a signed tracker-audit entry', async () => {
      const { taskId } = await runLifecycle()
      const { data, error } = await app.client.GET('/lineage/tracker-audit', { params: { query: { ticket_id: taskId } } })
      expect(error).toBeUndefined()
      const entries = data!.entries.map((e) => {
        const parsed = parseTrackerEntry(parsePythonJson(e.line))
        if (!parsed.ok) throw new Error(parsed.detail)
        return parsed.value
      })
      expect(entries.map((e) => e.action)).toEqual(['transition', 'claim', 'comment', 'attach', 'transition'])
      expect(entries.every((e) => e.tracker_name === 'bernstein' && e.ticket_id === taskId)).toBe(true)
      expect(entries[1]!.actor.session_id).toBe('worker-1')
      expect(entries[4]!.etag_after).toMatch(/^done@/)
    })

    it('verifies the whole chain, and the exported lines verify offline with the operator key', async () => {
      await runLifecycle()
      const verdict = await app.client.GET('/lineage/tracker-audit/verify')
      expect(verdict.data).toMatchObject({ ok: true, failure: null })
      const lines: string[] = []
      for await (const line of app.app.services.lineage.exportJsonl()) lines.push(line)
      expect(verdict.data!.entries).toBe(lines.length)
      expect(await verifyTrackerAuditLines(lines, TEST_AUDIT_KEY)).toEqual({ ok: true, value: { entries: lines.length } })
      const wrongKey = await verifyTrackerAuditLines(lines, Buffer.from('f'.repeat(64)))
      expect(wrongKey).toEqual({ ok: false, code: 'signature_mismatch', detail: 'line 1: signature mismatch (HMAC failed)', entries: 0 })
    })

    it('pages the chain with a cursor and no gaps', async () => {
      await runLifecycle()
      const whole = (await app.client.GET('/lineage/tracker-audit/verify')).data!.entries
      const all: number[] = []
      let cursor: string | undefined
      do {
        const page = await app.client.GET('/lineage/tracker-audit', { params: { query: { limit: 3, ...(cursor && { cursor }) } } })
        all.push(...page.data!.entries.map((e) => e.position))
        cursor = page.data!.next_cursor ?? undefined
      } while (cursor)
      expect(all).toEqual(Array.from({ length: whole }, (_, i) => i + 1))
    })

    it("pages one ticket's entries with a cursor, in chain order, none skipped or repeated", async () => {
      const { taskId } = await runLifecycle()
      const pages: string[][] = []
      let cursor: string | undefined
      do {
        const { data } = await app.client.GET('/lineage/tracker-audit', { params: { query: { ticket_id: taskId, limit: 2, ...(cursor && { cursor }) } } })
        pages.push(data!.entries.map((e) => (parsePythonJson(e.line) as { action: string }).action))
        cursor = data!.next_cursor ?? undefined
      } while (cursor !== undefined)
      expect(pages).toEqual([['transition', 'claim'], ['comment', 'attach'], ['transition']])
    })

    it('serves the lineage_v2 envelope as Python-canonical bytes whose digest recomputes', async () => {
      const { taskId } = await runLifecycle()
      const res = await rawRequest(app.url, { method: 'GET', path: `/lineage/envelope?ticket_id=${taskId}` })
      expect(res.status).toBe(200)
      const payload = parsePythonJson(res.text)
      expect(pythonCanonical(payload)).toBe(res.text)
      const parsed = parseLineageEnvelope(payload)
      if (!parsed.ok) throw new Error(parsed.detail)
      expect(parsed.value.source_issuer).toBe('test-node')
      expect(parsed.value.entries).toHaveLength(5)
      // The digest is SHA-256 over the task's stored chain lines, each with its newline, as exported.
      const exported: string[] = []
      for await (const line of app.app.services.lineage.exportJsonl()) if ((JSON.parse(line) as { ticket_id: string }).ticket_id === taskId) exported.push(line)
      expect(exported).toHaveLength(5)
      expect(parsed.value.chain_digest).toBe('sha256:' + createHash('sha256').update(exported.join('')).digest('hex'))
    })

    it('keeps one linear chain under concurrent writers', async () => {
      const before = (await app.client.GET('/lineage/tracker-audit/verify')).data!.entries
      const sends = await Promise.all(Array.from({ length: 25 }, (_, i) => app.client.POST('/a2a/tasks/send', { body: { sender: 'p', message: `m${i}` } })))
      expect(sends.every((s) => s.response.status === 201)).toBe(true)
      const verdict = await app.client.GET('/lineage/tracker-audit/verify')
      expect(verdict.data).toEqual({ ok: true, entries: before + 25, failure: null })
      const positions = (await app.client.GET('/lineage/tracker-audit', { params: { query: { limit: 500 } } })).data!.entries.map((e) => e.position)
      expect(positions).toEqual(Array.from({ length: before + 25 }, (_, i) => i + 1))
    })

    it('is operator-only and validates its parameters', async () => {
      const issued = await app.tokens.create({ role: 'agent', tenant: 'default', expiresInSeconds: null })
      const agent = app.clientWith({ token: issued.token })
      const denied = await agent.GET('/lineage/tracker-audit/verify')
      expect(denied.response.status).toBe(403)
      expect(denied.error).toEqual({ detail: 'Agent tokens cannot access operator-only endpoints', required_permission: 'admin:manage' })
      const bad = await rawRequest(app.url, { method: 'GET', path: '/lineage/tracker-audit?cursor=abc' })
      expect(bad.status).toBe(422)
      expect(bad.json).toEqual({ detail: [{ loc: ['query', 'cursor'], msg: 'must match pattern "^[0-9]{1,12}$"', type: 'string_pattern_mismatch' }] })
      const missing = await rawRequest(app.url, { method: 'GET', path: '/api/v1/lineage/envelope' })
      expect(missing.status).toBe(422)
      expect(missing.json).toEqual({ detail: [{ loc: ['query', 'ticket_id'], msg: 'Field required', type: 'missing' }] })
    })
  })
}
