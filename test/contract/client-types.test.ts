import { describe, expect, expectTypeOf, it } from 'vitest'
import type { A2AStatus } from '../../src/a2a/a2a-status.js'
import {
  type A2AReceipt,
  type A2AReceiptResult,
  type A2ATask,
  type A2ATaskStatus,
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

  it("narrows an A2A task's status to the contract's union and types its receipt, on every path that returns one", () => {
    // The contract's union is the server's own set of A2A statuses.
    expectTypeOf<A2ATaskStatus>().toEqualTypeOf<A2AStatus>()
    expectTypeOf<A2ATask['status']>().toEqualTypeOf<A2ATaskStatus>()
    expectTypeOf<NonNullable<A2ATask['receipt']>>().toEqualTypeOf<A2AReceipt>()
    expectTypeOf<A2AReceipt['entry_hash']>().toBeString()
    expectTypeOf<A2AReceipt['head_signature']['public_key_jwk']['x']>().toBeString()
    const get = () => client.GET('/api/v1/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: 'x' } } })
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof get>>['data']>>().toEqualTypeOf<A2ATask>()
    const check = (task: A2ATask) => {
      // @ts-expect-error not an A2A status
      const never = task.status === 'done'
      // @ts-expect-error the receipt has no such field
      const typo = task.receipt?.entry_hsh
      return [never, typo]
    }
    expect(typeof check).toBe('function')
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
        expectTypeOf(r.value.status).toEqualTypeOf<'completed' | 'failed' | 'canceled'>()
        expectTypeOf(r.value.responseText).toBeString()
        expectTypeOf(r.value.receipt).toEqualTypeOf<A2AReceipt | null>()
        expectTypeOf(r.value.task.status).toEqualTypeOf<A2ATaskStatus>()
      } else {
        expectTypeOf(r.code).toEqualTypeOf<'invalid_argument' | 'send_failed' | 'poll_failed' | 'timeout' | 'aborted' | 'receipt_rejected'>()
        expectTypeOf(r.detail).toBeString()
        expectTypeOf(r.httpStatus).toEqualTypeOf<number | null>()
        expectTypeOf(r.task).toEqualTypeOf<A2ATask | null>()
        expectTypeOf(r.polls).toBeNumber()
      }
    }
    expectTypeOf(fetchAndVerifyPeerCard).returns.resolves.toEqualTypeOf<PeerCardResult>()
    const card = (r: PeerCardResult) => {
      if (r.ok) {
        expectTypeOf(r.value.card.card.policies.cost_cap_usd).toBeNumber()
        expectTypeOf(r.value.fingerprint).toBeString()
      } else {
        expectTypeOf(r.code).toEqualTypeOf<'invalid_argument' | 'http' | 'malformed' | 'issuer_mismatch' | 'signature' | 'untrusted_issuer' | 'policy'>()
        expectTypeOf(r.detail).toBeString()
        expectTypeOf(r.httpStatus).toEqualTypeOf<number | null>()
      }
    }
    expectTypeOf(verifyTaskReceipt).returns.resolves.toEqualTypeOf<A2AReceiptResult>()
    // @ts-expect-error a receipt is only verified against a pinned key: jwks or trustedJwk is required
    const unpinned = () => verifyTaskReceipt('{}', {})
    // @ts-expect-error not both
    const both = () => verifyTaskReceipt('{}', { jwks: {}, trustedJwk: {} })
    // @ts-expect-error a JWKS URL alone pins nothing: the key's fingerprint is required with it
    const urlOnly = () => verifyTaskReceipt('{}', { jwksUrl: 'http://127.0.0.1:1/.well-known/agent.json/keys' })
    // What the typed client returns, and sendAndWait's result, are accepted as they are.
    const fromClient = async () =>
      verifyTaskReceipt(await client.POST('/a2a/tasks/send', { body: { sender: 'p', message: 'm' } }), { trustedFingerprints: ['sha256:…'] })
    const fromWait = async (r: SendAndWaitResult) => (r.ok ? verifyTaskReceipt(r, { trustedFingerprints: 'sha256:…', fetch: noNetwork }) : null)
    const fromWaitValue = async (r: SendAndWaitResult) => (r.ok ? verifyTaskReceipt(r.value, { jwks: {} }) : null)
    expect([narrow, card, unpinned, both, urlOnly, fromClient, fromWait, fromWaitValue].every((f) => typeof f === 'function')).toBe(true)
  })
})
