import { describe, expect, it } from 'vitest'
import type { Delegation } from '../../src/federation/delegation.js'
import type { Clock } from '../../src/runtime.js'
import { testEngines } from '../helpers/engines.js'
import { OPERATOR_TOKEN, type TestApp } from '../helpers/test-app.js'
import { FAST_RETRY, chainLines, delegate, federationNodes, localTask } from './nodes.js'

/** A's clock stands still, so the follower's backoff (`nextPollAt`) and `updatedAt` are exact values. */
const T = Math.floor(Date.now() / 1000)
const FIXED: Clock = { now: () => T, nowNs: () => BigInt(T) * 1_000_000_000n }

/** What the peer's answer to `GET /a2a/tasks/{id}` becomes on its way to the follower (the hostile network). */
type FollowRewrite = (res: Response) => Promise<Response>

const isFollowRequest = (input: Parameters<typeof fetch>[0]): boolean => /\/a2a\/tasks\/[0-9a-f]+$/.test(new URL(String(input)).pathname)

/**
 * Rewrites the body text and counts the answers it really changed (a rewrite that misses proves nothing; an
 * assertion thrown inside `fetch` would only be reported as a network error, so the test checks the count).
 */
function editBody(edit: (text: string) => string): FollowRewrite & { edited: number } {
  const rewrite = Object.assign(
    async (res: Response): Promise<Response> => {
      const text = await res.text()
      const edited = edit(text)
      if (edited !== text) rewrite.edited++
      return new Response(edited, { status: res.status, headers: res.headers })
    },
    { edited: 0 },
  )
  return rewrite
}

