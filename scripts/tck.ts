/**
 * `npx tsx scripts/tck.ts --tck <a2a-tck checkout> [--python <python>] [--report <file>] [-- <pytest args>]`
 *
 * Runs the A2A conformance kit (a2aproject/a2a-tck, branch `1.0-dev`, the v1.0 suite) against this node, from a
 * scratch folder: a fresh data directory, a `serve --a2a-conformance-agent` process from these sources on a loopback
 * port, and in front of it a loopback proxy that adds the node's operator token to every request (the kit sends no
 * credentials; the node keeps authentication on). The node's public URL is the proxy's, so the agent card the kit
 * discovers names the proxy. The kit is run as
 * `python -m pytest tests/compatibility --sut-host=<proxy> --compatibility-report=<report>` in its checkout; the
 * exit code is pytest's. See docs/a2a-v1.md, "Conformance kit".
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { type IncomingMessage, type Server, type ServerResponse, createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { repoRoot } from '../test/helpers/vectors.js'

interface Options {
  readonly tck: string
  readonly python: string
  readonly report: string
  readonly pytestArgs: readonly string[]
}

function parseArgs(argv: readonly string[]): Options {
  const end = argv.indexOf('--')
  const own = end === -1 ? argv : argv.slice(0, end)
  const value = (name: string): string | undefined => {
    const i = own.indexOf(name)
    return i >= 0 ? own[i + 1] : undefined
  }
  const tck = value('--tck') ?? process.env['A2A_TCK_DIR']
  if (tck === undefined) throw new Error('--tck <a2a-tck checkout> (or A2A_TCK_DIR) is required')
  return {
    tck: resolve(tck),
    python: value('--python') ?? process.env['A2A_TCK_PYTHON'] ?? 'python3',
    report: resolve(value('--report') ?? 'tck-report.json'),
    pytestArgs: end === -1 ? [] : argv.slice(end + 1),
  }
}

/**
 * A loopback proxy to the node (`target()`, known once it listens) that adds `Authorization: Bearer <token>` where
 * the request has none; bodies and SSE are streamed through.
 */
function authProxy(target: () => URL | null, token: string): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const to = target()
    if (to === null) {
      res.writeHead(503).end()
      return
    }
    const headers = { ...req.headers, host: to.host }
    if (headers.authorization === undefined) headers.authorization = `Bearer ${token}`
    const upstream = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
    req.pipe(upstream)
  })
}

function listen(server: Server): Promise<string> {
  return new Promise((resolveUrl) => server.listen(0, '127.0.0.1', () => resolveUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)))
}

/** Starts the node from these sources and resolves with the URL its `listening on` line reports. */
function startNode(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--a2a-conformance-agent'], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolveStart, reject) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match?.[1]) resolveStart({ child, url: match[1] })
    })
    child.on('exit', (code) => reject(new Error(`the node exited (${code}) before listening:\n${out}`)))
  })
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2))
  const scratch = mkdtempSync(join(tmpdir(), 'bernstein-tck-'))
  const token = randomBytes(24).toString('hex')
  // The proxy listens first: its URL is the node's public URL (the card's interfaces), set before the node starts.
  let nodeUrl: URL | null = null
  const proxy = authProxy(() => nodeUrl, token)
  const proxyUrl = await listen(proxy)
  let node: ChildProcess | null = null
  try {
    const started = await startNode({
      BERNSTEIN_DATA_DIR: join(scratch, 'data'),
      BERNSTEIN_HOST: '127.0.0.1',
      BERNSTEIN_PORT: '0',
      BERNSTEIN_AUTH_TOKEN: token,
      BERNSTEIN_PUBLIC_BASE_URL: proxyUrl,
      BERNSTEIN_LOG_LEVEL: 'warn',
      BERNSTEIN_FEDERATION_POLL_MS: '0',
      // A shared or loaded machine stalls the event loop for reasons of its own; shedding would answer the kit 503.
      BERNSTEIN_MAX_EVENT_LOOP_DELAY_MS: '0',
      // The kit's webhook receiver listens on this machine (http://localhost:<port>/webhook): the operator's
      // allow-list for push targets names it, as a deployment would name an internal receiver.
      BERNSTEIN_A2A_PUSH_ALLOWED_TARGETS: 'localhost,127.0.0.1,::1',
      BERNSTEIN_A2A_PUSH_POLL_MS: '100',
    })
    node = started.child
    nodeUrl = new URL(started.url)
    process.stdout.write(`node ${started.url}, proxy (adds the token) ${proxyUrl}, data ${scratch}\n`)
    const args = ['-m', 'pytest', 'tests/compatibility', `--sut-host=${proxyUrl}`, `--compatibility-report=${options.report}`, '-p', 'no:cacheprovider']
    const pytest = spawn(options.python, [...args, ...options.pytestArgs], { cwd: options.tck, stdio: 'inherit' })
    return await new Promise<number>((done) => pytest.on('exit', (code) => done(code ?? 1)))
  } finally {
    node?.kill('SIGTERM')
    proxy.close()
    rmSync(scratch, { recursive: true, force: true })
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  },
)
