/**
 * A2A v1.0 as an official client speaks it: `@a2a-js/sdk`'s ClientFactory, over its JSON-RPC and REST transports,
 * against a live node on loopback, on the node's own A2A tasks (the ones `/a2a/tasks/send` creates), while a worker
 * drives the linked Bernstein tasks through the lifecycle API.
 */
import { verifyAgentCardSignature } from '@a2a-js/sdk'
import type { Client } from '@a2a-js/sdk/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testEngines } from '../helpers/engines.js'
import { BINDINGS, clientFor, messagesMade, userMessage } from '../helpers/a2a-sdk.js'
import { OPERATOR_TOKEN, type TestApp, publishedJwks, rawRequest, startTestApp } from '../helpers/test-app.js'
import { verifyA2AReceipt } from '../../src/receipts/verify-a2a-receipt.js'

/** A ListTasksRequest with every field at its default (ts-proto requires them all). */
const LIST = {
  tenant: '',
  contextId: '',
  status: 0,
  pageSize: undefined,
  pageToken: '',
  historyLength: undefined,
  statusTimestampAfter: undefined,
  includeArtifacts: undefined,
}
/** The SDK's request types are ts-proto shapes with every field present; tests give the fields they mean. */
const sendMessage = (client: Client, params: Record<string, unknown>) => client.sendMessage(params as never)

async function operator(app: TestApp, method: string, path: string, body?: unknown, tenant = 'default') {
  const res = await rawRequest(app.url, { method, path, headers: { 'x-tenant-id': tenant }, ...(body !== undefined && { body: JSON.stringify(body) }) })
  return res
}

