import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { AuditKeyError, ensureAuditKey, readAuditKey, verifyTrackerAuditFile } from '../../../src/lineage/tracker-audit.js'
import { vectorPath } from '../../helpers/vectors.js'
import { sourceMeta } from './source-log.js'

const scratch = mkdtempSync(join(tmpdir(), 'audit-key-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe('readAuditKey', () => {
  it('uses the ASCII bytes of the hex text, trailing newline removed', async () => {
    const path = join(scratch, 'source.key')
    writeFileSync(path, `${sourceMeta.hmac_key_ascii}\n`, { mode: 0o600 })
    const key = readAuditKey(path)
    expect(key.toString('ascii')).toBe(sourceMeta.hmac_key_ascii)
    expect(key).toHaveLength(64)
    expect(await verifyTrackerAuditFile(vectorPath('tracker_audit', 'source_log.jsonl'), key)).toMatchObject({
      ok: true,
      value: { entries: 5 },
    })
  })

  it('refuses a key readable by group or others, and a missing or empty file', () => {
    const loose = join(scratch, 'loose.key')
    writeFileSync(loose, 'a'.repeat(64))
    chmodSync(loose, 0o644)
    expect(() => readAuditKey(loose)).toThrow(AuditKeyError)
    expect(() => readAuditKey(loose)).toThrow('has insecure permissions 0644; required 0600 (owner-only).')
    expect(readAuditKey(loose, { enforcePermissions: false }).toString()).toBe('a'.repeat(64))
    expect(() => readAuditKey(join(scratch, 'absent.key'))).toThrow(/No audit HMAC key/)
    const empty = join(scratch, 'empty.key')
    writeFileSync(empty, '\n', { mode: 0o600 })
    expect(() => readAuditKey(empty)).toThrow(/is empty/)
  })
})

describe('ensureAuditKey', () => {
  it('creates 64 hex characters, 0600, in a 0700 directory, and reuses them', () => {
    const path = join(scratch, 'state', 'bernstein', 'audit.key')
    const key = ensureAuditKey(path)
    expect(key.toString('ascii')).toMatch(/^[0-9a-f]{64}$/)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(statSync(join(scratch, 'state', 'bernstein')).mode & 0o777).toBe(0o700)
    expect(readFileSync(path)).toEqual(key)
    expect(ensureAuditKey(path)).toEqual(key)
    expect(ensureAuditKey(join(scratch, 'state', 'bernstein', 'other.key'))).not.toEqual(key)
  })
})
