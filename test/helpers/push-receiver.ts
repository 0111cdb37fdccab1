import { type IncomingHttpHeaders, type Server, createServer } from 'node:http'

/** One request a receiver got: its headers and exact body text. */
export interface ReceivedPush {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly path: string
}

export interface PushReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  readonly url: string
  readonly received: readonly ReceivedPush[]
  /** Resolves once `n` requests have arrived (event-driven; the test's own timeout bounds it). */
  waitFor(n: number): Promise<readonly ReceivedPush[]>
  close(): Promise<void>
}

/**
 * A webhook receiver on loopback, a real HTTP server: answers the i-th request with `statuses[i]` (200 once the
 * list is used up) and records every request.
 */
export async function startPushReceiver(statuses: readonly number[] = []): Promise<PushReceiver> {
  const received: ReceivedPush[] = []
  const waiters: { n: number; resolve: () => void }[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const status = statuses[received.length] ?? 200
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '' })
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'try again')
      for (const w of waiters.filter((w) => received.length >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (typeof address !== 'object' || address === null) throw new Error('no address')
  return {
    url: `http://127.0.0.1:${address.port}/hook`,
    received,
    async waitFor(n) {
      if (received.length < n) await new Promise<void>((resolve) => waiters.push({ n, resolve }))
      return received.slice()
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
