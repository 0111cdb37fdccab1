import { pythonCanonical } from '../canonical/python-json.js'
import { lineageEnvelopePayload } from './envelope.js'
import { type RouteDefinition, route } from '../http/route.js'
import type { LineageService } from './lineage.service.js'
import { chainVerificationBody } from './tracker-verify.js'

export function lineageRoutes(lineage: LineageService): RouteDefinition[] {
  return [
    route('listTrackerAudit', 'get', '/lineage/tracker-audit', async ({ query }) => {
      const page = await lineage.page({
        limit: query.limit ?? 100,
        ...(query.ticket_id !== undefined && { ticketId: query.ticket_id }),
        ...(query.partition !== undefined && { partition: query.partition }),
        ...(query.cursor !== undefined && { cursor: query.cursor }),
      })
      return {
        status: 200,
        body: {
          entries: page.lines.map((l) => ({ position: l.position, entry_hash: l.entryHash, ticket_id: l.ticketId, tracker_name: l.trackerName, line: l.line })),
          next_cursor: page.nextCursor,
        },
      }
    }),
    route('listTrackerAuditPartitions', 'get', '/lineage/tracker-audit/partitions', async ({ query }) => {
      const page = await lineage.partitionPage({ limit: query.limit ?? 100, ...(query.cursor !== undefined && { cursor: query.cursor }) })
      return {
        status: 200,
        body: {
          partitions: page.partitions.map((p) => ({ name: p.chain, length: p.length, head_hash: p.headHash })),
          next_cursor: page.nextCursor,
        },
      }
    }),
    route('verifyTrackerAudit', 'get', '/lineage/tracker-audit/verify', async () => ({ status: 200, body: chainVerificationBody(await lineage.verify()) })),
    route('getLineageEnvelope', 'get', '/lineage/envelope', async ({ query }) => {
      const envelope = await lineage.envelope(query.ticket_id)
      // Python-canonical bytes: floats keep their spelling and ts_ns its precision, so the digest is recomputable.
      return { status: 200, raw: pythonCanonical(lineageEnvelopePayload(envelope)), contentType: 'application/json' }
    }),
  ]
}
