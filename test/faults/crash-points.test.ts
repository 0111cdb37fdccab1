/**
 * The fault suite's crash points in quick mode (scripts/faults/crash.ts; `npm run faults` runs the full mode): a
 * `serve` process is killed with SIGKILL at seeded random moments under a mixed load, restarted on the same storage,
 * and everything it acknowledged must be there, both chains must verify, no task may be in a state the lifecycle
 * cannot reach, and the federation ledger must be consistent. SQLite, and PostgreSQL with TEST_DATABASE_URL.
 */
import { describe, expect, it } from 'vitest'
import { formatReport } from '../../scripts/faults/common.js'
import { crashPoints } from '../../scripts/faults/crash.js'
import { testEngines } from '../helpers/engines.js'

describe.each(testEngines())('fault suite: crash points (quick, %s)', (engine) => {
  it('SIGKILL at random moments under mixed load loses nothing acknowledged; chains verify; states reachable; ledger consistent', async () => {
    const seed = Number(process.env['FAULTS_SEED'] ?? Math.floor(Math.random() * 2 ** 31))
    const report = await crashPoints(engine, { quick: true, seed })
    console.log(formatReport(report))
    expect(report.failures, `seed ${seed} (repeat with FAULTS_SEED=${seed})`).toEqual([])
    // Something was acknowledged and checked in every run.
    expect(report.figures.filter(([label]) => label.startsWith('run ')).length).toBe(2)
  }, 240_000)
})
