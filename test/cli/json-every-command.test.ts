/**
 * Issue 28: every command of the CLI, with --json, prints exactly one JSON object on stdout (never an array, never a
 * second line, never text), on success and on failure, and its `ok` is true exactly when the exit code is 0. Each
 * command runs once on a path that succeeds and once on a path that fails; the last test reads the command tree
 * from the CLI's own help and fails for a command that has no case here.
 *
 * The shape of the output does not depend on the database engine: this file runs on SQLite only (the engines are
 * covered by the command suites, token.test.ts and db.test.ts among them).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCardFile } from '../../src/cards/index.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { type CliRun, runCli, spawnCli } from '../helpers/cli.js'
import { vectorBytes, vectorPath } from '../helpers/vectors.js'
import { type OrgPair, TOKEN_A, TOKEN_B, fetchJson, startOrgPair } from './org-pair.js'

const dir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-json-every-'))
let pairDir = 0
/** A fresh, empty data directory (nothing created in it yet). */
const freshDataDir = (): string => join(dir, `data-${++pairDir}`)

/** Which command (its words, `token list`) ran on a path that succeeded and on one that failed. */
const covered = new Map<string, Set<'success' | 'error'>>()

/** The whole of stdout parsed: exactly one line holding one JSON object. */
function oneObject(run: CliRun, what: string): Record<string, unknown> {
  expect(run.stdout.endsWith('\n'), `${what}: ${run.stdout}${run.stderr}`).toBe(true)
  expect(run.stdout.slice(0, -1).includes('\n'), `${what}: more than one line: ${run.stdout}`).toBe(false)
  const value: unknown = JSON.parse(run.stdout)
  expect(typeof value === 'object' && value !== null && !Array.isArray(value), `${what}: not an object: ${run.stdout}`).toBe(true)
  return value as Record<string, unknown>
}

/**
 * Runs `--json <command> <args>` and checks the one object: `ok` is a boolean, true exactly when the exit code is 0,
 * and the exit code is `code`. A failure says why: `error`, or a verdict's `failures`, `checks` or `failure`.
 */
async function json(command: string, args: readonly string[], env: Record<string, string>, code: number): Promise<Record<string, unknown>> {
  const what = `--json ${command} ${args.join(' ')}`.trim()
  const run = await runCli(['--json', ...(command === '' ? [] : command.split(' ')), ...args], { DATABASE_URL: '', ...env })
  const value = oneObject(run, what)
  expect({ what, code: run.code, ok: value['ok'] }).toEqual({ what, code, ok: code === 0 })
  if (code !== 0) {
    const says =
      typeof value['error'] === 'string' || Array.isArray(value['failures']) || Array.isArray(value['checks']) || typeof value['failure'] === 'string'
    expect(says, `${what}: a failure says why: ${run.stdout}`).toBe(true)
  }
  const kinds = covered.get(command) ?? new Set()
  kinds.add(code === 0 ? 'success' : 'error')
  covered.set(command, kinds)
  return value
}

let pair: OrgPair
let envA: Record<string, string>
const offline = { BERNSTEIN_DATA_DIR: join(dir, 'offline') }

