import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCardFile } from '../../src/cards/index.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import type { A2AMessage } from '../../src/a2a/a2a-task.js'
import { connect } from '../../src/store/connect.js'
import { Store } from '../../src/store/store.js'
import { type ServerProcess, runCli } from '../helpers/cli.js'
import { TOKEN_A, TOKEN_B, fetchJson as json, startOrgPair } from './org-pair.js'

describe('delegate and federation commands between two spawned servers', () => {
  let a: ServerProcess
  let b: ServerProcess
  let envA: Record<string, string>
  let stop: (() => Promise<void>) | undefined

  beforeAll(async () => {
    ;({ a, b, envA, stop } = await startOrgPair({}, { BERNSTEIN_A2A_COST_CAP_USD: '5' }))
  }, 60_000)

  afterAll(async () => stop?.())

  const peerTaskIds = async (): Promise<string[]> => {
    const page = await json(`${b.url}/tasks?limit=500`, TOKEN_B)
    return (page['tasks'] as { id: string }[]).map((t) => t.id).sort()
  }

  /** A's recorded A2A messages, read from its database file (the node has no API that lists them). */
  const messagesAtA = async (): Promise<A2AMessage[]> => {
    const connection = connect({ url: null, dataDir: envA['BERNSTEIN_DATA_DIR']!, sqliteSynchronous: 'normal' })
    try {
      return await new Store(connection).repos.a2a.messages('default')
    } finally {
      await connection.close()
    }
  }

  it('delegates after verifying the card, lists the ledger, and settles with sync once the peer finished', async () => {
    const card = parseCardFile(await (await fetch(`${b.url}/.well-known/a2a-capability-card.json`)).text())
    const fingerprint = keyFingerprint(card.card.public_key_pem)
    const task = await json(`${a.url}/tasks`, TOKEN_A, { method: 'POST', body: JSON.stringify({ title: 'write docs', role: 'docs' }) })
    const taskId = task['id'] as string

    const peerTasksBefore = await peerTaskIds()
    const refused = await runCli(
      [
        '--json',
        'delegate',
        '--peer',
        b.url,
        '--peer-token',
        TOKEN_B,
        '--task-id',
        taskId,
        '--trusted-fingerprint',
        fingerprint,
        '--require-cost-cap-usd',
        '1',
      ],
      envA,
    )
    expect(refused.code).toBe(1)
    const refusedRow = JSON.parse(refused.stdout) as Record<string, unknown>
    expect(refusedRow).toMatchObject({
      ok: false,
      status: 'rejected',
      attempts: 0,
      remote_a2a_task_id: null,
      last_error: 'capability card rejected (policy): cost cap: peer advertises 5.0 USD, operator ceiling is 1.0 USD',
    })
    // The refusal is recorded in the ledger and nothing else moved: no task at the peer, the local task still open.
    const ledgerAfterRefusal = await runCli(['--json', 'federation', 'list'], envA)
    expect(JSON.parse(ledgerAfterRefusal.stdout)).toEqual({
      ok: true,
      delegations: [expect.objectContaining({ id: refusedRow['id'], status: 'rejected', attempts: 0, remote_a2a_task_id: null })],
    })
    expect(await peerTaskIds()).toEqual(peerTasksBefore)
    expect(await json(`${a.url}/tasks/${taskId}`, TOKEN_A)).toMatchObject({ status: 'open', assigned_agent: null })

    const noPin = await runCli(['delegate', '--peer', b.url, '--task-id', taskId], envA)
    expect(noPin.code).not.toBe(0)
    expect(noPin.stderr).toContain('at least one --trusted-fingerprint is required')
    // Refused before any work: the ledger is exactly as it was, the peer and the local task untouched.
    expect((await runCli(['--json', 'federation', 'list'], envA)).stdout).toBe(ledgerAfterRefusal.stdout)
    expect(await peerTaskIds()).toEqual(peerTasksBefore)
    expect(await json(`${a.url}/tasks/${taskId}`, TOKEN_A)).toMatchObject({ status: 'open', assigned_agent: null })

    const delegated = await runCli(
      ['--json', 'delegate', '--peer', b.url, '--task-id', taskId, '--trusted-fingerprint', fingerprint, '--require-cost-cap-usd', '10'],
      { ...envA, BERNSTEIN_PEER_TOKEN: TOKEN_B },
    )
    expect(delegated.code).toBe(0)
    const row = JSON.parse(delegated.stdout) as Record<string, string>
    expect(row).toMatchObject({ ok: true, status: 'accepted', peer_issuer: 'org-b', task_id: taskId })

    const listed = await runCli(['--json', 'federation', 'list'], envA)
    expect(JSON.parse(listed.stdout)).toEqual({ ok: true, delegations: [expect.objectContaining({ id: row['id'], status: 'accepted' })] })

    const claimed = await json(`${b.url}/tasks/next/docs`, TOKEN_B)
    await json(`${b.url}/tasks/${claimed['id'] as string}/complete`, TOKEN_B, { method: 'POST', body: JSON.stringify({ result_summary: 'docs written' }) })

    const synced = await runCli(['--json', 'federation', 'sync'], { ...envA, BERNSTEIN_PEER_TOKEN: TOKEN_B })
    expect(synced.code).toBe(0)
    expect(JSON.parse(synced.stdout)).toEqual({
      ok: true,
      delegations: [expect.objectContaining({ id: row['id'], status: 'completed', result: 'docs written' })],
    })
    const local = await json(`${a.url}/tasks/${taskId}`, TOKEN_A)
    expect(local).toMatchObject({ status: 'done', result_summary: 'docs written' })
  }, 120_000)

  it('federation message delivers into a task at the peer and records it as outbound; a refusal records nothing', async () => {
    const remote = await json(`${b.url}/tasks`, TOKEN_B, { method: 'POST', body: JSON.stringify({ title: 'review the API', role: 'reviewer' }) })
    const remoteId = remote['id'] as string
    const before = await messagesAtA()

    const sent = await runCli(
      [
        '--json',
        'federation',
        'message',
        '--peer',
        `${b.url}/`,
        '--task-id',
        remoteId,
        '--sender',
        'alice',
        '--recipient',
        'bob',
        '--content',
        'use the v2 API',
      ],
      { ...envA, BERNSTEIN_PEER_TOKEN: TOKEN_B },
    )
    expect(sent.stderr).toBe('')
    expect(sent.code).toBe(0)
    const out = JSON.parse(sent.stdout) as Record<string, unknown>
    expect(out).toEqual({
      ok: true,
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      direction: 'outbound',
      delivered: true,
      external_endpoint: b.url,
      task_id: remoteId,
    })
    expect(await messagesAtA()).toEqual([
      ...before,
      expect.objectContaining({
        id: out['id'],
        direction: 'outbound',
        delivered: true,
        externalEndpoint: b.url,
        taskId: remoteId,
        sender: 'alice',
        recipient: 'bob',
        content: 'use the v2 API',
      }),
    ])
    const atB = await json(`${b.url}/tasks/${remoteId}`, TOKEN_B)
    expect((atB['progress_log'] as { message: string }[]).map((p) => p.message)).toEqual(['[A2A:alice->bob] use the v2 API'])

    // The peer does not know the task: non-zero exit, one clear line, nothing recorded on either side.
    const unknownTask = await runCli(
      [
        'federation',
        'message',
        '--peer',
        b.url,
        '--peer-token',
        TOKEN_B,
        '--task-id',
        'ffffffffffff',
        '--sender',
        'alice',
        '--recipient',
        'bob',
        '--content',
        'anyone?',
      ],
      envA,
    )
    expect(unknownTask.code).toBe(1)
    expect(unknownTask.stdout).toBe('')
    expect(unknownTask.stderr).toBe("error: peer answered 404: Task 'ffffffffffff' not found\n")

    // The peer refuses the credentials (the token is A's, not B's).
    const wrongToken = await runCli(
      [
        'federation',
        'message',
        '--peer',
        b.url,
        '--peer-token',
        TOKEN_A,
        '--task-id',
        remoteId,
        '--sender',
        'alice',
        '--recipient',
        'bob',
        '--content',
        'let me in',
      ],
      envA,
    )
    expect(wrongToken.code).toBe(1)
    expect(wrongToken.stdout).toBe('')
    expect(wrongToken.stderr).toBe('error: peer answered 401: Invalid or expired authentication token\n')

    expect(await messagesAtA()).toHaveLength(before.length + 1)
    const atBAfter = await json(`${b.url}/tasks/${remoteId}`, TOKEN_B)
    expect(atBAfter['progress_log']).toEqual(atB['progress_log'])
  }, 120_000)
})
