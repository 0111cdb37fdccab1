/**
 * The bench's baselines (bare Express and the A2A SDK) as the send case drives them: each run starts from an empty
 * store, so what a baseline answered before cannot be read after a reset, and it keeps serving.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sendMessageBody } from '../../../scripts/bench/cases.js'
import type { RunningProcess } from '../../../scripts/bench/proc.js'
import { resetBaseline, startExpress, startSdk, startSdkDurable } from '../../../scripts/bench/systems.js'

const rpc = async (proc: RunningProcess, body: string): Promise<Record<string, unknown>> => {
  const response = await fetch(`${proc.url}/`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body })
  expect(response.status).toBe(200)
  return (await response.json()) as Record<string, unknown>
}
const getTask = (proc: RunningProcess, id: string) => rpc(proc, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }))

describe('bench baselines: reset between runs', () => {
  let express: RunningProcess
  let sdk: RunningProcess
  beforeAll(async () => {
    ;[express, sdk] = await Promise.all([startExpress(), startSdk()])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([express?.stop(), sdk?.stop()])
  })

  it('bare Express forgets its tasks and keeps answering sends', async () => {
    const send = () =>
      fetch(`${express.url}/a2a/tasks/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sender: 's', message: 'm' }),
      })
    const created = (await (await send()).json()) as { id: string }
    expect((await fetch(`${express.url}/a2a/tasks/${created.id}`)).status).toBe(200)
    await resetBaseline(express)
    expect((await fetch(`${express.url}/a2a/tasks/${created.id}`)).status).toBe(404)
    const again = await send()
    expect(again.status).toBe(201)
    expect((await fetch(`${express.url}/a2a/tasks/${((await again.json()) as { id: string }).id}`)).status).toBe(200)
  })

  it('the SDK starts over with an empty store and keeps answering SendMessage', async () => {
    const sent = await rpc(sdk, sendMessageBody('before-reset'))
    const id = (sent['result'] as { task: { id: string } }).task.id
    expect(await getTask(sdk, id)).toMatchObject({ result: { id } })
    await resetBaseline(sdk)
    const gone = await getTask(sdk, id)
    expect(gone['result']).toBeUndefined()
    expect(gone['error']).toMatchObject({ code: expect.any(Number) })
    const after = await rpc(sdk, sendMessageBody('after-reset'))
    const newId = (after['result'] as { task: { id: string } }).task.id
    expect(await getTask(sdk, newId)).toMatchObject({ result: { id: newId } })
  })

  it('a baseline that does not answer the reset with 204 fails the run', async () => {
    await expect(resetBaseline({ ...express, url: `${express.url}/nowhere` })).rejects.toThrow(/express: reset answered 404/)
  })
})

describe('bench baselines: the SDK on its durable DatabaseTaskStore (SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sdk-durable-'))
  const file = join(dir, 'a2a.sqlite')
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('stores each task in its SQLite file (WAL), keeps it across a reset and a restart', async () => {
    let sdk = await startSdkDurable(file)
    let id: string
    try {
      const sent = await rpc(sdk, sendMessageBody('durable-1'))
      id = (sent['result'] as { task: { id: string; status: { state: string } } }).task.id
      expect(sent['result']).toMatchObject({ task: { status: { state: 'TASK_STATE_COMPLETED' } } })
      await resetBaseline(sdk)
      expect(await getTask(sdk, id)).toMatchObject({ result: { id } })
    } finally {
      await sdk.stop()
    }
    const db = new SQLite(file, { readonly: true })
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
      expect(db.prepare('SELECT status_state FROM tasks WHERE id = ?').get(id)).toEqual({ status_state: 'TASK_STATE_COMPLETED' })
    } finally {
      db.close()
    }
    // Started again on the same file (its migration re-run is a no-op), it still has the task.
    sdk = await startSdkDurable(file)
    try {
      expect(await getTask(sdk, id)).toMatchObject({ result: { id } })
    } finally {
      await sdk.stop()
    }
  }, 60_000)
})
