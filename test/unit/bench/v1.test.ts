/**
 * The A2A v1.0 cases against stand-in nodes on loopback (the node's own streaming and conformance agent are not
 * there yet): every subscriber's events are counted, and a node without SubscribeToTask or without the agent is
 * reported as skipped with its reason.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { RunningProcess } from '../../../scripts/bench/proc.js'
import { conformanceAgentAbsent, fanOut, reasonOf } from '../../../scripts/bench/v1.js'

/** A node that streams one event per artifact attached to every subscriber, or answers SubscribeToTask with `refusal`. */
function standIn(refusal?: string): Server {
  const streams = new Set<ServerResponse>()
  let seq = 0
  const json = (res: ServerResponse, body: unknown): void => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = ''
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString()
    })
    req.on('end', () => {
      if (req.url === '/a2a/tasks/send') return json(res, { id: 'a2a-1', bernstein_task_id: 'task-1' })
      if (req.url === '/tasks/task-1/claim') return json(res, { id: 'task-1' })
      if (req.url === '/a2a/tasks/a2a-1/artifacts') {
        seq++
        // Two lines of data in one event, and CRLF line ends: still one event each.
        for (const s of streams) s.write(`id: ${seq}\r\ndata: {"n":${seq},\r\ndata: "artifactUpdate":{}}\r\n\r\n: keep-alive\r\n\r\n`)
        return json(res, { id: 'task-1' })
      }
      if (req.url === '/a2a/v1' && (JSON.parse(body) as { method: string }).method === 'SubscribeToTask') {
        if (refusal !== undefined) return json(res, { jsonrpc: '2.0', id: 1, error: { code: -32601, message: refusal } })
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write('id: 0\ndata: {"task":{"id":"a2a-1"}}\n\n')
        streams.add(res)
        req.socket.on('close', () => streams.delete(res))
        return
      }
      res.writeHead(404).end()
    })
  })
}

let server: Server | undefined
afterEach(async () => {
  const s = server
  server = undefined
  if (s === undefined) return
  s.closeAllConnections()
  await new Promise((resolve) => s.close(resolve))
})

async function listening(s: Server): Promise<RunningProcess> {
  server = s
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`
  const nothing = (): number => Number.NaN
  return { name: 'stand-in', pid: process.pid, url, readyMs: 0, readyCpuMs: 0, peakRssMb: nothing, rssMb: nothing, cpuMs: nothing, stop: async () => {} }
}

describe('bench v1: stream fan-out', () => {
  it('counts every event each subscriber receives while artifacts are attached', async () => {
    const proc = await listening(standIn())
    const result = await fanOut(proc, 20, 0.5)
    if (typeof result === 'string') throw new Error(result)
    expect(result.subscribers).toBe(20)
    expect(result.produced).toBeGreaterThan(0)
    // Each report reached all 20 (the subscription's first event, the current task, is not counted).
    expect(result.completeness).toBe(1)
    expect(result.deliveredPerSecond).toBeGreaterThan(0)
  }, 30_000)

  it('reports a node without SubscribeToTask as skipped, with its reason', async () => {
    const proc = await listening(standIn('Method not found: SubscribeToTask'))
    expect(await fanOut(proc, 5, 0.2)).toBe('skipped: streaming absent (SubscribeToTask answered 200 application/json: Method not found: SubscribeToTask)')
  }, 30_000)

  it('takes the JSON-RPC error message as the reason, or the start of the body', () => {
    expect(reasonOf('{"jsonrpc":"2.0","error":{"code":-32601,"message":"nope"}}')).toBe('nope')
    expect(reasonOf('x'.repeat(300))).toBe('x'.repeat(200))
  })
})

/** A node whose SendMessage answers a task in `state`. */
const sending = (state: string): Server =>
  createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { task: { id: 't', status: { state } } } }))
  })

describe('bench v1: the conformance agent probe', () => {
  it('finds the agent when a blocking SendMessage comes back completed', async () => {
    expect(await conformanceAgentAbsent(await listening(sending('TASK_STATE_COMPLETED')), 10_000)).toBeNull()
  })

  it('reports the case as skipped when the task is not completed', async () => {
    expect(await conformanceAgentAbsent(await listening(sending('TASK_STATE_SUBMITTED')), 10_000)).toBe(
      "skipped: conformance agent absent (a blocking SendMessage 'tck-complete-task-probe' answered 200 without a completed task)",
    )
  })
})
