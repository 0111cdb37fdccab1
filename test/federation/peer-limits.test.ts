/**
 * Issue 24: what a peer sends back is read within limits. An answer over `maxAnswerBytes` fails the delegation with
 * a ledger reason without being buffered: the peer here answers an endless body, which only the cap can end, and
 * one that declares a length over the cap.
 */
import { type Server, createServer } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { testEngines } from '../helpers/engines.js'
import { FAST_RETRY, OPEN, federationNodes, localTask } from './nodes.js'

/** A loopback server that answers every request with `write` and counts the requests. */
async function endlessPeer(declareLength: boolean): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0
  const server: Server = createServer((_req, res) => {
    requests++
    res.writeHead(200, { 'content-type': 'application/json', ...(declareLength && { 'content-length': String(64 * 1024 * 1024) }) })
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    // Writes until the client goes away: an endless answer unless the reader stops.
    const pump = (): void => {
      while (!res.destroyed && res.write(chunk)) {
        /* keep writing while the socket takes it */
      }
      if (!res.destroyed) res.once('drain', pump)
    }
    res.on('close', () => res.removeAllListeners('drain'))
    pump()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

for (const engine of testEngines()) {
  describe(`limits on what peers send back (${engine})`, () => {
    const node = federationNodes(engine)
    const peers: { close(): Promise<void> }[] = []
    afterEach(async () => {
      await Promise.all(peers.splice(0).map((p) => p.close()))
    })

    it.each([
      ['an endless answer', false],
      ['an answer declaring 64 MiB', true],
    ])('%s fails the delegation once, unread past the cap, and the ledger says why', async (_name, declareLength) => {
      const peer = await endlessPeer(declareLength)
      peers.push(peer)
      const a = await node('org-a', {}, { retry: { ...FAST_RETRY, maxAnswerBytes: 256 * 1024 } })
      const d = await a.app.services.delegation.delegate({
        tenantId: 'default',
        peerUrl: peer.url,
        peerToken: 'never-sent-0123456789',
        taskId: await localTask(a),
        trustedFingerprints: ['sha256:' + '0'.repeat(64)],
        requirements: OPEN,
      })
      expect(d.status).toBe('failed')
      expect(d.lastError).toContain("the peer's answer exceeds 262144 bytes")
      // Not retried: the same peer would answer the same again.
      expect(peer.requests()).toBe(1)
    })
  })
}
