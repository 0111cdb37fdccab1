/**
 * Systems under test run as their own processes on loopback: spawned here, timed until their readiness URL first
 * answers 200, sampled for memory through /proc, and stopped by their own pid.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

export interface SpawnSpec {
  readonly name: string
  readonly command: string
  readonly args: readonly string[]
  readonly env: Readonly<Record<string, string>>
  readonly port: number
  /** Path answered with 200 once the server can serve (for example `/health/ready`). */
  readonly readyPath: string
  readonly readyTimeoutMs?: number
}

export interface RunningProcess {
  readonly name: string
  readonly pid: number
  readonly url: string
  /** Milliseconds from spawn to the first 200 on the readiness path. */
  readonly readyMs: number
  /** CPU time (user + system) the process had used by then: the start-up cost, whatever else the machine runs. */
  readonly readyCpuMs: number
  /** Peak resident set size so far in MiB (VmHWM), or NaN when /proc is unavailable. */
  peakRssMb(): number
  /** Current resident set size in MiB (VmRSS). */
  rssMb(): number
  /** CPU time (user + system) used so far, in ms. */
  cpuMs(): number
  stop(): Promise<void>
}

/** A free loopback port (bound and released; the small race is acceptable on a dedicated loopback). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

function procStatusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)
    return match ? Number(match[1]) / 1024 : Number.NaN
  } catch {
    return Number.NaN
  }
}

/** User + system CPU time of a process in ms (from /proc/<pid>/stat; clock ticks of 10 ms). */
function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function answers200(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) })
    await response.arrayBuffer()
    return response.status === 200
  } catch {
    return false
  }
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
}

/** Spawns the process and resolves once its readiness path answers 200; rejects (after killing it) on timeout or exit. */
export async function startProcess(spec: SpawnSpec): Promise<RunningProcess> {
  const started = performance.now()
  const child = spawn(spec.command, [...spec.args], {
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.setEncoding('utf8')
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000)
  })
  const pid = child.pid
  if (pid === undefined) throw new Error(`${spec.name}: spawn failed`)
  const url = `http://127.0.0.1:${spec.port}`
  const deadline = started + (spec.readyTimeoutMs ?? 30_000)
  let readyMs = -1
  let readyCpuMs = Number.NaN
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${spec.name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${stderr}`)
    }
    if (await answers200(url + spec.readyPath)) {
      readyMs = performance.now() - started
      readyCpuMs = procCpuMs(pid)
      break
    }
    await sleep(5)
  }
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const gone = exited(child)
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await gone
    clearTimeout(timer)
  }
  if (readyMs < 0) {
    await stop()
    throw new Error(`${spec.name} was not ready within ${spec.readyTimeoutMs ?? 30_000} ms:\n${stderr}`)
  }
  return {
    name: spec.name,
    pid,
    url,
    readyMs,
    readyCpuMs,
    peakRssMb: () => procStatusMb(pid, 'VmHWM'),
    rssMb: () => procStatusMb(pid, 'VmRSS'),
    cpuMs: () => procCpuMs(pid),
    stop,
  }
}
