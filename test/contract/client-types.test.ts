import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  type A2AReceiptResult,
  type A2ATask,
  type ApiClient,
  type PeerCardResult,
  type SendAndWaitResult,
  type components,
  createApiClient,
  fetchAndVerifyPeerCard,
  sendAndWait,
  verifyTaskReceipt,
} from '../../src/client/index.js'

type Task = components['schemas']['Task']

/**
 * Type-level assertions on the public client surface. tsc checks them (`npm run typecheck` covers test/); each
 * `@ts-expect-error` fails the type check if the call it marks ever becomes legal. The runtime part only makes sure
 * the calls are built without touching the network (a fetch that refuses).
 */
const noNetwork = async (): Promise<Response> => {
  throw new Error('no network in type tests')
}

describe('client types', () => {
  const client = createApiClient({ baseUrl: 'http://127.0.0.1:1', token: 't', tenant: 'acme', fetch: noNetwork, headers: { 'x-extra': '1' } })

  it('types data and error per operation and status', async () => {
    expectTypeOf(client).toEqualTypeOf<ApiClient>()
    const call = () => client.GET('/tasks/{task_id}', { params: { path: { task_id: 'abc' } } })
    expectTypeOf<Awaited<ReturnType<typeof call>>['data']>().toEqualTypeOf<Task | undefined>()
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof call>>['error']>>().toHaveProperty('detail')
    const list = () => client.GET('/api/v1/tasks', { params: { query: { status: 'open', limit: 10 } } })
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof list>>['data']>['tasks']>().toEqualTypeOf<Task[]>()
    const send = () => client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: 'hi' } })
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof send>>['data']>>().toEqualTypeOf<A2ATask>()
    await expect(call()).rejects.toThrow('no network in type tests')
  })

  it('rejects calls the contract forbids', () => {
    const forbidden = [
      // @ts-expect-error unknown path
      () => client.GET('/tasks/{task_id}/history', { params: { path: { task_id: 'x' } } }),
      // @ts-expect-error wrong body field type
      () => client.POST('/a2a/tasks/send', { body: { sender: 1, message: 'hi' } }),
      // @ts-expect-error missing required body field
      () => client.POST('/tasks', { body: { description: 'no title' } }),
      // @ts-expect-error unknown query value (not a TaskStatus)
      () => client.GET('/tasks', { params: { query: { status: 'nearly-done' } } }),
      // @ts-expect-error path parameter missing
      () => client.GET('/a2a/tasks/{a2a_task_id}', {}),
      // @ts-expect-error method the path does not have
      () => client.DELETE('/tasks/{task_id}', { params: { path: { task_id: 'x' } } }),
    ]
    expect(forbidden).toHaveLength(6)
  })

  it('types the helpers: results are discriminated unions, never thrown HTTP statuses', () => {
    expectTypeOf(sendAndWait).parameter(1).toEqualTypeOf<components['schemas']['A2ATaskSendRequest']>()
    expectTypeOf(sendAndWait).returns.resolves.toEqualTypeOf<SendAndWaitResult>()
    const narrow = (r: SendAndWaitResult) => {
      if (r.ok) {
        expectTypeOf(r.status).toEqualTypeOf<'completed' | 'failed' | 'canceled'>()
        expectTypeOf(r.responseText).toBeString()
        expectTypeOf(r.receipt).toEqualTypeOf<{ [key: string]: unknown } | null>()
      } else {
        expectTypeOf(r.reason).toEqualTypeOf<'send_failed' | 'poll_failed' | 'timeout' | 'aborted'>()
        expectTypeOf(r.task).toEqualTypeOf<A2ATask | null>()
      }
    }
    expectTypeOf(fetchAndVerifyPeerCard).returns.resolves.toEqualTypeOf<PeerCardResult>()
    const card = (r: PeerCardResult) => {
      if (r.ok) expectTypeOf(r.card.card.policies.cost_cap_usd).toBeNumber()
      else expectTypeOf(r.reason).toEqualTypeOf<'http' | 'malformed' | 'issuer_mismatch' | 'signature' | 'untrusted_issuer' | 'policy'>()
    }
    expectTypeOf(verifyTaskReceipt).returns.resolves.toEqualTypeOf<A2AReceiptResult>()
    // @ts-expect-error a receipt is only verified against a pinned key: jwks or trustedJwk is required
    const unpinned = () => verifyTaskReceipt('{}', {})
    // @ts-expect-error not both
    const both = () => verifyTaskReceipt('{}', { jwks: {}, trustedJwk: {} })
    expect([narrow, card, unpinned, both].every((f) => typeof f === 'function')).toBe(true)
  })
})
