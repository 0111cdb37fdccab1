import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { spawnServer } from '../helpers/cli.js'
import { expectOneRun } from '../helpers/ticket-runs.js'

const TOKEN = 'ticket-ids-token-0123456789'
const SENDS = 20

/**
 * The server as `serve` builds it draws ticket ids from one ascending run (ticketRuns in src/runtime.ts, through
 * homeIds): what keeps a group commit's inserts on the same index leaves (docs/performance.md, "Ticket ids in runs").
 */
describe('ticket ids of a running server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ticket-ids-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('climb in the order the server drew them (task, then its A2A task), by steps of 1 to 2^16, and never repeat', async () => {
    const server = await spawnServer({ BERNSTEIN_DATA_DIR: dir, BERNSTEIN_AUTH_TOKEN: TOKEN })
    const drawn: string[] = []
    try {
      const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
      for (let i = 0; i < SENDS; i++) {
        const response = await fetch(`${server.url}/a2a/tasks/send`, { method: 'POST', headers, body: JSON.stringify({ sender: 'p', message: `m${i}` }) })
        expect(response.status).toBe(201)
        const sent = (await response.json()) as { id: string; bernstein_task_id: string }
        drawn.push(sent.bernstein_task_id, sent.id)
      }
    } finally {
      await server.stop()
    }
    // A run restarts only when it would leave the 48 bits: 40 draws climb about 2^20, a chance of about 2^-28.
    expectOneRun(drawn)
  }, 120_000)
})
