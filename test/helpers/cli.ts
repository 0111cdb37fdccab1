import { createServer as createNetServer } from 'node:net'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { bundlePath } from '../../scripts/bundle.js'
import { repoRoot } from './vectors.js'

/** The CLI the tests run as a process: the build's single-file bundle (what `bin/` runs), kept current by test/global-setup.ts. */
export const CLI_ENTRY: readonly string[] = [bundlePath(repoRoot)]

export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the real CLI as a separate process. */
export function runCli(args: readonly string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI_ENTRY, ...args],
      { cwd: repoRoot, env: { ...process.env, BERNSTEIN_LOG_LEVEL: 'warn', ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

/** The environment a spawned process starts from: this process's, without any database or BERNSTEIN_ settings. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('BERNSTEIN_') && k !== 'DATABASE_URL' && k !== 'TEST_DATABASE_URL') env[k] = v
  }
  return env
}

/** Starts the CLI with `args` from the repository root (or `options.cwd`), with `env` on top of a clean environment. */
export function spawnCli(args: readonly string[], env: Record<string, string>, options: { cwd?: string } = {}): ChildProcess {
  return spawn(process.execPath, [...CLI_ENTRY, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { ...cleanEnv(), NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

export interface ServerProcess {
  /** What the server printed in its `listening on` line: the address it bound. */
  readonly url: string
  readonly child: ChildProcess
  /** Everything it printed so far, stdout and stderr. */
  readonly output: () => string
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  alive(): boolean
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/**
 * Starts `bernstein-a2a serve` as its own process and resolves once it prints its URL. It listens on port 0 on
 * loopback (the kernel picks a free port, which the `listening on` line reports), logs warnings only, does not
 * poll federation peers and does not shed writes on event-loop delay or write latency (a shared test machine stalls processes for
 * reasons of its own; the tests of shedding set it), unless `env` says otherwise.
 */
export async function spawnServer(env: Record<string, string>, options: { timeoutMs?: number; cwd?: string } = {}): Promise<ServerProcess> {
  const timeoutMs = options.timeoutMs ?? 60_000
  const child = spawnCli(
    ['serve'],
    {
      BERNSTEIN_HOST: '127.0.0.1',
      BERNSTEIN_PORT: '0',
      BERNSTEIN_LOG_LEVEL: 'warn',
      BERNSTEIN_FEDERATION_POLL_MS: '0',
      BERNSTEIN_MAX_EVENT_LOOP_DELAY_MS: '0',
      BERNSTEIN_MAX_WRITE_LATENCY_MS: '0',
      ...env,
    },
    options.cwd === undefined ? {} : { cwd: options.cwd },
  )
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running behind the failed test.
      child.kill('SIGKILL')
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    const onData = (): void => {
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match?.[1]) {
        clearTimeout(timer)
        child.stdout?.off('data', onData)
        resolve(match[1])
      }
    }
    child.stdout?.on('data', onData)
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${output}`))
    })
  })
  return {
    url,
    child,
    output: () => output,
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}

/**
 * A loopback port free a moment ago (listen on 0, read it, close). Only for tests whose subject is a port named
 * before the process can report one (a port option, a port held before start-up): everything else listens on port 0
 * and reads the address the process prints.
 */
export function namedFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}
