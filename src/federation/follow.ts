/**
 * The following side of federation: poll each delegated task at its peer until it ends, and settle the local task
 * only when the peer's completion receipt verifies against the key pinned from its JWKS at delegation.
 *
 * @module
 */
import { verifyA2AReceipt } from '../receipts/verify-a2a-receipt.js'
import type { Schema } from '../contract.js'
import { AppError } from '../errors.js'
import type { Metrics } from '../signature-metrics.js'
import type { Clock } from '../runtime.js'
import type { Store } from '../store/store.js'
import type { TaskService } from '../tasks/task.service.js'
import { type Delegation, FOLLOWED_STATUSES } from './delegation.js'
import { LedgerEntry } from './ledger.js'
import { type Unverified, bearer, peerClient, peerErrorDetail, peerOutcome } from './peer-client.js'
import { type PeerFetchDeps, peerFetch } from './peer-fetch.js'
import { type PeerSigner, pinnedPeerKey } from '../crypto/peer-http-signature.js'
import { peerExchange } from './peer-signature.js'
import { publicKeyFromPem } from '../crypto/ed25519.js'

export interface FollowerDeps {
  readonly store: Store
  readonly clock: Clock
  readonly tasks: TaskService
  readonly peer: PeerFetchDeps
  /** The bearer token to use towards a peer when following it (tokens are never stored in the ledger). */
  readonly peerToken: (peerUrl: string) => string | null
  /** Told about the completion receipts this side verifies. */
  readonly metrics?: Metrics
  /** This node's card key, which signs every poll. */
  readonly signer: PeerSigner
  /** How far a peer's signature `created` may be from now, either side, in seconds. */
  readonly signatureWindowSeconds: number
  /** Backoff between polls of one delegation. */
  readonly pollBaseMs?: number
  readonly pollMaxMs?: number
}

type RemoteTask = Unverified<Schema<'A2ATaskResponse'>>
type RemoteArtifact = Unverified<Schema<'A2AArtifactResponse'>>

/** Polls one delegation's remote task once and settles it when it has ended. */
export async function follow(deps: FollowerDeps, delegation: Delegation): Promise<Delegation> {
  const d = delegation
  if (!FOLLOWED_STATUSES.has(d.status) || d.remoteA2ATaskId === null) return d
  const entry = new LedgerEntry(d, deps.store.repos.federation, deps.clock)
  const base = deps.pollBaseMs ?? 1000
  const next = (): number => deps.clock.now() + Math.min(deps.pollMaxMs ?? 60_000, base * 2 ** Math.min(d.polls, 16)) / 1000
  // A proven peer's answers must be signed by the card key pinned at delegation; a `card-only` peer's cannot be.
  const key = d.trustLevel === 'proven' && d.peerCardKey !== null ? pinnedPeerKey(publicKeyFromPem(d.peerCardKey)) : null
  const exchange = peerExchange(deps.signer, deps.clock, deps.signatureWindowSeconds, key)
  const outcome = await peerOutcome(
    peerClient(d.peerUrl, peerFetch({ ...deps.peer, exchange })).GET('/a2a/tasks/{a2a_task_id}', {
      params: { path: { a2a_task_id: d.remoteA2ATaskId } },
      headers: bearer(deps.peerToken(d.peerUrl)),
      parseAs: 'text',
    }),
  )
  if (outcome.kind === 'unverified') {
    const why = `the peer's answer (${outcome.status}) is not signed by its pinned card key (${outcome.code}): ${outcome.error}`
    return entry.save({ lastError: `follow: ${why}`, polls: d.polls + 1, nextPollAt: next() })
  }
  if (outcome.kind === 'network' || outcome.status !== 200) {
    const why = outcome.kind === 'network' ? outcome.error : `HTTP ${outcome.status}: ${peerErrorDetail(outcome.text)}`
    return entry.save({ lastError: `follow: ${why}`, polls: d.polls + 1, nextPollAt: next() })
  }
  let body: RemoteTask
  try {
    body = JSON.parse(outcome.text) as RemoteTask
  } catch {
    return entry.save({ lastError: 'follow: the peer answered with a body that is not JSON', polls: d.polls + 1, nextPollAt: next() })
  }
  const status = body.status
  if (status === 'submitted') return entry.save({ polls: d.polls + 1, nextPollAt: next(), lastError: null })
  if (status === 'working' || status === 'input-required' || status === 'auth-required') {
    return entry.save({ status: 'in_progress', polls: d.polls + 1, nextPollAt: next(), lastError: null })
  }
  if (status !== 'completed' && status !== 'failed' && status !== 'canceled') {
    return entry.save({ lastError: `follow: unknown remote status ${JSON.stringify(status)}`, polls: d.polls + 1, nextPollAt: next() })
  }
  // The outcome is final only if the peer's completion receipt verifies against the key pinned at delegation.
  if (d.peerJwks === null)
    return entry.save({ lastError: 'follow: no pinned peer JWKS to verify the completion receipt', polls: d.polls + 1, nextPollAt: next() })
  const verdict = await verifyA2AReceipt(body.receipt ?? null, outcome.text, { jwks: JSON.parse(d.peerJwks) as unknown })
  deps.metrics?.signatureVerified('receipt', verdict.ok)
  if (!verdict.ok) return entry.save({ lastError: `completion receipt did not verify: ${verdict.detail}`, polls: d.polls + 1, nextPollAt: next() })
  const artifacts = Array.isArray(body.artifacts) ? (body.artifacts as RemoteArtifact[]) : []
  // The peer's last `result` artifact on completion, its last `error` artifact (the reason) on failure.
  const carried = status === 'completed' ? 'result' : 'error'
  const result =
    artifacts
      .filter((a) => a.name === carried && typeof a.data === 'string')
      .map((a) => a.data as string)
      .pop() ?? null
  const summary = result ?? `${status} at ${d.peerIssuer ?? d.peerUrl}`
  if (status === 'completed') {
    await settle(() => deps.tasks.complete(d.tenantId, d.localTaskId, summary))
    return entry.save({ status: 'completed', result: summary, lastError: null, nextPollAt: null, polls: d.polls + 1 })
  }
  await settle(() => deps.tasks.fail(d.tenantId, d.localTaskId, `delegated task ${status} at ${d.peerIssuer ?? d.peerUrl}: ${summary}`))
  return entry.save({ status: 'failed', result: summary, lastError: `remote task ${status}`, nextPollAt: null, polls: d.polls + 1 })
}

/** One pass over every delegation due for a poll (`all`: every followed one, ignoring backoff). */
export async function syncDue(deps: FollowerDeps, options: { all?: boolean } = {}): Promise<Delegation[]> {
  const now = deps.clock.now()
  const lease = now + (deps.peer.policy.timeoutMs / 1000) * 2
  const due = await deps.store.transaction((repos) => repos.federation.claimDue(options.all ? Number.MAX_VALUE : now, lease))
  const settled: Delegation[] = []
  for (const d of due) settled.push(await follow(deps, d))
  return settled
}

async function settle(move: () => Promise<unknown>): Promise<void> {
  try {
    await move()
  } catch (error) {
    // The local task was moved by someone else meanwhile (e.g. cancelled): the ledger still records the outcome.
    if (!(error instanceof AppError && (error.code === 'illegal_transition' || error.code === 'version_conflict'))) throw error
  }
}