for (const engine of testEngines()) {
  describe(`following a delegated task to its end (${engine})`, () => {
    const node = federationNodes(engine)

    /** Node A on the fixed clock, whose follow answers pass through `rewrite.current` when set. */
    async function delegator(
      extra: { fetch?: typeof fetch; peerToken?: () => string } = {},
    ): Promise<{ a: TestApp; rewrite: { current: FollowRewrite | null } }> {
      const rewrite: { current: FollowRewrite | null } = { current: null }
      const inner = extra.fetch ?? fetch
      const intercepting: typeof fetch = async (input, init) => {
        const res = await inner(input, init)
        return rewrite.current !== null && isFollowRequest(input) ? rewrite.current(res) : res
      }
      const a = await node('org-a', { clock: FIXED }, { fetch: intercepting, ...(extra.peerToken && { peerToken: extra.peerToken }) })
      return { a, rewrite }
    }

    async function localTaskState(app: TestApp, taskId: string) {
      const { data } = await app.client.GET('/tasks/{task_id}', { params: { path: { task_id: taskId } } })
      return data!
    }

    async function stored(app: TestApp, id: string): Promise<Delegation> {
      const d = await app.store.repos.federation.get(id)
      expect(d).toBeDefined()
      return d!
    }

    /** One poll of the stored delegation, returning the row as it is stored afterwards. */
    async function followOnce(app: TestApp, id: string): Promise<Delegation> {
      const returned = await app.app.services.delegation.follow(await stored(app, id))
      const after = await stored(app, id)
      expect(returned).toEqual(after)
      return after
    }

    /**
     * The delegation as if B could not sign (a Bernstein 3.x peer the operator allowed): its answers are then taken
     * unsigned, and what the hostile network does to them reaches the receipt and body checks these tests are about.
     * (Against a proven peer the same rewrites fail its answer's signature first: test/federation/impostor.test.ts.)
     */
    async function asCardOnly(app: TestApp, d: Delegation): Promise<Delegation> {
      expect(d.trustLevel).toBe('proven')
      await app.store.repos.federation.save({ ...d, trustLevel: 'card-only' })
      return stored(app, d.id)
    }

    /** B's linked Bernstein task behind the delegation's A2A task. */
    async function remoteTaskId(b: TestApp, d: Delegation): Promise<string> {
      const { data } = await b.client.GET('/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: d.remoteA2ATaskId! } } })
      return data!.bernstein_task_id!
    }

    async function completeAtB(b: TestApp, d: Delegation, summary: string): Promise<void> {
      const id = await remoteTaskId(b, d)
      expect((await b.client.POST('/tasks/{task_id}/claim', { params: { path: { task_id: id } } })).response.status).toBe(200)
      expect((await b.client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: id } }, body: { result_summary: summary } })).response.status).toBe(
        200,
      )
    }

    it('a forged completion (rewritten result, tampered receipt signature) settles nothing; the genuine one then settles', async () => {
      const { a, rewrite } = await delegator()
      const b = await node('org-b')
      const taskId = await localTask(a)
      const d = await asCardOnly(a, await delegate(a, b, taskId))
      expect(d).toMatchObject({ status: 'accepted', polls: 0, nextPollAt: T })
      expect(d.peerJwks).not.toBeNull()
      await completeAtB(b, d, 'parser ported, 42 tests')
      const chainBefore = await chainLines(a)

      // The network rewrites the peer's result: the completion receipt no longer covers the body.
      const rewriteResult = editBody((text) => text.replace('"data":"parser ported, 42 tests"', '"data":"parser ported, 0 tests"'))
      rewrite.current = rewriteResult
      const forgedResult = await followOnce(a, d.id)
      expect(rewriteResult.edited).toBe(1)
      expect(forgedResult).toEqual({
        ...d,
        lastError: forgedResult.lastError,
        polls: 1,
        nextPollAt: T + 1,
      })
      expect(forgedResult.lastError).toMatch(
        /^completion receipt did not verify: content_hash mismatch: response hashes to sha256:[0-9a-f]{64}, receipt claims sha256:[0-9a-f]{64}$/,
      )

      // The network keeps the body but swaps one character of the receipt's signature.
      const rewriteSignature = editBody((text) =>
        text.replace(/("signature_b64":")(.)/, (_m, head: string, first: string) => `${head}${first === 'A' ? 'B' : 'A'}`),
      )
      rewrite.current = rewriteSignature
      const forgedSignature = await followOnce(a, d.id)
      expect(rewriteSignature.edited).toBe(1)
      expect(forgedSignature).toEqual({
        ...d,
        lastError: 'completion receipt did not verify: head_signature: head_signature.signature_b64 does not verify against head_sha256',
        polls: 2,
        nextPollAt: T + 2,
      })

      // Neither forged completion moved the local task or wrote to A's chain.
      expect(await localTaskState(a, taskId)).toMatchObject({ status: 'claimed', result_summary: null })
      expect(await chainLines(a)).toEqual(chainBefore)

      // The same answer, untouched, verifies and settles.
      rewrite.current = null
      const settled = await followOnce(a, d.id)
      expect(settled).toMatchObject({ status: 'completed', result: 'parser ported, 42 tests', lastError: null, nextPollAt: null, polls: 3 })
      expect(await localTaskState(a, taskId)).toMatchObject({ status: 'done', result_summary: 'parser ported, 42 tests' })
    })

    it('without a pinned peer JWKS a completion is never accepted, and the follower backs off', async () => {
      // The peer's key set was unavailable at delegation time, so no receipt key was pinned.
      const noKeys: typeof fetch = async (input, init) =>
        new URL(String(input)).pathname === '/.well-known/agent.json/keys' ? new Response('{"detail":"Not Found"}', { status: 404 }) : fetch(input, init)
      const { a } = await delegator({ fetch: noKeys })
      const b = await node('org-b')
      const taskId = await localTask(a)
      const d = await delegate(a, b, taskId)
      expect(d).toMatchObject({ status: 'accepted', peerIssuer: 'org-b', peerJwks: null })
      await completeAtB(b, d, 'parser ported, 42 tests')
      const chainBefore = await chainLines(a)

      const first = await followOnce(a, d.id)
      expect(first).toEqual({ ...d, lastError: 'follow: no pinned peer JWKS to verify the completion receipt', polls: 1, nextPollAt: T + 1 })
      const second = await followOnce(a, d.id)
      expect(second).toEqual({ ...first, polls: 2, nextPollAt: T + 2 })

      expect(await localTaskState(a, taskId)).toMatchObject({ status: 'claimed', result_summary: null })
      expect(await chainLines(a)).toEqual(chainBefore)
    })

    it('a remote task that fails or is canceled fails the local task and ends the delegation', async () => {
      const { a } = await delegator()
      const b = await node('org-b')
      const failingTask = await localTask(a, 'port the parser')
      const cancelledTask = await localTask(a, 'port the lexer')
      const failing = await delegate(a, b, failingTask)
      const cancelled = await delegate(a, b, cancelledTask)
      expect([failing.status, cancelled.status]).toEqual(['accepted', 'accepted'])

      // At B, one worker gives up on its task, and the operator cancels the other.
      const failingAtB = await remoteTaskId(b, failing)
      await b.client.POST('/tasks/{task_id}/claim', { params: { path: { task_id: failingAtB } } })
      expect(
        (await b.client.POST('/tasks/{task_id}/fail', { params: { path: { task_id: failingAtB } }, body: { reason: 'out of budget' } })).data!.status,
      ).toBe('failed')
      const cancelledAtB = await remoteTaskId(b, cancelled)
      expect(
        (await b.client.POST('/tasks/{task_id}/cancel', { params: { path: { task_id: cancelledAtB } }, body: { reason: 'not needed' } })).data!.status,
      ).toBe('cancelled')

      const failed = await followOnce(a, failing.id)
      // B's reason reaches A: B attests the ended task with the reason as an `error` artifact.
      expect(failed).toEqual({ ...failing, status: 'failed', result: 'out of budget', lastError: 'remote task failed', nextPollAt: null, polls: 1 })
      expect(await localTaskState(a, failingTask)).toMatchObject({
        status: 'failed',
        terminal_reason: 'delegated task failed at org-b: out of budget',
        result_summary: null,
      })

      const canceled = await followOnce(a, cancelled.id)
      expect(canceled).toEqual({ ...cancelled, status: 'failed', result: 'not needed', lastError: 'remote task canceled', nextPollAt: null, polls: 1 })
      expect(await localTaskState(a, cancelledTask)).toMatchObject({
        status: 'failed',
        terminal_reason: 'delegated task canceled at org-b: not needed',
        result_summary: null,
      })

      // Ended delegations are no longer followed.
      expect(await a.app.services.delegation.syncDue({ all: true })).toEqual([])
    })

    it('an unknown remote status or a body that is not JSON changes only lastError and the poll schedule', async () => {
      const { a, rewrite } = await delegator()
      const b = await node('org-b')
      const taskId = await localTask(a)
      const d = await asCardOnly(a, await delegate(a, b, taskId))
      const chainBefore = await chainLines(a)

      const paused = editBody((text) => text.replace('"status":"submitted"', '"status":"paused"'))
      rewrite.current = paused
      const unknown = await followOnce(a, d.id)
      expect(paused.edited).toBe(1)
      expect(unknown).toEqual({ ...d, lastError: 'follow: unknown remote status "paused"', polls: 1, nextPollAt: T + 1 })

      const dropped = editBody((text) => text.replace(/"status":"submitted",?/, ''))
      rewrite.current = dropped
      const missing = await followOnce(a, d.id)
      expect(dropped.edited).toBe(1)
      expect(missing).toEqual({ ...d, lastError: 'follow: unknown remote status undefined', polls: 2, nextPollAt: T + 2 })

      rewrite.current = async () => new Response('<html>502 Bad Gateway</html>', { status: 200, headers: { 'content-type': 'text/html' } })
      const notJson = await followOnce(a, d.id)
      expect(notJson).toEqual({ ...d, lastError: 'follow: the peer answered with a body that is not JSON', polls: 3, nextPollAt: T + 4 })

      expect(await localTaskState(a, taskId)).toMatchObject({ status: 'claimed', result_summary: null })
      expect(await chainLines(a)).toEqual(chainBefore)
      expect((await b.client.GET('/tasks/{task_id}', { params: { path: { task_id: await remoteTaskId(b, d) } } })).data!.status).toBe('open')
    })

    it('a peer that answers with an error or not at all while followed changes only lastError and the poll schedule', async () => {
      let token = OPERATOR_TOKEN
      const { a, rewrite } = await delegator({ peerToken: () => token })
      const b = await node('org-b')
      const taskId = await localTask(a)
      const d = await asCardOnly(a, await delegate(a, b, taskId))
      const chainBefore = await chainLines(a)

      // B refuses the follower's credentials: a final answer, not retried.
      token = 'not-the-operator-token-0123456789'
      let answers = 0
      rewrite.current = async (res) => {
        answers++
        return res
      }
      const refused = await followOnce(a, d.id)
      expect(answers).toBe(1)
      expect(refused).toEqual({ ...d, lastError: 'follow: HTTP 401: Invalid or expired authentication token', polls: 1, nextPollAt: T + 1 })
      token = OPERATOR_TOKEN

      // B is overloaded on every attempt: retried up to the policy, then recorded.
      let attempts = 0
      rewrite.current = async () => {
        attempts++
        return new Response('{"detail":"busy"}', { status: 503, headers: { 'content-type': 'application/json' } })
      }
      const busy = await followOnce(a, d.id)
      expect(attempts).toBe(FAST_RETRY.maxAttempts)
      expect(busy).toEqual({ ...d, lastError: 'follow: HTTP 503: busy', polls: 2, nextPollAt: T + 2 })

      // Once B answers again, the error is cleared.
      rewrite.current = null
      const recovered = await followOnce(a, d.id)
      expect(recovered).toEqual({ ...d, lastError: null, polls: 3, nextPollAt: T + 4 })

      // B goes away.
      await b.close()
      const down = await followOnce(a, d.id)
      expect(down).toEqual({ ...d, lastError: 'follow: fetch failed (ECONNREFUSED)', polls: 4, nextPollAt: T + 8 })

      expect(await localTaskState(a, taskId)).toMatchObject({ status: 'claimed', result_summary: null })
      expect(await chainLines(a)).toEqual(chainBefore)
    })
  })
}
