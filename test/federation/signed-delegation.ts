/**
 * A delegation delivered signed by the sender's card key (issue 24), as the suites on its rule set it up: node B
 * pinning the delegator `peerorg`, a tenant-bound operator token of B's for it (what docs/federation.md recommends),
 * and deliveries signed by the delegator's key.
 */
import { expect } from 'vitest'
import { generateEd25519KeyPair } from '../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import type { TestApp, TestAppOptions } from '../helpers/test-app.js'
import { OPEN, type federationNodes, peerCapabilityCard, signedDelivery } from './nodes.js'

export const DELEGATOR = generateEd25519KeyPair()

/** The body of a delivery from `peerorg`, carrying its capability card signed by `key`. */
export async function delivery(id: string, key = DELEGATOR): Promise<string> {
  const card = await peerCapabilityCard('peerorg', key.privateKey, Date.now() / 1000 - 60)
  const sender = { name: 'peerorg', description: '', capabilities: ['task_orchestration'], endpoint: 'http://peerorg.test', capability_card: card }
  return JSON.stringify({ sender, task: { id, message: 'port the parser' } })
}

/** B pinning the delegator, and a tenant-bound operator token of B's for `peerorg`. */
export async function signedDelegationNode(
  node: ReturnType<typeof federationNodes>,
  options: { requireInbound?: boolean } & TestAppOptions = {},
): Promise<{ b: TestApp; token: string }> {
  const { requireInbound, ...rest } = options
  const b = await node('org-b', {
    inboundTrust: { trustedPeerFingerprints: [keyFingerprint(DELEGATOR.publicKey)], requirements: OPEN, strictLineage: false },
    ...(requireInbound !== undefined && { peerSignatures: { requireInbound } }),
    ...rest,
  })
  const token = (await b.tokens.create({ role: 'operator', tenant: 'peerorg', expiresInSeconds: null })).token
  return { b, token }
}

/** A delegation delivered signed by the delegator: its A2A task id and its linked Bernstein task id. */
export async function delegated(b: TestApp, token: string, id = 'remote-1'): Promise<{ a2aTaskId: string; taskId: string }> {
  const accepted = await signedDelivery(b, await delivery(id), DELEGATOR.privateKey, token)
  expect(accepted.status, accepted.text).toBe(202)
  const json = accepted.json as Record<string, unknown>
  return { a2aTaskId: json['a2a_task_id'] as string, taskId: json['task_id'] as string }
}