beforeAll(async () => {
  pair = await startOrgPair()
  envA = { ...pair.envA }
}, 120_000)
afterAll(async () => {
  await pair?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('every command with --json prints one JSON object', { timeout: 300_000 }, () => {
  it('token create | list | revoke', async () => {
    const created = await json('token create', ['--role', 'agent'], envA, 0)
    expect(created).toMatchObject({ ok: true, role: 'agent', tenant: 'default' })
    await json('token create', ['--role', 'admin'], envA, 1)
    const listed = await json('token list', [], envA, 0)
    // An object with the list in it, not the bare list it was.
    expect(listed).toEqual({ ok: true, tokens: [expect.objectContaining({ id: created['id'], state: 'active' })] })
    await json('token list', [], { ...envA, BERNSTEIN_PORT: 'eighty' }, 1)
    expect(await json('token revoke', [created['id'] as string], envA, 0)).toEqual({ ok: true, id: created['id'] })
    expect(await json('token revoke', ['nosuchid'], envA, 1)).toMatchObject({ code: 'not_found' })
  })

  it('db status | migrate, keys show | rotate, doctor', async () => {
    const unreachable = { ...envA, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }
    expect(await json('db status', [], envA, 0)).toMatchObject({ ok: true, pending: 0 })
    await json('db status', [], unreachable, 2)
    expect(await json('db migrate', [], envA, 0)).toMatchObject({ ok: true, applied: [] })
    await json('db migrate', [], unreachable, 2)

    expect(await json('keys show', [], envA, 0)).toMatchObject({ ok: true, keys: expect.any(Array) as unknown })
    await json('keys show', [], { BERNSTEIN_DATA_DIR: freshDataDir() }, 1)
    expect(await json('keys rotate', ['--key', 'receipt'], { BERNSTEIN_DATA_DIR: freshDataDir() }, 0)).toMatchObject({ ok: true })
    await json('keys rotate', ['--key', 'nope'], envA, 1)

    expect(await json('doctor', [], envA, 0)).toMatchObject({ ok: true, checks: expect.any(Array) as unknown })
    expect(await json('doctor', [], { BERNSTEIN_DATA_DIR: freshDataDir() }, 1)).toMatchObject({ ok: false, checks: expect.any(Array) as unknown })
  })

  it('delegate, federation list | sync | message', async () => {
    const card = parseCardFile(await (await fetch(`${pair.b.url}/.well-known/a2a-capability-card.json`)).text())
    const fingerprint = keyFingerprint(card.card.public_key_pem)
    const task = await fetchJson(`${pair.a.url}/tasks`, TOKEN_A, { method: 'POST', body: JSON.stringify({ title: 'write docs', role: 'docs' }) })
    const delegate = ['--peer', pair.b.url, '--peer-token', TOKEN_B, '--task-id', task['id'] as string]
    // A pin that is not the peer's: the delegation is refused, one object with ok false.
    expect(await json('delegate', [...delegate, '--trusted-fingerprint', `sha256:${'0'.repeat(64)}`], envA, 1)).toMatchObject({
      ok: false,
      status: 'rejected',
    })
    const delegated = await json('delegate', [...delegate, '--trusted-fingerprint', fingerprint], envA, 0)
    expect(delegated).toMatchObject({ ok: true, status: 'accepted' })

    const listed = await json('federation list', [], envA, 0)
    expect(listed).toEqual({ ok: true, delegations: expect.arrayContaining([expect.objectContaining({ id: delegated['id'] })]) as unknown })
    await json('federation list', [], { ...envA, BERNSTEIN_PORT: 'eighty' }, 1)

    // The peer refuses A's token: following records an error, exit 1, still one object.
    const refused = await json('federation sync', ['--peer-token', TOKEN_A], envA, 1)
    expect(refused).toMatchObject({ ok: false, error: expect.stringContaining('recorded an error') as unknown, failed: [delegated['id']] })
    expect(refused['delegations']).toEqual([expect.objectContaining({ id: delegated['id'], last_error: expect.stringContaining('401') as unknown })])
    expect(await json('federation sync', ['--peer-token', TOKEN_B], envA, 0)).toMatchObject({ ok: true, delegations: expect.any(Array) as unknown })

    const message = ['--peer', pair.b.url, '--peer-token', TOKEN_B, '--sender', 'alice', '--recipient', 'bob', '--content', 'hello']
    expect(await json('federation message', [...message, '--task-id', delegated['peer_task_id'] as string], envA, 0)).toMatchObject({
      ok: true,
      delivered: true,
    })
    await json('federation message', [...message, '--task-id', 'nosuchtask00'], envA, 1)
  })

  it('lineage tracker-audit verify | export | import, lineage envelope wrap | inspect', async () => {
    expect(await json('lineage tracker-audit verify', [], envA, 0)).toMatchObject({ ok: true })
    await json('lineage tracker-audit verify', ['--file', join(dir, 'absent.jsonl')], envA, 2)
    const exported = join(dir, 'export.jsonl')
    expect(await json('lineage tracker-audit export', ['--output', exported], envA, 0)).toMatchObject({ ok: true, output: exported })
    await json('lineage tracker-audit export', [], envA, 1)

    const keyPath = join(dir, 'vector-audit.key')
    writeFileSync(keyPath, '0123456789abcdef'.repeat(4), { mode: 0o600 })
    const source = join(dir, 'source_log.jsonl')
    writeFileSync(source, vectorBytes('tracker_audit', 'source_log.jsonl'))
    const importer = { BERNSTEIN_DATA_DIR: freshDataDir(), BERNSTEIN_AUDIT_KEY_PATH: keyPath }
    expect(await json('lineage tracker-audit import', ['--file', source], importer, 0)).toEqual({ ok: true, imported: 5 })
    // Again: it does not continue the chain any more.
    await json('lineage tracker-audit import', ['--file', source], importer, 1)
    // The whole node: under the key the log was signed with, then under another (every HMAC fails).
    expect(await json('lineage checkpoint', [], importer, 0)).toMatchObject({ ok: true })
    expect(await json('lineage verify-node', [], importer, 0)).toMatchObject({ ok: true, checkpoints: { count: 1 } })
    await json('lineage verify-node', [], { ...importer, BERNSTEIN_AUDIT_KEY_PATH: join(dir, 'other-audit.key') }, 1)
    await json('lineage checkpoint', [], { ...envA, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, 1)

    // Without --output the payload is a field of the object (it was printed bare), its bytes exactly.
    const wrapped = await json('lineage envelope wrap', ['--file', source, '--issuer', 'acme-orch'], offline, 0)
    expect(wrapped).toMatchObject({ ok: true, output: null, source_issuer: 'acme-orch', entries: 5 })
    const bare = await runCli(['lineage', 'envelope', 'wrap', '--file', source, '--issuer', 'acme-orch'], offline)
    expect(`${wrapped['payload'] as string}\n`).toBe(bare.stdout)
    const envelope = join(dir, 'envelope.json')
    expect(await json('lineage envelope wrap', ['--file', source, '--issuer', 'acme-orch', '--output', envelope], offline, 0)).toMatchObject({
      ok: true,
      output: envelope,
      payload_sha256: wrapped['payload_sha256'],
    })
    await json('lineage envelope wrap', ['--file', source], offline, 2)
    expect(await json('lineage envelope inspect', ['--file', envelope], offline, 0)).toMatchObject({ ok: true, entries: 5 })
    await json('lineage envelope inspect', ['--file', join(dir, 'absent.json')], offline, 1)
  })

  it('interop a2a card | verify | conformance, a2a verify', async () => {
    const card = join(dir, 'card.json')
    const issued = await json('interop a2a card', ['--issuer', 'acme', '--output', card], offline, 0)
    // The key file exists now: issuing again without --private-key refuses to replace it.
    await json('interop a2a card', ['--issuer', 'acme', '--output', card], offline, 1)
    const fp = issued['fingerprint'] as string
    expect(await json('interop a2a verify', ['--card', card, '--trusted-fingerprint', fp], offline, 0)).toMatchObject({ trust: 'pinned' })
    expect(await json('interop a2a verify', ['--card', card], offline, 1)).toMatchObject({ failed_checks: ['trusted_issuer'] })
    expect(await json('interop a2a conformance', ['--card', card], offline, 0)).toMatchObject({ checks: expect.any(Array) as unknown })
    await json('interop a2a conformance', [], offline, 1)

    const receipt = ['--receipt', vectorPath('a2a_receipt', 'receipt.json'), '--response', vectorPath('a2a_receipt', 'response_wire.json')]
    expect(await json('a2a verify', [...receipt, '--trust-on-first-use'], offline, 0)).toMatchObject({ trust: 'first-use', key_pinned: false })
    expect(await json('a2a verify', receipt, offline, 1)).toMatchObject({ failed_checks: ['trusted_issuer'] })
  })

  it('help, --version and usage errors', async () => {
    expect(await json('help', ['token'], offline, 0)).toMatchObject({ help: expect.stringContaining('Usage: bernstein-a2a token') as unknown })
    await json('help', ['no-such-command'], offline, 1)
    expect(await json('', ['--version'], offline, 0)).toEqual({ ok: true, version: expect.stringMatching(/^\d+\.\d+\.\d+/) as unknown })
    expect(await json('', ['token', '--help'], offline, 0)).toMatchObject({ help: expect.stringContaining('Commands:') as unknown })
    expect(await json('', [], offline, 1)).toEqual({ ok: false, error: 'a command is required (see --help)', code: 'usage' })
  })

  it('serve: the one object is {ok, url}, its log lines go to stderr; a start that fails is one object too', async () => {
    const child = spawnCli(['--json', 'serve'], {
      BERNSTEIN_DATA_DIR: freshDataDir(),
      BERNSTEIN_HOST: '127.0.0.1',
      BERNSTEIN_PORT: '0',
      // info: the first start logs where it wrote the operator token, a line that must not reach stdout.
      BERNSTEIN_LOG_LEVEL: 'info',
      BERNSTEIN_FEDERATION_POLL_MS: '0',
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (): void => {
        if (!stdout.includes('\n')) return
        child.stdout?.off('data', onData)
        resolve((JSON.parse(stdout) as { url: string }).url)
      }
      child.stdout?.on('data', onData)
      void exited.then((code) => reject(new Error(`serve exited (${code}) before listening:\n${stdout}${stderr}`)))
    })
    expect((await fetch(`${url}/health/ready`)).status).toBe(200)
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(oneObject({ code: 0, stdout, stderr }, 'serve')).toEqual({ ok: true, url })
    expect(stderr).toContain('"level":30')
    covered.set('serve', new Set(['success']))
    await json('serve', [], { BERNSTEIN_DATA_DIR: freshDataDir(), BERNSTEIN_PORT: 'eighty' }, 1)
  })

  it('covers every command the CLI has (read from its help)', async () => {
    const leaves: string[] = []
    const walk = async (path: string[]): Promise<void> => {
      const run = await runCli(['--json', ...path, '--help'], offline)
      const help = oneObject(run, `${path.join(' ')} --help`)['help'] as string
      const commands = (help.split('Commands:\n')[1] ?? '')
        .split('\n')
        .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
        .filter((name): name is string => name !== undefined)
      if (commands.length === 0) leaves.push(path.join(' '))
      // `help [command]`: one command, at the top (each group has its own, the same command).
      if (path.length === 0) leaves.push('help')
      for (const name of commands) if (name !== 'help') await walk([...path, name])
    }
    await walk([])
    expect(leaves.length).toBeGreaterThan(20)
    const missing = leaves.filter((leaf) => covered.get(leaf)?.size !== 2)
    expect(missing).toEqual([])
  })
})
