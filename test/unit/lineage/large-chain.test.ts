import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { afterAll, describe, expect, it } from 'vitest'
import { GENESIS_PREV_HASH, buildTrackerEntry, trackerEntryLine, verifyTrackerAuditFile } from '../../../src/lineage/tracker-audit.js'
import { sourceKey } from './source-log.js'

const scratch = mkdtempSync(join(tmpdir(), 'large-chain-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const COUNT = 100_000

async function writeChain(path: string): Promise<void> {
  const out = createWriteStream(path)
  let prev = GENESIS_PREV_HASH
  for (let i = 0; i < COUNT; i++) {
    const entry = buildTrackerEntry(
      {
        trackerName: i % 2 === 0 ? 'jira' : 'linear',
        ticketId: `PROJ-${i % 97}`,
        action: (['claim', 'comment', 'transition', 'attach', 'fail'] as const)[i % 5] ?? 'claim',
        actor: { session_id: `sess-${i % 7}`, role: 'backend', model: 'claude-sonnet-4' },
        inputPrompt: `prompt ${i} — läuft`,
        outputBlob: `blob ${i}`,
        costUsd: i / 1000,
        tokensIn: i,
        tokensOut: 2 ** 40 + i,
      },
      { prevEntryHash: prev, key: sourceKey, id: i.toString(16).padStart(32, '0'), tsNs: 1_700_000_000_000_000_000n + BigInt(i) },
    )
    prev = entry.entry_hash
    if (!out.write(trackerEntryLine(entry))) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
}

describe('a 100 000-entry chain', () => {
  it('verifies by streaming, holding only the previous hash', async () => {
    const path = join(scratch, 'chain.jsonl')
    await writeChain(path)
    const size = statSync(path).size
    expect(size).toBeGreaterThan(60 * 1024 * 1024)
    const used = (): number => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
    const before = used()
    const result = await verifyTrackerAuditFile(path, sourceKey)
    expect(result).toEqual({ ok: true, value: { entries: COUNT } })
    // Holding the file (as bytes or text) would need more than its size; streaming needs a few chunks plus
    // short-lived garbage.
    expect(used() - before).toBeLessThan(size)
  }, 60_000)
})
