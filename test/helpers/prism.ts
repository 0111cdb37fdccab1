import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { repoRoot } from './vectors.js'

export interface RunningPrism {
  readonly url: string
  /** Everything Prism printed (for failure messages). */
  output(): string
  stop(): Promise<void>
}

/**
 * Starts `prism <args> openapi.yaml …` on loopback port 0 and waits until it prints the address it bound (about
 * 5 s).
 * `args` is `['mock']` or `['proxy', '--errors', upstream]` and the like; the document is the repository's.
 */
export async function startPrism(mode: 'mock' | 'proxy', extra: { upstream?: string; flags?: string[] } = {}): Promise<RunningPrism> {
  const args = [
    join(repoRoot, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js'),
    mode,
    '-h',
    '127.0.0.1',
    '-p',
    '0',
    ...(extra.flags ?? []),
    join(repoRoot, 'openapi.yaml'),
  ]
  if (extra.upstream) args.push(extra.upstream)
  const child: ChildProcess = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
  return supervise(child, `prism ${mode}`, null)
}

/**
 * `npm run mock -- <args>` as a user runs it (scripts/mock.ts starting Prism), with `env` added; `url` is where it
 * should answer (the test's own choice of port: what it checks is that the option reached Prism). Stopped with
 * SIGTERM to npm, which must reach Prism through the script.
 */
export async function startMockScript(url: string, args: readonly string[], env: Record<string, string> = {}): Promise<RunningPrism> {
  const child = spawn('npm', ['run', '-s', 'mock', '--', ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', ...env },
  })
  return supervise(child, `npm run mock -- ${args.join(' ')}`, url)
}

/**
 * Waits until Prism prints the address it listens on, collecting what the process prints. The answer's `url` is
 * `expectedUrl` when given (requests then fail if Prism listens elsewhere), else the address Prism printed.
 */
async function supervise(child: ChildProcess, label: string, expectedUrl: string | null): Promise<RunningPrism> {
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const listening = /Prism is listening on (http:\/\/\S+)/
  const deadline = Date.now() + 60_000
  while (!listening.test(output)) {
    if (child.exitCode !== null) throw new Error(`${label} exited with ${child.exitCode}:\n${output}`)
    if (Date.now() > deadline) {
      child.kill('SIGTERM')
      throw new Error(`${label} did not start within 60 s:\n${output}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  const url = expectedUrl ?? listening.exec(output)?.[1] ?? ''
  return {
    url,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
