/**
 * The bench's baselines (bare Express and the A2A SDK) as the send case drives them: each run starts from an empty
 * store, so what a baseline answered before cannot be read after a reset, and it keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sendMessageBody } from '../../../scripts/bench/cases.js'
import type { RunningProcess } from '../../../scripts/bench/proc.js'
import { resetBaseline, startExpress, startSdk } from '../../../scripts/bench/systems.js'

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
