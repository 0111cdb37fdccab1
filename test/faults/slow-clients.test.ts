/**
 * The fault suite's slow clients in quick mode (scripts/faults/slow-clients.ts): a few hundred connections at once,
 * trickling headers, trickling a body, or idle after one request: the server's resident memory and descriptors
 * (from /proc) stay within what its connection cap allows, its own timeouts close every one, and it serves as
 * before afterwards.
 */
import { describe, expect, it } from 'vitest'
import { formatReport } from '../../scripts/faults/common.js'
import { slowClients } from '../../scripts/faults/slow-clients.js'

describe('fault suite: slow clients (quick, serve)', () => {
  it('slow headers, slow bodies and idle keep-alive connections: memory and descriptors bounded, all closed, service as before', async () => {
    const report = await slowClients({ quick: true })
    console.log(formatReport(report))
    expect(report.failures).toEqual([])
  }, 180_000)
})
