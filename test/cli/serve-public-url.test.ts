import { type Server, createServer } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkAgentCardConformance } from '../../src/agent-card/index.js'
import { ConfigError, defaultPublicBaseUrl, loadConfig } from '../../src/config.js'
import { type ServerProcess, runCli, spawnServer } from '../helpers/cli.js'

const TOKEN = 'serve-public-url-token-0123456789'

/** What the node advertises: the legacy card's endpoint, and the signed agent card's `url` (checked to verify). */
async function advertised(url: string): Promise<{ endpoint: unknown; cardUrl: unknown; documentationUrl: unknown; verified: boolean }> {
  const legacy = (await (await fetch(`${url}/a2a/agent-card`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as Record<string, unknown>
  const cardText = await (await fetch(`${url}/.well-known/agent.json`)).text()
  const jwks = (await (await fetch(`${url}/.well-known/agent.json/keys`)).json()) as unknown
  const card = JSON.parse(cardText) as Record<string, unknown>
  const report = await checkAgentCardConformance(cardText, jwks, { now: Math.floor(Date.now() / 1000) })
  return { endpoint: legacy['endpoint'], cardUrl: card['url'], documentationUrl: card['documentationUrl'], verified: report.ok }
}

describe('BERNSTEIN_PORT=0: the node advertises the port it bound', () => {
  const dirs: string[] = []
  const servers: ServerProcess[] = []
  const start = async (env: Record<string, string>): Promise<{ server: ServerProcess; dir: string }> => {
    const dir = mkdtempSync(join(tmpdir(), 'serve-url-'))
    dirs.push(dir)
    const server = await spawnServer({ BERNSTEIN_DATA_DIR: dir, BERNSTEIN_AUTH_TOKEN: TOKEN, BERNSTEIN_PUBLIC_BASE_URL: '', ...env })
    servers.push(server)
    return { server, dir }
  }

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('without BERNSTEIN_PUBLIC_BASE_URL: the legacy card endpoint and the signed agent card url name the chosen port', async () => {
    const { server } = await start({ BERNSTEIN_PORT: '0' })
    const port = Number(new URL(server.url).port)
    expect(port).toBeGreaterThan(0)
    expect(server.url).toBe(`http://127.0.0.1:${port}`)
    expect(await advertised(server.url)).toEqual({ endpoint: `${server.url}/a2a`, cardUrl: server.url, documentationUrl: `${server.url}/docs`, verified: true })
  })

  it('bound on 0.0.0.0, it advertises 127.0.0.1 with the chosen port', async () => {
    const { server } = await start({ BERNSTEIN_PORT: '0', BERNSTEIN_HOST: '0.0.0.0' })
    const port = Number(new URL(server.url).port)
    expect(server.url).toBe(`http://0.0.0.0:${port}`)
    const local = `http://127.0.0.1:${port}`
    expect(await advertised(local)).toEqual({ endpoint: `${local}/a2a`, cardUrl: local, documentationUrl: `${local}/docs`, verified: true })
  })

  it('BERNSTEIN_PUBLIC_BASE_URL still wins over the bound address', async () => {
    const { server } = await start({ BERNSTEIN_PORT: '0', BERNSTEIN_PUBLIC_BASE_URL: 'https://node-7.example.org:9443/' })
    expect(await advertised(server.url)).toEqual({
      endpoint: 'https://node-7.example.org:9443/a2a',
      cardUrl: 'https://node-7.example.org:9443',
      documentationUrl: 'https://node-7.example.org:9443/docs',
      verified: true,
    })
  })
})

describe('delegate with BERNSTEIN_PORT=0 and no BERNSTEIN_PUBLIC_BASE_URL', () => {
  let node: ServerProcess
  let dir: string
  let peer: Server
  let peerUrl: string
  let peerRequests = 0

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'serve-url-delegate-'))
    node = await spawnServer({ BERNSTEIN_DATA_DIR: dir, BERNSTEIN_AUTH_TOKEN: TOKEN, BERNSTEIN_PUBLIC_BASE_URL: '' })
    // A peer that only counts: the refusal must come before any request to it.
    peer = createServer((_req, res) => {
      peerRequests++
      res.writeHead(500).end()
    })
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve))
    const address = peer.address()
    peerUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  }, 60_000)

  afterAll(async () => {
    await node?.stop()
    await new Promise((resolve) => peer?.close(resolve))
    rmSync(dir, { recursive: true, force: true })
  })

  it('is refused with the fix, exit 1, and nothing happens: no peer request, no ledger row, the task still open', async () => {
    const task = (await (
      await fetch(`${node.url}/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'write docs', role: 'docs' }),
      })
    ).json()) as Record<string, unknown>
    const before = await (await fetch(`${node.url}/tasks/${task['id'] as string}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()
    const env = { BERNSTEIN_DATA_DIR: dir, BERNSTEIN_PORT: '0', BERNSTEIN_PUBLIC_BASE_URL: '' }
    const fp = `sha256:${'ab'.repeat(32)}`
    const refused = await runCli(
      ['delegate', '--peer', peerUrl, '--peer-token', 'x'.repeat(20), '--task-id', task['id'] as string, '--trusted-fingerprint', fp],
      env,
    )
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toBe(
      'error: BERNSTEIN_PORT=0 leaves the port to the server, so the peer cannot be told where this node is: set BERNSTEIN_PUBLIC_BASE_URL to the URL peers reach this node at\n',
    )
    expect(peerRequests).toBe(0)
    const ledger = await runCli(['--json', 'federation', 'list'], env)
    expect(ledger.code).toBe(0)
    expect(JSON.parse(ledger.stdout)).toEqual({ ok: true, delegations: [] })
    expect(await (await fetch(`${node.url}/tasks/${task['id'] as string}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()).toEqual(before)

    // With the public URL set, the same command gets as far as the peer (which fails it: that is the peer's doing).
    const reached = await runCli(['--json', 'delegate', '--peer', peerUrl, '--task-id', task['id'] as string, '--trusted-fingerprint', fp], {
      ...env,
      BERNSTEIN_PUBLIC_BASE_URL: node.url,
    })
    expect(reached.code).toBe(1)
    expect(peerRequests).toBeGreaterThan(0)
  }, 60_000)
})

describe('loadConfig: BERNSTEIN_PUBLIC_BASE_URL', () => {
  it('is null when unset (derived from the bound address at start) and trimmed of trailing slashes when set', () => {
    expect(loadConfig({}, '/srv').publicBaseUrl).toBeNull()
    expect(loadConfig({ BERNSTEIN_PORT: '0', BERNSTEIN_PUBLIC_BASE_URL: ' ' }, '/srv').publicBaseUrl).toBeNull()
    expect(loadConfig({ BERNSTEIN_PUBLIC_BASE_URL: 'https://peer.example.org/' }, '/srv').publicBaseUrl).toBe('https://peer.example.org')
    expect(() => loadConfig({ BERNSTEIN_PUBLIC_BASE_URL: 'peer.example.org' }, '/srv')).toThrow(
      new ConfigError("BERNSTEIN_PUBLIC_BASE_URL must be an absolute http(s) URL, got 'peer.example.org'"),
    )
  })

  it.each([
    ['loopback', '127.0.0.1', 8052, 'http://127.0.0.1:8052'],
    ['wildcard IPv4', '0.0.0.0', 41234, 'http://127.0.0.1:41234'],
    ['IPv6', '::1', 41234, 'http://[::1]:41234'],
    ['wildcard IPv6', '::', 41234, 'http://[::1]:41234'],
    ['name', 'node-7.internal', 9000, 'http://node-7.internal:9000'],
  ])('defaultPublicBaseUrl: %s', (_name, host, port, want) => {
    expect(defaultPublicBaseUrl(host, port)).toBe(want)
  })
})
