import type { TrackerEntryInput } from '../../src/lineage/tracker-audit.js'

/** A tracker-audit entry's input for a ticket, told apart by `n` (its prompt, output and idempotency key). */
export const trackerInput = (ticketId: string, n: number): TrackerEntryInput => ({
  trackerName: 'bernstein',
  ticketId,
  action: 'transition',
  actor: { session_id: 'test', role: 'worker', model: 'none' },
  inputPrompt: `prompt ${n}`,
  outputBlob: `output ${n}`,
  idempotencyKey: `${ticketId}@${n}`,
})
