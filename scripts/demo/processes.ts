/**
 * The demo's processes: `bernstein-a2a serve` nodes on ports of their own choosing, and CLI commands run as
 * separate processes, the way an operator would run them. Every child is tracked so that an error or Ctrl-C
 * stops them all, by their own pid.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** How the CLI is started: the build's bundle when it is current, else the TypeScript sources through tsx. */
export interface CliEntry {
  readonly args: readonly string[]
  /** What to tell the reader about it. */
  readonly label: string
}

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

/** The bundle starts in well under a second, the sources through tsx in several; a bundle older than src/ would run old code. */
export function cliEntry(): CliEntry {
  const bundle = join(ROOT, 'dist', 'bundle', 'bernstein-a2a.mjs')
  if (existsSync(bundle) && statSync(bundle).mtimeMs >= newestMtime(join(ROOT, 'src'))) {
    return { args: [bundle], label: 'node dist/bundle/bernstein-a2a.mjs (the build)' }
  }
  const why = existsSync(bundle) ? 'dist/ is older than src/' : 'no build yet'
  return {
    args: ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts')],
    label: `node --import tsx src/cli/main.ts (${why}; \`npm run build\` makes every step faster)`,
  }
}

/**
 * The environment every child starts from: this one without BERNSTEIN_* and DATABASE_URL, so that a node the
 * reader runs in this shell (or a PostgreSQL URL) cannot leak into the demo's nodes.
 */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || key.startsWith('BERNSTEIN_') || key === 'DATABASE_URL') continue
    env[key] = value
  }
  return env
}

const children = new Set<ChildProcess>()

function track(child: ChildProcess): ChildProcess {
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null) resolveExit()
    else child.once('exit', () => resolveExit())
  })
}

/** SIGTERM (a node drains and exits), then SIGKILL after `graceMs`. */
async function terminate(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const gone = exited(child)
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await gone
  clearTimeout(timer)
}

/** Stops every child still running (nodes and any CLI command in flight). */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((child) => terminate(child)))
}

export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs one CLI command as its own process with `env` (a node's variables) on top of the clean environment. */
export function runCli(entry: CliEntry, args: readonly string[], env: Readonly<Record<string, string>>, timeoutMs = 120_000): Promise<CliRun> {
  return new Promise((resolveRun, reject) => {
    const child = track(spawn(process.execPath, [...entry.args, ...args], { cwd: ROOT, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] }))
    let stdout = ''
    let stderr = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => void terminate(child), timeoutMs)
    child.once('error', reject)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolveRun({ code: code ?? (signal ? 128 : 1), stdout, stderr })
    })
  })
}

export interface RunningNode {
  readonly url: string
  readonly pid: number
  /** The last lines the node wrote (warnings and errors), for a failure report. */
  output(): string
  stop(): Promise<void>
}

const sleep = (ms: number): Promise<void> => new Promise((resolveSleep) => setTimeout(resolveSleep, ms))

/**
 * Starts `serve` with `env` (which sets BERNSTEIN_PORT=0), reads the URL it prints once bound, and resolves when
 * `GET /health/ready` answers 200. Rejects, with what the node wrote, when it exits or is not ready in time.
 */
export async function startNode(entry: CliEntry, env: Readonly<Record<string, string>>, timeoutMs = 90_000): Promise<RunningNode> {
  const child = track(spawn(process.execPath, [...entry.args, 'serve'], { cwd: ROOT, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] }))
  let output = ''
  const keep = (chunk: string): void => {
    output = (output + chunk).slice(-8_000)
  }
  child.stdout?.setEncoding('utf8').on('data', keep)
  child.stderr?.setEncoding('utf8').on('data', keep)
  const node: RunningNode = {
    url: '',
    pid: child.pid ?? -1,
    output: () => output,
    stop: () => terminate(child),
  }
  const deadline = Date.now() + timeoutMs
  const failed = (why: string): Error => new Error(`${why}; the node wrote:\n${output.trim() || '(nothing)'}`)
  let url: string | null = null
  while (url === null) {
    if (child.exitCode !== null || child.signalCode !== null) throw failed(`the node exited (${child.exitCode ?? child.signalCode}) before it listened`)
    if (Date.now() > deadline) {
      await terminate(child)
      throw failed(`the node did not listen within ${timeoutMs / 1000} s`)
    }
    url = /listening on (http:\/\/\S+)/.exec(output)?.[1] ?? null
    if (url === null) await sleep(20)
  }
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw failed(`the node exited (${child.exitCode ?? child.signalCode}) before it was ready`)
    try {
      const response = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2_000) })
      await response.arrayBuffer()
      if (response.status === 200) break
    } catch {
      // Not answering yet.
    }
    if (Date.now() > deadline) {
      await terminate(child)
      throw failed(`${url}/health/ready did not answer 200 within ${timeoutMs / 1000} s`)
    }
    await sleep(50)
  }
  return { ...node, url }
}
