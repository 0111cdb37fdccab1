import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { repoRoot } from './vectors.js'

/** A port the OS just handed out and released (Prism needs a number, not 0). */
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

export interface RunningPrism {
  readonly url: string
  /** Everything Prism printed (for failure messages). */
  output(): string
  stop(): Promise<void>
}

/**
 * Starts `prism <args> openapi.yaml …` on a free loopback port and waits until it answers HTTP (about 5 s).
 * `args` is `['mock']` or `['proxy', '--errors', upstream]` and the like; the document is the repository's.
 */
export async function startPrism(mode: 'mock' | 'proxy', extra: { upstream?: string; flags?: string[] } = {}): Promise<RunningPrism> {
  const port = await freePort()
  const args = [join(repoRoot, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js'), mode, '-h', '127.0.0.1', '-p', String(port), ...(extra.flags ?? []), join(repoRoot, 'openapi.yaml')]
  if (extra.upstream) args.push(extra.upstream)
  const child: ChildProcess = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prism ${mode} exited with ${child.exitCode}:\n${output}`)
    try {
      await fetch(url + '/health')
      break
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGTERM')
        throw new Error(`prism ${mode} did not start within 60 s:\n${output}`)
      }
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  return {
    url,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
