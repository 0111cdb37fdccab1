/**
 * The request deadline (BERNSTEIN_REQUEST_DEADLINE_MS) and the operations that wait by design (`x-waits` in the
 * contract): a blocking A2A v1.0 SendMessage waits for its task up to the node's blocking bound
 * (BERNSTEIN_A2A_BLOCKING_TIMEOUT_MS), so its deadline is the request deadline plus that bound. Driven through a
 * spawned `serve`, deterministically: the send is seen pending (its task exists), the test sleeps past the request
 * deadline, then a worker claims and completes the task; the send answers 200 with the completed task, not 503.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type ServerProcess, spawnServer } from '../helpers/cli.js'
import { testEngines } from '../helpers/engines.js'
import { type Schema, createSchema, waitUntil } from '../pg/support.js'

const TOKEN = 'waiting-deadline-operator-token-0123456789'
const DEADLINE_MS = 1_000

async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: text === '' ? undefined : (JSON.parse(text) as unknown) }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(testEngines())('the request deadline of operations that wait by design (serve, %s)', (engine) => {
  let server: ServerProcess | undefined
  let dataDir: string | undefined
  let schema: Schema | undefined

  afterEach(async () => {
    await server?.stop('SIGTERM')
    server = undefined
    await schema?.drop()
    schema = undefined
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    dataDir = undefined
  })

  const start = async (): Promise<string> => {
    dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-waits-'))
    if (engine === 'postgres') schema = await createSchema('waits')
    server = await spawnServer({
      BERNSTEIN_DATA_DIR: dataDir,
      BERNSTEIN_AUTH_TOKEN: TOKEN,
      BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN: '0',
      BERNSTEIN_RATE_LIMIT_READ_PER_MIN: '0',
      BERNSTEIN_REQUEST_DEADLINE_MS: String(DEADLINE_MS),
      BERNSTEIN_A2A_BLOCKING_TIMEOUT_MS: '60000',
      ...(schema && { DATABASE_URL: schema.url() }),
    })
    return server.url
  }

  for (const binding of ['HTTP+JSON', 'JSON-RPC'] as const) {
    it(`a blocking SendMessage (${binding}) completed after the request deadline answers 200 with the completed task`, async () => {
      const url = await start()
      const role = `waits-${binding === 'JSON-RPC' ? 'rpc' : 'rest'}`
      const message = { messageId: `m-${role}`, role: 'ROLE_USER', parts: [{ text: 'wait for me' }], metadata: { 'bernstein.role': role } }
      const v1 = { 'a2a-version': '1.0' }
      const sent =
        binding === 'HTTP+JSON'
          ? call(url, 'POST', '/a2a/v1/message:send', { message }, v1)
          : call(url, 'POST', '/a2a/v1', { jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message } }, v1)
      // The send is pending once its linked task exists.
      let taskId: string | undefined
      await waitUntil('the send to create its task', async () => {
        const listed = (await call(url, 'GET', '/tasks')).json as { tasks: { id: string; role: string | null }[] }
        taskId = listed.tasks.find((t) => t.role === role)?.id
        return taskId !== undefined
      })
      await sleep(DEADLINE_MS + 500)
      const claimed = await call(url, 'GET', `/tasks/next/${role}?agent_id=worker-1`)
      expect(claimed.status, claimed.text).toBe(200)
      expect((claimed.json as { id: string }).id).toBe(taskId)
      const completed = await call(url, 'POST', `/tasks/${taskId}/complete`, { result_summary: 'done late' })
      expect(completed.status, completed.text).toBe(200)

      const answer = await sent
      expect(answer.status, answer.text).toBe(200)
      const task = binding === 'HTTP+JSON' ? (answer.json as { task: unknown }).task : (answer.json as { result: { task: unknown } }).result.task
      expect(task).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' }, metadata: { 'bernstein.task_id': taskId } })
    }, 120_000)
  }
})
