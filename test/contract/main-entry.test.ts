import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { repoRoot, vectorText } from '../helpers/vectors.js'

describe("the package's main entry (dist/index.js, built by the global setup)", () => {
  it('exports the server factory and the offline verifiers, which work on Bernstein-made data', async () => {
    const lib = (await import(pathToFileURL(join(repoRoot, 'dist', 'index.js')).href)) as typeof import('../../src/index.js')
    expect(typeof lib.createApp).toBe('function')
    expect(typeof lib.startServer).toBe('function')
    const signed = lib.parseCardFile(vectorText('capability_cards', 'card_a.signed.json'))
    expect(await lib.verifyCapabilityCard(signed, { now: 1700000100 })).toMatchObject({ ok: true })
    expect(lib.keyFingerprint(signed.card.public_key_pem)).toBe('sha256:10ba682c8ad13513971e8b56881aab8bd702bb807796eca81932c735a94d6e6d')
    const lines = vectorText('tracker_audit', 'source_log.jsonl')
      .split('\n')
      .filter((l) => l !== '')
    expect(await lib.verifyTrackerAuditLines(lines, Buffer.from('0123456789abcdef'.repeat(4)))).toEqual({ ok: true, value: { entries: 5 } })
  })
})