for (const engine of testEngines()) {
  describe(`A2A v1.0 through @a2a-js/sdk (${engine})`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await startTestApp({ engine, a2aV1: { blockingTimeoutMs: 20_000, pollIntervalMs: 100, defaultRole: 'backend' } })
    })
    afterAll(async () => {
      await app.close()
    })

    for (const binding of BINDINGS) {
      describe(binding, () => {
        it('sends without blocking, then gets the task with its history and receipt', async () => {
          const client = await clientFor(app, binding)
          const sent = await sendMessage(client, { message: userMessage('hello v1') as never, configuration: { returnImmediately: true } as never })
          expect('status' in sent && sent.status?.state).toBe(1 /* SUBMITTED */)
          const task = sent as { id: string; contextId: string; metadata?: Record<string, unknown> }
          expect(task.contextId).not.toBe('')
          expect(task.metadata?.['bernstein.attestation']).toBe('acceptance')
          const got = await client.getTask({ id: task.id, historyLength: 1 } as never)
          expect(got.id).toBe(task.id)
          expect(got.history).toHaveLength(1)
          expect(got.history[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'hello v1' })
          const none = await client.getTask({ id: task.id, historyLength: 0 } as never)
          expect(none.history).toEqual([])
          // The same task on the seed surface.
          const seed = await operator(app, 'GET', `/a2a/tasks/${task.id}`)
          expect(seed.status).toBe(200)
          expect((seed.json as { message: string }).message).toBe('hello v1')
        })

        it('blocks until a worker completes the task through the lifecycle API', async () => {
          const client = await clientFor(app, binding)
          const role = `v1-${binding === 'JSONRPC' ? 'rpc' : 'rest'}-${messagesMade()}`
          const sending = sendMessage(client, { message: userMessage('please work') as never, metadata: { 'bernstein.role': role } as never })
          // The worker: claim the linked task (it exists once the send's transaction committed), then complete it.
          let claimed: { id: string } | undefined
          for (let i = 0; i < 200 && claimed === undefined; i++) {
            const next = await operator(app, 'GET', `/tasks/next/${role}`)
            if (next.status === 200) claimed = next.json as { id: string }
            else await new Promise((r) => setTimeout(r, 25))
          }
          expect(claimed).toBeDefined()
          const done = await operator(app, 'POST', `/tasks/${claimed!.id}/complete`, { result_summary: 'all done' })
          expect(done.status).toBe(200)
          const result = (await sending) as { status?: { state: number }; artifacts: { parts: { content: unknown }[] }[]; metadata?: Record<string, unknown> }
          expect(result.status?.state).toBe(3 /* COMPLETED */)
          expect(result.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'all done' })
          expect(result.metadata?.['bernstein.attestation']).toBe('completion')
          // The completion receipt, as JSON text in the metadata, verifies offline against what the task reads as.
          const receipt = JSON.parse(String(result.metadata?.['bernstein.receipt'])) as Record<string, unknown>
          const seed = await operator(app, 'GET', `/a2a/tasks/${(result as unknown as { id: string }).id}`)
          expect(receipt).toEqual((seed.json as { receipt: unknown }).receipt)
          const jwks = await publishedJwks(app.url)
          expect((await verifyA2AReceipt(receipt, seed.text, { jwks: jwks as never })).ok).toBe(true)
          expect((await verifyA2AReceipt(receipt, seed.text.replace('all done', 'all gone'), { jwks: jwks as never })).ok).toBe(false)
        })

        it('cancels idempotently and refuses to cancel a completed task', async () => {
          const client = await clientFor(app, binding)
          const sent = (await sendMessage(client, { message: userMessage('cancel me') as never, configuration: { returnImmediately: true } as never })) as {
            id: string
          }
          const first = await client.cancelTask({ id: sent.id } as never)
          expect(first.status?.state).toBe(5 /* CANCELED */)
          const again = await client.cancelTask({ id: sent.id } as never)
          expect(again.status?.state).toBe(5)
          const other = (await sendMessage(client, { message: userMessage('finish me') as never, configuration: { returnImmediately: true } as never })) as {
            id: string
            metadata?: Record<string, unknown>
          }
          const linked = String(other.metadata?.['bernstein.task_id'])
          expect((await operator(app, 'POST', `/tasks/${linked}/complete`, { result_summary: 'x' })).status).toBe(200)
          await expect(client.cancelTask({ id: other.id } as never)).rejects.toMatchObject({ name: 'TaskNotCancelableError' })
          await expect(client.getTask({ id: 'does-not-exist' } as never)).rejects.toMatchObject({ name: 'TaskNotFoundError' })
        })

        it('lists the tenant s tasks by cursor, scoped to the caller', async () => {
          const tenant = `v1-list-${binding === 'JSONRPC' ? 'rpc' : 'rest'}`
          const client = await clientFor(app, binding, OPERATOR_TOKEN, tenant)
          const ids: string[] = []
          for (let i = 0; i < 5; i++) {
            const t = (await sendMessage(client, { message: userMessage(`task ${i}`) as never, configuration: { returnImmediately: true } as never })) as {
              id: string
            }
            ids.push(t.id)
          }
          const seen: string[] = []
          let pageToken = ''
          for (let pages = 0; pages < 10; pages++) {
            const page = await client.listTasks({ ...LIST, pageSize: 2, pageToken, includeArtifacts: true } as never)
            expect(page.totalSize).toBe(5)
            seen.push(...page.tasks.map((t) => t.id))
            pageToken = page.nextPageToken
            if (pageToken === '') break
          }
          expect([...seen].sort()).toEqual([...ids].sort())
          // A caller of another tenant (an operator token bound to it; JSON-RPC, a POST /a2a/*, is operator-only) sees none of them.
          const agent = await app.tokens.create({ role: 'operator', tenant: 'v1-elsewhere', expiresInSeconds: null })
          const outsider = await clientFor(app, binding, agent.token)
          expect((await outsider.listTasks(LIST as never)).tasks).toEqual([])
          await expect(outsider.getTask({ id: ids[0]! } as never)).rejects.toMatchObject({ name: 'TaskNotFoundError' })
          // By context: the first task's context holds only it.
          const first = await client.getTask({ id: ids[0]! } as never)
          const byContext = await client.listTasks({ ...LIST, contextId: first.contextId } as never)
          expect(byContext.tasks.map((t) => t.id)).toEqual([ids[0]])
        })

        it('gets the extended agent card, whose signature the SDK verifies against the node s JWKS', async () => {
          const client = await clientFor(app, binding)
          const jwks = (await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent.json/keys', token: null })).json as { keys: { kid: string }[] }
          const resolved: string[] = []
          const verifier = verifyAgentCardSignature(async (kid, jku) => {
            resolved.push(`${kid} ${jku}`)
            const key = jwks.keys.find((k) => k.kid === kid)
            if (!key) throw new Error(`no key ${kid}`)
            return key as never
          })
          const card = await client.getAgentCard()
          // The SDK verifies the card as served (JSON): canonicalising its own parsed shape drops the securitySchemes
          // oneof, so a parsed card with securitySchemes never verifies (an SDK quirk, not the card's).
          const served = (await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent-card.json', token: null })).json as Record<string, unknown>
          await verifier(served as never)
          expect(resolved).toEqual([`${app.keys.agentCard.kid} http://bernstein.test/.well-known/agent.json/keys`])
          expect(card.supportedInterfaces.map((i) => i.protocolBinding).sort()).toEqual(['HTTP+JSON', 'JSONRPC'])
          expect(card.supportedInterfaces.every((i) => i.protocolVersion === '1.0')).toBe(true)
          // A card changed after signing does not verify.
          await expect(verifier({ ...served, description: 'tampered' } as never)).rejects.toThrow()
        })
      })
    }
  })
}
