/**
 * The fault suite's storage faults in quick mode (scripts/faults/disk.ts). SQLite: the data directory on a small
 * tmpfs mounted for the test (root only) is filled up while the node runs, and a node is started on it read-only.
 * PostgreSQL (with TEST_DATABASE_URL): the node's role is switched to read-only transactions while it runs. Writes
 * meet 503 with Retry-After and a storage detail (never a 500), readiness goes red and green again by itself, and
 * nothing acknowledged is lost. Where a tmpfs cannot be mounted (not root) the SQLite cases are skipped with the
 * reason, except under CI, where they fail.
 */
import { describe, expect, it } from 'vitest'
import { formatReport } from '../../scripts/faults/common.js'
import { diskFull, mountUnavailableReason, readOnlyStorage } from '../../scripts/faults/disk.js'
import { PG_URL, pgSuiteName } from '../pg/support.js'

const unavailable = process.env['CI'] === 'true' ? null : mountUnavailableReason()
const sqliteTitle = (title: string): string => (unavailable === null ? title : `${title} (skipped: ${unavailable})`)

describe('fault suite: storage faults (quick)', () => {
  it.skipIf(unavailable !== null)(
    sqliteTitle('disk full on SQLite: 503 + Retry-After + storage detail, readiness red then green, nothing lost'),
    async () => {
      const report = await diskFull({ quick: true })
      console.log(formatReport(report))
      expect(report.failures).toEqual([])
    },
    180_000,
  )

  it.skipIf(unavailable !== null)(
    sqliteTitle('a read-only SQLite data directory: refused at start with the reason, nothing lost'),
    async () => {
      const report = await readOnlyStorage('sqlite', { quick: true })
      console.log(formatReport(report))
      expect(report.failures).toEqual([])
    },
    180_000,
  )

  it.skipIf(!PG_URL)(
    pgSuiteName('a read-only PostgreSQL: 503 + Retry-After + storage detail, readiness red then green, nothing lost'),
    async () => {
      const report = await readOnlyStorage('postgres', { quick: true })
      console.log(formatReport(report))
      expect(report.failures).toEqual([])
    },
    180_000,
  )
})
