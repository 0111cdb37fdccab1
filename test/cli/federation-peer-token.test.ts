import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCardFile } from '../../src/cards/index.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { type ServerProcess, runCli } from '../helpers/cli.js'
import { TOKEN_A, TOKEN_B, fetchJson as json, startOrgPair } from './org-pair.js'
const HINT =
  'the peer wants a valid bearer token: pass it with `federation sync --peer-token <token>` (this run only), or set BERNSTEIN_PEER_TOKEN or ' +
  'BERNSTEIN_PEER_TOKENS (<peer url>=<token>,...) for the CLI and the server; tokens are never stored'

/**
 * A delegation made with `delegate --peer-token` (never stored) is followed by `federation sync`: without a token
 * it says which delegation failed and how to pass the token, and exits 1; `sync --peer-token` settles it.
 */
describe('federation sync --peer-token between two spawned servers', () => {
  let a: ServerProcess
  let b: ServerProcess
  let envA: Record<string, string>
  let stop: (() => Promise<void>) | undefined
  let fingerprint: string

  beforeAll(async () => {
    // No BERNSTEIN_PEER_TOKEN(S) anywhere: the token exists only on the command lines below.
    ;({ a, b, envA, stop } = await startOrgPair({ BERNSTEIN_PEER_TOKEN: '', BERNSTEIN_PEER_TOKENS: '' }))
    fingerprint = keyFingerprint(parseCardFile(await (await fetch(`${b.url}/.well-known/a2a-capability-card.json`)).text()).card.public_key_pem)
  }, 60_000)

  afterAll(async () => stop?.())
  const ledger = async (): Promise<Record<string, unknown>[]> =>
    (JSON.parse((await runCli(['--json', 'federation', 'list'], envA)).stdout) as { delegations: Record<string, unknown>[] }).delegations

  /** Creates a task at A and delegates it to B; returns the ledger row and B's linked task id. */
  async function delegated(
    role: string,
    args: string[],
    env: Record<string, string> = envA,
  ): Promise<{ row: Record<string, unknown>; taskId: string; atB: string }> {
    const task = await json(`${a.url}/tasks`, TOKEN_A, { method: 'POST', body: JSON.stringify({ title: `work as ${role}`, role }) })
    const taskId = task['id'] as string
    const run = await runCli(['--json', 'delegate', '--peer', b.url, '--task-id', taskId, '--trusted-fingerprint', fingerprint, ...args], env)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const row = JSON.parse(run.stdout) as Record<string, unknown>
    expect(row).toMatchObject({ ok: true, status: 'accepted', task_id: taskId, last_error: null, hint: null })
    const a2a = await json(`${b.url}/a2a/tasks/${row['remote_a2a_task_id'] as string}`, TOKEN_B)
    const atB = a2a['bernstein_task_id'] as string
    // The peer's own task id is what delegate reports as `peer_task_id`, the one `federation message` wants.
    expect(row).toMatchObject({ peer_task_id: atB, remote_task_id: atB })
    return { row, taskId, atB }
  }

  it('sync without a token exits 1 naming the delegation and the fix; a wrong token too; --peer-token settles it', async () => {
    const { row, taskId, atB } = await delegated('docs', ['--peer-token', TOKEN_B])
    const id = row['id'] as string
    const localBefore = await json(`${a.url}/tasks/${taskId}`, TOKEN_A)
    const peerBefore = await json(`${b.url}/tasks/${atB}`, TOKEN_B)

    // 1. No token for the peer: HTTP 401, recorded with its fix, exit 1, nothing settled anywhere.
    const noToken = await runCli(['federation', 'sync'], envA)
    const recorded = `follow: HTTP 401: Missing or invalid Authorization header`
    expect(noToken.code).toBe(1)
    expect(noToken.stdout).toBe(
      `${id}  accepted     task ${taskId} -> ${b.url} (peer task ${atB}, a2a ${row['remote_a2a_task_id'] as string})  [${recorded}] (${HINT})\n`,
    )
    expect(noToken.stderr).toBe(`error: following 1 of 1 delegation(s) recorded an error:\n  ${id} (task ${taskId} -> ${b.url}): ${recorded}\n    ${HINT}\n`)
    expect(await ledger()).toEqual([expect.objectContaining({ id, status: 'accepted', peer_task_id: atB, last_error: recorded, hint: HINT, result: null })])
    const listed = await runCli(['federation', 'list'], envA)
    expect(listed.code).toBe(0)
    expect(listed.stdout).toBe(noToken.stdout)
    expect(await json(`${a.url}/tasks/${taskId}`, TOKEN_A)).toEqual(localBefore)
    expect(await json(`${b.url}/tasks/${atB}`, TOKEN_B)).toEqual(peerBefore)

    // 2. A token the peer refuses: the same, with the peer's words.
    const wrong = await runCli(['--json', 'federation', 'sync', '--peer-token', TOKEN_A], envA)
    const refused = 'follow: HTTP 401: Invalid or expired authentication token'
    expect(wrong.code).toBe(1)
    expect(JSON.parse(wrong.stdout)).toEqual({
      ok: false,
      error: 'following 1 of 1 delegation(s) recorded an error',
      failed: [id],
      delegations: [expect.objectContaining({ id, status: 'accepted', last_error: refused, hint: HINT })],
    })
    // The error is in the one object: nothing on stderr.
    expect(wrong.stderr).toBe('')
    expect(await json(`${a.url}/tasks/${taskId}`, TOKEN_A)).toEqual(localBefore)

    // 3. The right token, for this run only: still running at the peer is not an error.
    const running = await runCli(['--json', 'federation', 'sync', '--peer-token', TOKEN_B], envA)
    expect(running.stderr).toBe('')
    expect(running.code).toBe(0)
    expect(JSON.parse(running.stdout)).toEqual({ ok: true, delegations: [expect.objectContaining({ id, status: 'accepted', last_error: null, hint: null })] })

    // The id `federation list` shows as the peer task reaches the task at the peer; the a2a id does not.
    const message = ['federation', 'message', '--peer', b.url, '--peer-token', TOKEN_B, '--sender', 'alice', '--recipient', 'bob', '--content', 'mind the API']
    const viaA2AId = await runCli([...message, '--task-id', row['remote_a2a_task_id'] as string], envA)
    expect([viaA2AId.code, viaA2AId.stderr]).toEqual([1, `error: peer answered 404: Task '${row['remote_a2a_task_id'] as string}' not found\n`])
    const viaPeerTask = await runCli([...message, '--task-id', atB], envA)
    expect(viaPeerTask.stderr).toBe('')
    expect(viaPeerTask.code).toBe(0)
    expect(((await json(`${b.url}/tasks/${atB}`, TOKEN_B))['progress_log'] as { message: string }[]).map((p) => p.message)).toEqual([
      '[A2A:alice->bob] mind the API',
    ])

    await json(`${b.url}/tasks/${atB}/claim`, TOKEN_B, { method: 'POST' })
    await json(`${b.url}/tasks/${atB}/complete`, TOKEN_B, { method: 'POST', body: JSON.stringify({ result_summary: 'docs written' }) })
    const settled = await runCli(['--json', 'federation', 'sync', '--peer-token', TOKEN_B], envA)
    expect(settled.stderr).toBe('')
    expect(settled.code).toBe(0)
    expect(JSON.parse(settled.stdout)).toEqual({
      ok: true,
      delegations: [expect.objectContaining({ id, status: 'completed', result: 'docs written', last_error: null })],
    })
    expect(await json(`${a.url}/tasks/${taskId}`, TOKEN_A)).toMatchObject({ status: 'done', result_summary: 'docs written' })

    // The token was never stored: the next pass has nothing to follow, and nothing in the ledger holds it.
    const idle = await runCli(['federation', 'sync'], envA)
    expect([idle.code, idle.stdout, idle.stderr]).toEqual([0, 'nothing to follow\n', ''])
    expect(JSON.stringify(await ledger())).not.toContain(TOKEN_B)
  }, 120_000)

  it('BERNSTEIN_PEER_TOKENS serves delegate and sync; a task that failed at the peer is an outcome, exit 0', async () => {
    const env = { ...envA, BERNSTEIN_PEER_TOKENS: `${b.url}/=${TOKEN_B}` }
    const { row, taskId, atB } = await delegated('reviewer', [], env)
    await json(`${b.url}/tasks/${atB}/claim`, TOKEN_B, { method: 'POST' })
    await json(`${b.url}/tasks/${atB}/fail`, TOKEN_B, { method: 'POST', body: JSON.stringify({ reason: 'out of budget' }) })
    const synced = await runCli(['--json', 'federation', 'sync'], env)
    expect(synced.stderr).toBe('')
    expect(synced.code).toBe(0)
    expect(JSON.parse(synced.stdout)).toEqual({
      ok: true,
      delegations: [expect.objectContaining({ id: row['id'], status: 'failed', result: 'out of budget', last_error: 'remote task failed', hint: null })],
    })
    expect(await json(`${a.url}/tasks/${taskId}`, TOKEN_A)).toMatchObject({ status: 'failed' })
  }, 120_000)

  it('--help documents the token, the exit code and which task id `federation message` wants', async () => {
    const sync = await runCli(['federation', 'sync', '--help'])
    expect(sync.code).toBe(0)
    expect(sync.stdout.replace(/\s+/g, ' ')).toContain('(exit 1 when following any of them recorded an error, listed on stderr; with --json, in the object)')
    expect(sync.stdout.replace(/\s+/g, ' ')).toContain(
      '--peer-token <token> bearer token presented to every peer followed in this run, never stored (default: BERNSTEIN_PEER_TOKENS for the peer URL, else BERNSTEIN_PEER_TOKEN)',
    )
    const message = await runCli(['federation', 'message', '--help'])
    expect(message.stdout.replace(/\s+/g, ' ')).toContain(
      "--task-id <id> the task's id at the peer: for a delegated task, its `peer task` in `delegate` / `federation list` output (`peer_task_id` with --json), not its a2a id nor the local task id",
    )
  })
})
