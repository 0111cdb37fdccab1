/**
 * The fault suite's database outages in quick mode (scripts/faults/database-outage.ts): PostgreSQL behind a TCP
 * proxy the test controls is cut (connections reset), blackholed (connections accepted, never answered) and stalled
 * (pooled connections kept open, no byte through) under load: every answer is a success or a clean 503, readiness
 * goes red and green again by itself once the proxy heals, and nothing acknowledged is lost.
 */
import { describe, expect, it } from 'vitest'
import { formatReport } from '../../scripts/faults/common.js'
import { databaseOutage } from '../../scripts/faults/database-outage.js'
import { PG_URL, announceSkip, pgSuiteName } from '../pg/support.js'

announceSkip('test/faults/outage.test.ts')

describe.skipIf(!PG_URL)(pgSuiteName('fault suite: database cut, blackholed and stalled (quick)'), () => {
  it('clean 503s within the deadline, readiness red then green by itself, nothing acknowledged lost', async () => {
    const report = await databaseOutage({ quick: true })
    console.log(formatReport(report))
    expect(report.failures).toEqual([])
    expect(report.figures.map(([label]) => label)).toEqual(expect.arrayContaining(['cut', 'blackhole', 'stall']))
  }, 300_000)
})
