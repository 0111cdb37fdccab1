import { describe, expect, it } from 'vitest'
import { parsePythonJson } from '../../src/canonical/python-json.js'
import { parseTrackerEntry, verifyTrackerAuditLines } from '../../src/lineage/tracker-audit.js'
import { testEngines } from '../helpers/engines.js'
import { TEST_AUDIT_KEY } from '../helpers/test-app.js'
import { OPEN, cardFingerprint, chainLines, delegate, federationNodes, localTask } from './nodes.js'

/**
 * A delegation carries its task's own entries only (a per-ticket envelope), so wherever the sender's other tasks
 * wrote in between, its prev links skip entries. A strict receiver must still take it: with one busy task beside
 * it, strict mode refused every delegation of this node's own software.
 */
for (const engine of testEngines()) {
  describe(`strict lineage between two nodes (${engine})`, () => {
    const node = federationNodes(engine)

    it('a strict, pinning receiver accepts an envelope whose entries are interleaved with another task’s', async () => {
      const a = await node('org-a')
      const b = await node('org-b', { inboundTrust: { trustedPeerFingerprints: [cardFingerprint(a)], requirements: OPEN, strictLineage: true } })
      const delegated = await localTask(a, 'port the parser')
      const busy = await localTask(a, 'keep the lights on')
      // Chain on A: create(delegated), create(busy), claim(busy), progress(busy), then the delegation's own entries.
      await a.client.POST('/tasks/{task_id}/claim', { params: { path: { task_id: busy } }, body: { agent_id: 'w' } })
      await a.client.POST('/tasks/{task_id}/progress', { params: { path: { task_id: busy } }, body: { message: 'still up', percent: 10 } })
      await a.client.POST('/tasks/{task_id}/claim', { params: { path: { task_id: delegated } }, body: { agent_id: 'w' } })
      const envelope = await a.app.services.lineage.envelope(delegated)
      expect(envelope.entries.length).toBeGreaterThan(1)
      // The carried entries do not link to each other: the busy task's entries sit between them.
      expect(envelope.entries[1]?.prev_entry_hash).not.toBe(envelope.entries[0]?.entry_hash)

      const d = await delegate(a, b, delegated)
      expect(d).toMatchObject({ status: 'accepted', peerIssuer: 'org-b', lastError: null })
      const boundary = (await chainLines(b))
        .map((l) => parseTrackerEntry(parsePythonJson(l)))
        .find((e) => e.ok && e.value.tracker_name === 'a2a-cross-org-boundary')
      expect(boundary?.ok).toBe(true)
      expect(await verifyTrackerAuditLines(await chainLines(b), TEST_AUDIT_KEY)).toMatchObject({ ok: true })
    })
  })
}
