/**
 * The fault suite's overload in quick mode (scripts/faults/overload.ts): many more concurrent sends than the node's
 * in-flight bound. It sheds (503 with Retry-After), answers nothing else but 201, keeps everything it acknowledged,
 * and accepts every send again afterwards. SQLite, and PostgreSQL with TEST_DATABASE_URL. Behaviour only: the
 * latencies are printed, never asserted.
 */
import { describe, expect, it } from 'vitest'
import { formatReport } from '../../scripts/faults/common.js'
import { overload } from '../../scripts/faults/overload.js'
import { testEngines } from '../helpers/engines.js'

describe.each(testEngines())('fault suite: overload (quick, %s)', (engine) => {
  it('sheds with 503 + Retry-After, no other answer, nothing acknowledged lost, normal service after', async () => {
    const report = await overload(engine, { quick: true })
    console.log(formatReport(report))
    expect(report.failures).toEqual([])
  }, 180_000)
})
