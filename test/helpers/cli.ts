import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { createServer } from 'node:net'
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

/** A free loopback port (listen on 0, read it, close). */
export function freePort(): Promise<number> {
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

export interface SpawnedServer {
  readonly url: string
  readonly process: ChildProcess
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts `bernstein-a2a serve` as its own process and resolves once it prints its URL. */
export async function spawnServer(env: Record<string, string>, timeoutMs = 30_000): Promise<SpawnedServer> {
  const port = await freePort()
  const child = spawn(process.execPath, [...CLI_ENTRY, 'serve'], {
    cwd: repoRoot,
    env: { ...process.env, BERNSTEIN_LOG_LEVEL: 'warn', BERNSTEIN_PORT: String(port), BERNSTEIN_FEDERATION_POLL_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), timeoutMs)
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match?.[1]) {
        clearTimeout(timer)
        resolve(match[1])
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}: ${output}`))
    })
  })
  return {
    url,
    process: child,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode)
        child.once('exit', (code) => resolve(code))
        child.kill(signal)
      }),
  }
}
