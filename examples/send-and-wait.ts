/**
 * A peer sends a task and waits for its end with exponential backoff, and has the completion receipt verified
 * against the node's published key before it calls the task done. So that it finishes on a fresh node, this script
 * also plays the worker that claims and completes the task.
 *
 *   RECEIPT_FINGERPRINT=sha256:… npx tsx examples/send-and-wait.ts
 *
 * With RECEIPT_FINGERPRINT (the fingerprint of the node's receipt key, from its operator) the client fetches the
 * node's JWKS and checks the key against it; without it, the example trusts the JWKS the node serves.
 *
 * In your own project: import { createApiClient, sendAndWait, type ReceiptTrust } from '@bernstein-a2a/client'
 */
import { type ReceiptTrust, createApiClient, sendAndWait } from '../src/client/index.js'
import { baseUrl, token } from './env.js'

const client = createApiClient({ baseUrl, ...(token !== undefined && { token }) })
const role = `example-${Date.now()}`

/** The worker side: claim the next task of our role and complete it. */
async function work(): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const next = await client.GET('/tasks/next/{role}', { params: { path: { role }, query: { agent_id: 'example-worker' } } })
    if (next.data) {
      await client.POST('/tasks/{task_id}/progress', { params: { path: { task_id: next.data.id } }, body: { message: 'reproduced', percent: 50 } })
      await client.POST('/tasks/{task_id}/complete', { params: { path: { task_id: next.data.id } }, body: { result_summary: 'fixed the race in login()' } })
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const pinned = process.env['RECEIPT_FINGERPRINT']
const verify: ReceiptTrust = pinned ? { trustedFingerprints: [pinned] } : { jwks: await (await fetch(`${baseUrl}/.well-known/agent.json/keys`)).json() }

const [result] = await Promise.all([
  sendAndWait(
    client,
    { sender: 'peer-agent@globex', message: 'Fix the flaky login test', role },
    { initialDelayMs: 100, maxDelayMs: 1_000, timeoutMs: 30_000, verify },
  ),
  work(),
])
if (!result.ok) throw new Error(`no result: ${result.code}: ${result.detail} ${JSON.stringify(result.error)}`)
const { task, status, polls, verification, receipt } = result.value
console.log(`task ${task.id} ${status} after ${polls} polls: ${task.artifacts.map((a) => a.name).join(', ')}`)
console.log(`receipt verified: key ${verification?.ok ? verification.value.verifiedKeyId : '?'}, entry ${receipt?.entry_hash}`)
