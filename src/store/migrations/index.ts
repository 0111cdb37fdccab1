import type { Migration, MigrationProvider } from 'kysely'
import type { Engine } from '../engine.js'
import { init } from './2026-11-30-001-init.js'
import { apiTokens } from './2026-11-30-002-api-tokens.js'
import { lineage } from './2026-11-30-003-lineage.js'
import { nodeDocuments } from './2026-11-30-004-node-documents.js'
import { federation } from './2026-11-30-005-federation.js'
import { inboundSenderKey } from './2026-11-30-006-inbound-sender-key.js'
import { rowCounts } from './2026-12-02-007-row-counts.js'
import { peerSignatures } from './2026-12-02-008-peer-signatures.js'
import { a2aV1 } from './2026-12-02-010-a2a-v1.js'
import { inboundSigningKey } from './2026-12-02-011-inbound-signing-key.js'
import { chainCheckpoints } from './2026-12-02-013-chain-checkpoints.js'
import { a2aV1StreamEvents } from './2026-12-02-014-a2a-v1-stream-events.js'
import { rateLimitTable } from './2026-12-02-015-rate-limit-table.js'
import { a2aV1Push } from './2026-12-02-012-a2a-v1-push.js'
import { rowCountDeltas } from './2026-12-03-016-row-count-deltas.js'
import { chainMoved } from './2026-12-03-017-chain-moved.js'

/** Static provider: migrations are code, ordered by name, and the same for both engines. */
export function migrationProvider(engine: Engine): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return {
        '2026-11-30-001-init': init(engine),
        '2026-11-30-002-api-tokens': apiTokens,
        '2026-11-30-003-lineage': lineage,
        '2026-11-30-004-node-documents': nodeDocuments,
        '2026-11-30-005-federation': federation,
        '2026-11-30-006-inbound-sender-key': inboundSenderKey(engine),
        '2026-12-02-007-row-counts': rowCounts(engine),
        '2026-12-02-008-peer-signatures': peerSignatures,
        '2026-12-02-010-a2a-v1': a2aV1(engine),
        '2026-12-02-011-inbound-signing-key': inboundSigningKey,
        '2026-12-02-013-chain-checkpoints': chainCheckpoints,
        '2026-12-02-014-a2a-v1-stream-events': a2aV1StreamEvents,
        '2026-12-02-015-rate-limit-table': rateLimitTable(engine),
        '2026-12-02-012-a2a-v1-push': a2aV1Push(engine),
        '2026-12-03-016-row-count-deltas': rowCountDeltas(engine),
        '2026-12-03-017-chain-moved': chainMoved(engine),
      }
    },
  }
}
