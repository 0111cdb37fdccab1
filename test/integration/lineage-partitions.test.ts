/**
 * The partitioned tracker-audit chain over HTTP, on each engine (docs/scaling.md): `GET /lineage/tracker-audit/
 * partitions` lists every partition by name with its length and head, page by page; `?partition=` pages any one of
 * them, each a whole Bernstein chain that verifies offline, together the chain `verify` counts; a ticket is found in
 * its partition; the listing is operator-only, and malformed names (another chain's among them) are refused with
 * the documented 422, changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TRACKER_AUDIT_CHAIN } from '../../src/lineage/audit-trail.js'
import { partitionFor } from '../../src/lineage/partitions.js'
import { verifyTrackerAuditLines } from '../../src/lineage/tracker-audit.js'
import { testEngines } from '../helpers/engines.js'
import { OPERATOR_TOKEN, TEST_AUDIT_KEY, type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

const SHARDS = 4
// 40 tickets leave one of 4 shards empty with probability 4 × (3/4)^40 ≈ 4e-5: every partition is there.
const SENDS = 40

interface Partition {
  readonly name: string
  readonly length: number
  readonly head_hash: string
}

for (const engine of testEngines()) {
  describe(`tracker-audit partitions over HTTP (${engine})`, () => {
    let app: TestApp
    const tickets: string[] = []

    beforeAll(async () => {
      app = await startTestApp({ engine, chainPartitions: { shards: SHARDS } })
      for (let batch = 0; batch < SENDS; batch += 10) {
        const sent = await Promise.all(
          Array.from({ length: 10 }, (_, i) => app.client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: `partitioned ${batch + i}` } })),
        )
        for (const s of sent) tickets.push(s.data!.bernstein_task_id!)
      }
    })
    afterAll(async () => app.close())

    async function allPartitions(prefix: '' | '/api/v1' = '', limit = 1000): Promise<Partition[]> {
      const client = prefix === '' ? app.client : app.clientWith({ token: OPERATOR_TOKEN, prefix })
      const names: Partition[] = []
      let cursor: string | undefined
      for (let pages = 0; pages < 100; pages++) {
        const { data, error } = await client.GET('/lineage/tracker-audit/partitions', { params: { query: { limit, ...(cursor && { cursor }) } } })
        expect(error).toBeUndefined()
        names.push(...data!.partitions)
        if (data!.next_cursor === null) return names
        expect(data!.next_cursor).toBe(data!.partitions.at(-1)?.name)
        cursor = data!.next_cursor
      }
      throw new Error('the partition listing never ended')
    }

    async function pagedLines(partition: string, limit: number): Promise<{ positions: number[]; lines: string[] }> {
      const positions: number[] = []
      const lines: string[] = []
      let cursor: string | undefined
      do {
        const { data, error } = await app.client.GET('/lineage/tracker-audit', { params: { query: { partition, limit, ...(cursor && { cursor }) } } })
        expect(error).toBeUndefined()
        positions.push(...data!.entries.map((e) => e.position))
        lines.push(...data!.entries.map((e) => e.line))
        cursor = data!.next_cursor ?? undefined
      } while (cursor !== undefined)
      return { positions, lines }
    }

    it('lists every partition, the legacy one first; each pages to its whole length and verifies, and together they are the chain', async () => {
      const partitions = await allPartitions()
      expect(partitions.map((p) => p.name)).toEqual([TRACKER_AUDIT_CHAIN, ...[1, 2, 3].map((shard) => `${TRACKER_AUDIT_CHAIN}/default/${shard}`)])
      // Page by page, one partition a page, the listing is the same; so is its /api/v1 mirror.
      expect(await allPartitions('', 1)).toEqual(partitions)
      expect(await allPartitions('/api/v1')).toEqual(partitions)

      const verdict = (await app.client.GET('/lineage/tracker-audit/verify')).data!
      expect(verdict).toMatchObject({ ok: true, failure: null })
      expect(partitions.reduce((sum, p) => sum + p.length, 0)).toBe(verdict.entries)
      expect(verdict.entries).toBe(SENDS)
      for (const partition of partitions) {
        const { positions, lines } = await pagedLines(partition.name, 7)
        expect(positions).toEqual(Array.from({ length: partition.length }, (_, i) => i + 1))
        expect(await verifyTrackerAuditLines(lines, TEST_AUDIT_KEY)).toEqual({ ok: true, value: { entries: partition.length } })
        // The head is the last entry's hash.
        expect(partition.head_hash).toBe(JSON.parse(lines.at(-1)!).entry_hash)
      }
    })

    it('finds a ticket in its partition, and nowhere else; a well-formed partition that does not exist is empty', async () => {
      const ticket = tickets[0]!
      const home = partitionFor(TRACKER_AUDIT_CHAIN, { shards: SHARDS }, 'default', ticket)
      const found = (await app.client.GET('/lineage/tracker-audit', { params: { query: { ticket_id: ticket } } })).data!
      expect(found.entries.map((e) => e.ticket_id)).toEqual([ticket])
      const inHome = (await app.client.GET('/lineage/tracker-audit', { params: { query: { ticket_id: ticket, partition: home } } })).data!
      expect(inHome).toEqual(found)
      const elsewhere = (await allPartitions()).find((p) => p.name !== home)!.name
      const notThere = (await app.client.GET('/lineage/tracker-audit', { params: { query: { ticket_id: ticket, partition: elsewhere } } })).data!
      expect(notThere).toEqual({ entries: [], next_cursor: null })
      const none = await app.client.GET('/lineage/tracker-audit', { params: { query: { partition: `${TRACKER_AUDIT_CHAIN}/nobody/3` } } })
      expect(none.data).toEqual({ entries: [], next_cursor: null })
    })

    it('is operator-only, and refuses malformed partition names with 422 in the documented shape, changing nothing', async () => {
      const before = await allPartitions()
      const issued = await app.tokens.create({ role: 'agent', tenant: 'default', expiresInSeconds: null })
      const agent = app.clientWith({ token: issued.token })
      const denied = await agent.GET('/lineage/tracker-audit/partitions')
      expect(denied.response.status).toBe(403)
      expect(denied.error).toEqual({ detail: 'Agent tokens cannot access operator-only endpoints', required_permission: 'admin:manage' })
      const anonymous = await rawRequest(app.url, { method: 'GET', path: '/lineage/tracker-audit/partitions', token: null })
      expect(anonymous.status).toBe(401)

      // Another chain (the receipt spine) is not a tracker-audit partition; nor are names of the wrong shape.
      const malformed = [
        'spine:a2a-inbound-responses',
        'tracker-audit/default',
        'tracker-audit/default/01',
        'tracker-audit/default/1/2',
        'tracker-audit//1',
        'tracker-audit/é/1',
        'tracker-audit/a b/1',
        'tracker-audit/default/1000',
      ]
      for (const [parameter, path] of [
        ['partition', '/lineage/tracker-audit'],
        ['cursor', '/lineage/tracker-audit/partitions'],
        ['partition', '/api/v1/lineage/tracker-audit'],
      ] as const) {
        for (const name of malformed) {
          const bad = await rawRequest(app.url, { method: 'GET', path: `${path}?${parameter}=${encodeURIComponent(name)}` })
          expect({ name, status: bad.status }).toEqual({ name, status: 422 })
          expect(bad.json).toEqual({
            detail: [{ loc: ['query', parameter], msg: expect.stringContaining('must match pattern'), type: 'string_pattern_mismatch' }],
          })
        }
      }
      const tooLong = await rawRequest(app.url, { method: 'GET', path: `/lineage/tracker-audit?partition=tracker-audit/${'a'.repeat(5000)}/1` })
      expect(tooLong.status).toBe(422)
      expect(await allPartitions()).toEqual(before)
    })
  })
}
