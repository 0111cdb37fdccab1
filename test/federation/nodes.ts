/**
 * Shared ground of the two-node federation suites: in-process nodes (each its own store, keys and HTTP server on
 * loopback) with retries that do not wait, and what the tests read off them.
 */
import { afterEach } from 'vitest'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { issueCapabilityCard } from '../../src/cards/issue-capability-card.js'
import type { SignedCapabilityCard } from '../../src/cards/index.js'
import type { Delegation } from '../../src/federation/delegation.js'
import type { ServiceDeps } from '../../src/services.js'
import type { Engine } from '../../src/store/engine.js'
import type { KeyObject } from 'node:crypto'
import { signPeerRequest } from '../../src/crypto/peer-http-signature.js'
import { type Clock, systemClock } from '../../src/runtime.js'
import type { HttpResult } from '../helpers/raw-http.js'
import { OPERATOR_TOKEN, type TestApp, type TestAppOptions, rawRequest, startTestApp } from '../helpers/test-app.js'

/** A peer's capability card: `issuer`, signed by `key`, issued at `now` (Unix seconds), valid for an hour, with middling policies. */
export function peerCapabilityCard(issuer: string, key: KeyObject, now: number): Promise<SignedCapabilityCard> {
  return issueCapabilityCard({
    issuer,
    name: issuer,
    tools: ['task_orchestration'],
    policies: { cost_cap_usd: 10, redaction_tier: 'standard', sandbox_profile: 'container' },
    ttlSeconds: 3600,
    privateKey: key,
    now,
  })
}

export const FAST_RETRY = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 5_000, maxAnswerBytes: 1_048_576 }
export const OPEN = { maxCostCapUsd: Infinity, minRedactionTier: 'none', minSandboxProfile: 'none' }

/**
 * A factory of nodes for one `describe`: each is named by its issuer (public URL `http://<issuer>.test`), presents
 * the operator token to peers, and is closed after every test.
 */
export function federationNodes(engine: Engine): (issuer: string, options?: TestAppOptions, federation?: ServiceDeps['federation']) => Promise<TestApp> {
  const started: TestApp[] = []
  afterEach(async () => {
    await Promise.all(started.splice(0).map((a) => a.close()))
  })
  return async (issuer, options = {}, federation = {}) => {
    const app = await startTestApp({
      engine,
      profile: { issuer, publicBaseUrl: `http://${issuer}.test` },
      issuer,
      federation: { retry: FAST_RETRY, sleep: async () => {}, peerToken: () => OPERATOR_TOKEN, ...federation },
      ...options,
    })
    started.push(app)
    return app
  }
}

export const cardFingerprint = (app: TestApp): string => keyFingerprint(app.keys.capabilityCard.publicKey)

/** A local task to delegate, role `backend`. */
export async function localTask(app: TestApp, title = 'port the parser'): Promise<string> {
  const created = await app.client.POST('/tasks', { body: { title, description: `${title}, with tests`, role: 'backend' } })
  return created.data!.id
}

/** The node's tracker-audit chain, line by line as exported. */
export async function chainLines(app: TestApp): Promise<string[]> {
  const lines: string[] = []
  for await (const line of app.app.services.lineage.exportJsonl()) lines.push(line)
  return lines
}

type DelegateInput = Parameters<TestApp['app']['services']['delegation']['delegate']>[0]

/** A delegates `taskId` to B, pinning B's card fingerprint, with open policy requirements unless overridden. */
export function delegate(a: TestApp, b: TestApp, taskId: string, overrides: Partial<DelegateInput> = {}): Promise<Delegation> {
  return a.app.services.delegation.delegate({
    tenantId: 'default',
    peerUrl: b.url,
    peerToken: OPERATOR_TOKEN,
    taskId,
    trustedFingerprints: [cardFingerprint(b)],
    requirements: OPEN,
    ...overrides,
  })
}

/**
 * `POST /a2a/v0/tasks` of `body` as a signing peer sends it: signed (RFC 9421, label `peer`) by `key`, the key of
 * the card in the body, with the operator token unless `token` names another.
 */
export function signedDelivery(app: TestApp, body: string, key: KeyObject, token?: string, clock: Clock = systemClock): Promise<HttpResult> {
  return signedCall(app, { method: 'POST', path: '/a2a/v0/tasks', body, key, clock, ...(token !== undefined && { token }) })
}

/**
 * A request to `app` signed (RFC 9421, label `peer`) by `key` as a peer signs it, with the operator token unless
 * `token` names another. `signed` overrides what the signature is made over (method, path, body), to tamper with
 * the request after it was signed.
 */
export async function signedCall(
  app: TestApp,
  call: {
    method: string
    path: string
    body?: string
    key: KeyObject
    token?: string
    clock?: Clock
    nonce?: string
    headers?: Record<string, string>
    signed?: { method?: string; path?: string; body?: string }
  },
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...(call.body !== undefined && { 'content-type': 'application/json' }), ...call.headers }
  const signedBody = call.signed?.body ?? call.body
  const fields = await signPeerRequest(
    { keyid: keyFingerprint(call.key), privateKey: call.key },
    call.clock ?? systemClock,
    {
      method: call.signed?.method ?? call.method,
      url: app.url + (call.signed?.path ?? call.path),
      headers,
      ...(signedBody !== undefined && { body: signedBody }),
    },
    ...(call.nonce !== undefined ? [call.nonce] : []),
  )
  return rawRequest(app.url, {
    method: call.method,
    path: call.path,
    headers: { ...headers, ...fields },
    ...(call.body !== undefined && { body: call.body }),
    ...(call.token !== undefined && { token: call.token }),
  })
}
