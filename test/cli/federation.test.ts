import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCardFile } from '../../src/cards/index.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { type SpawnedServer, runCli, spawnServer } from '../helpers/cli.js'

const TOKEN_A = 'org-a-operator-token-0123456789'
const TOKEN_B = 'org-b-operator-token-0123456789'

describe('delegate and federation commands between two spawned servers', () => {
  const dirs: string[] = []
  let a: SpawnedServer
  let b: SpawnedServer
  let envA: Record<string, string>

  beforeAll(async () => {
    const dirA = mkdtempSync(join(tmpdir(), 'fed-a-'))
    const dirB = mkdtempSync(join(tmpdir(), 'fed-b-'))
    dirs.push(dirA, dirB)
    envA = { BERNSTEIN_DATA_DIR: dirA, BERNSTEIN_AUTH_TOKEN: TOKEN_A, BERNSTEIN_A2A_ISSUER: 'org-a' }
    a = await spawnServer(envA)
    b = await spawnServer({ BERNSTEIN_DATA_DIR: dirB, BERNSTEIN_AUTH_TOKEN: TOKEN_B, BERNSTEIN_A2A_ISSUER: 'org-b', BERNSTEIN_A2A_COST_CAP_USD: '5' })
  }, 60_000)

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  const json = async (url: string, token: string, init: RequestInit = {}): Promise<Record<string, unknown>> => {
    const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } })
    return (await res.json()) as Record<string, unknown>
  }

  it('delegates after verifying the card, lists the ledger, and settles with sync once the peer finished', async () => {
    const card = parseCardFile(await (await fetch(`${b.url}/.well-known/a2a-capability-card.json`)).text())
    const fingerprint = keyFingerprint(card.card.public_key_pem)
    const task = await json(`${a.url}/tasks`, TOKEN_A, { method: 'POST', body: JSON.stringify({ title: 'write docs', role: 'docs' }) })
    const taskId = task['id'] as string

    const refused = await runCli(['--json', 'delegate', '--peer', b.url, '--peer-token', TOKEN_B, '--task-id', taskId, '--trusted-fingerprint', fingerprint, '--require-cost-cap-usd', '1'], envA)
    expect(refused.code).toBe(1)
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, status: 'rejected', last_error: 'capability card rejected (policy): cost cap: peer advertises 5.0 USD, operator ceiling is 1.0 USD' })

    const noPin = await runCli(['delegate', '--peer', b.url, '--task-id', taskId], envA)
    expect(noPin.code).not.toBe(0)
    expect(noPin.stderr).toContain('at least one --trusted-fingerprint is required')

    const delegated = await runCli(['--json', 'delegate', '--peer', b.url, '--task-id', taskId, '--trusted-fingerprint', fingerprint, '--require-cost-cap-usd', '10'], { ...envA, BERNSTEIN_PEER_TOKEN: TOKEN_B })
    expect(delegated.code).toBe(0)
    const row = JSON.parse(delegated.stdout) as Record<string, string>
    expect(row).toMatchObject({ ok: true, status: 'accepted', peer_issuer: 'org-b', task_id: taskId })

    const listed = await runCli(['--json', 'federation', 'list'], envA)
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: row['id'], status: 'accepted' })])

    const claimed = await json(`${b.url}/tasks/next/docs`, TOKEN_B)
    await json(`${b.url}/tasks/${claimed['id'] as string}/complete`, TOKEN_B, { method: 'POST', body: JSON.stringify({ result_summary: 'docs written' }) })

    const synced = await runCli(['--json', 'federation', 'sync'], { ...envA, BERNSTEIN_PEER_TOKEN: TOKEN_B })
    expect(synced.code).toBe(0)
    expect(JSON.parse(synced.stdout)).toEqual([expect.objectContaining({ id: row['id'], status: 'completed', result: 'docs written' })])
    const local = await json(`${a.url}/tasks/${taskId}`, TOKEN_A)
    expect(local).toMatchObject({ status: 'done', result_summary: 'docs written' })
  }, 120_000)
})
