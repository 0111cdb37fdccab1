/**
 * Slow clients (SQLite: connections do not depend on the engine): many connections at once, each slow in its own
 * way: header lines trickled one every few hundred ms, a body trickled a byte at a time behind a valid token, and
 * kept-alive connections left idle after one request. The server's resident memory and open descriptors (read from
 * /proc) must stay bounded while they are held (by its connection cap: past it, connections are closed unanswered),
 * every one of them must be closed by the server's own timeouts, and afterwards it must serve as before.
 *
 * @module
 */
import { type Socket, connect } from 'node:net'
import type { ServerProcess } from '../../test/helpers/cli.js'
import { OPERATOR, type ScenarioOptions, type ScenarioReport, call, check, createStorage, eventually, newReport, processUsage, serve, sleep } from './common.js'

/** The connection cap in this scenario: below the number of attackers, so that the cap is what bounds the server. */
const MAX_CONNECTIONS = 200

/**
 * What one held connection may cost at most, over the idle baseline: a socket, a parser, Node's buffers. Generous
 * (a few kB is typical); what it bounds is growth without limit (the finding: 1 762 connections held 217 MB).
 */
const RSS_PER_CONNECTION_KB = 256
const RSS_SLACK_KB = 64 * 1024
const FD_SLACK = 32

export async function slowClients(options: ScenarioOptions): Promise<ScenarioReport> {
  const report = newReport('slow clients: slow headers, slow bodies, idle keep-alive; memory and descriptors bounded', 'sqlite')
  const attackers = options.quick ? 300 : 2_000
  const storage = await createStorage('sqlite')
  let server: ServerProcess | undefined
  const sockets: Socket[] = []
  const timers: NodeJS.Timeout[] = []
  try {
    server = await serve(storage, {
      BERNSTEIN_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      BERNSTEIN_HTTP_HEADERS_TIMEOUT_MS: options.quick ? '3000' : '10000',
      BERNSTEIN_HTTP_REQUEST_TIMEOUT_MS: options.quick ? '5000' : '30000',
      BERNSTEIN_HTTP_KEEP_ALIVE_TIMEOUT_MS: options.quick ? '3000' : '5000',
    })
    const url = new URL(server.url)
    const pid = server.child.pid as number
    // Warm up the paths the attack takes, then read the baseline.
    for (let i = 0; i < 5; i++) await call(server.url, 'GET', '/health/live')
    await sleep(500)
    const baseline = processUsage(pid)
    report.figures.push(['baseline', `${Math.round(baseline.rssKb / 1024)} MB resident, ${baseline.fds} descriptors`])

    const connectOne = (kind: number): Promise<void> =>
      new Promise((resolve) => {
        const socket = connect(Number(url.port), url.hostname, () => {
          // None of them ever reads what the server sends: an answer and the server's FIN stay unread, and the
          // client never closes its side, so only the server can end the connection.
          socket.pause()
          if (kind === 0) {
            // Slow headers: a line now and then, never the blank line.
            socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n')
            let n = 0
            timers.push(setInterval(() => socket.writable && socket.write(`X-Slow-${n++}: y\r\n`), 400))
          } else if (kind === 1) {
            // Slow body behind a valid token: admitted, then a byte at a time.
            socket.write(
              `POST /tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${OPERATOR}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"title":"`,
            )
            timers.push(setInterval(() => socket.writable && socket.write('a'), 400))
          } else {
            // One request, then idle on the kept-alive connection.
            socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n')
          }
          resolve()
        })
        socket.on('error', () => resolve())
        sockets.push(socket)
      })
    for (let i = 0; i < attackers; i++) {
      await connectOne(i % 3)
      if (i % 50 === 49) await sleep(10)
    }
    // Hold them, sampling the server.
    let peak = processUsage(pid)
    const holdUntil = performance.now() + (options.quick ? 2_000 : 20_000)
    while (performance.now() < holdUntil) {
      const now = processUsage(pid)
      peak = { rssKb: Math.max(peak.rssKb, now.rssKb), fds: Math.max(peak.fds, now.fds) }
      await sleep(100)
    }
    report.figures.push([
      'held',
      `${attackers} slow connections opened (a third each: slow headers, slow body, idle keep-alive), cap ${MAX_CONNECTIONS}; ` +
        `peak ${Math.round(peak.rssKb / 1024)} MB resident (+${Math.round((peak.rssKb - baseline.rssKb) / 1024)} MB), ${peak.fds} descriptors (+${peak.fds - baseline.fds})`,
    ])
    check(report, peak.fds <= baseline.fds + MAX_CONNECTIONS + FD_SLACK, `descriptors reached ${peak.fds}: more than the cap allows over ${baseline.fds}`)
    const rssBound = baseline.rssKb + MAX_CONNECTIONS * RSS_PER_CONNECTION_KB + RSS_SLACK_KB
    check(report, peak.rssKb <= rssBound, `resident memory reached ${peak.rssKb} kB, over the bound ${rssBound} kB`)

    // The server's own timeouts close every connection it kept, however slowly the clients go on, and whether or not
    // they read: its descriptors come back to the baseline.
    const drainS = options.quick ? 30 : 120
    const drained = await eventually(async () => processUsage(pid).fds <= baseline.fds + FD_SLACK, drainS * 1000, 200)
    const after = processUsage(pid)
    report.figures.push(['after the timeouts', `${after.fds} descriptors, ${Math.round(after.rssKb / 1024)} MB resident`])
    check(
      report,
      drained,
      `descriptors did not come back within ${drainS} s: ${after.fds} against ${baseline.fds} before (the server kept connections its timeouts had answered)`,
    )
    for (const t of timers.splice(0)) clearInterval(t)
    const live = await call(server.url, 'GET', '/health/live')
    const write = await call(server.url, 'POST', '/tasks', { title: 'after the slow clients' })
    check(report, live.status === 200 && write.status === 201, `after the slow clients: /health/live ${live.status}, a write ${write.status}`)
    check(report, server.alive(), 'the server process died')
  } finally {
    for (const t of timers) clearInterval(t)
    for (const s of sockets) s.destroy()
    await server?.stop('SIGKILL')
    await storage.cleanup()
  }
  return report
}
