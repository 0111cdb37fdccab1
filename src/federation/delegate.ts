/**
 * The delegating side of federation (the seed's "consume side"): verify the peer's capability card (signature,
 * pinned issuer, policies) before any delegation I/O, pin its receipt key, and deliver the task with this node's
 * signed card and the task's lineage envelope, through the typed client over a retrying `fetch`.
 *
 * @module
 */
import type { A2AMessage } from '../a2a/a2a-task.js'
import type { LineageService } from '../lineage/lineage.service.js'
import { type PyObject, pythonCanonical } from '../canonical/python-json.js'
import type { PolicyRequirements } from '../cards/policy-gate.js'
import { fetchAndVerifyPeerCard, type PeerCardResult } from '../client/index.js'
import { AppError, taskNotFound } from '../errors.js'
import { LINEAGE_ENVELOPE_FIELD, lineageEnvelopePayload } from '../lineage/envelope.js'
import type { Metrics } from '../signature-metrics.js'
import type { Clock, Ids } from '../runtime.js'
import type { Store } from '../store/store.js'
import type { TaskService } from '../tasks/task.service.js'
import type { Delegation, TrustLevel } from './delegation.js'
import { type PeerSigner, freshNonce, pinnedPeerKey } from '../crypto/peer-http-signature.js'
import { peerExchange } from './peer-signature.js'
import { publicKeyFromPem } from '../crypto/ed25519.js'
import { LedgerEntry } from './ledger.js'
import { bearer, normalisePeerUrl, peerClient, peerErrorDetail, peerOutcome, rawJsonBody } from './peer-client.js'
import { type PeerFetchDeps, PeerUnreachable, isRetryableStatus, peerFetch } from './peer-fetch.js'

export interface DelegateInput {
  readonly tenantId: string
  readonly peerUrl: string
  readonly peerToken: string | null
  readonly taskId: string
  /** Defaults to the local task's description (or title). */
  readonly message?: string
  readonly role?: string
  readonly trustedFingerprints: readonly string[]
  readonly requirements: PolicyRequirements
  /** Delegate even if the peer cannot prove it holds its card key (Bernstein 3.x); defaults to the node's setting. */
  readonly allowUnsignedPeer?: boolean
}

export interface SendMessageInput {
  readonly tenantId: string
  readonly peerUrl: string
  readonly peerToken: string | null
  readonly sender: string
  readonly recipient: string
  readonly content: string
  /** The task's id at the peer. */
  readonly taskId: string
}

export interface DelegatorDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
  readonly tasks: TaskService
  readonly lineage: LineageService
  /** This node as a v0.1 sender card, carrying its signed capability card under `capability_card`. */
  readonly senderCard: () => Promise<PyObject>
  readonly peer: PeerFetchDeps
  /** Told about the peer cards this side verifies. */
  readonly metrics?: Metrics
  /** This node's card key: every request to a peer is signed with it. */
  readonly signer: PeerSigner
  /** How far a peer's signature `created` may be from now, either side, in seconds. */
  readonly signatureWindowSeconds: number
  /** Delegate to peers that cannot prove possession of their card key (the ledger then says `card-only`). */
  readonly allowUnsignedPeers: boolean
}

/** Delegates a local task to a peer, or returns its ledger row unchanged when the peer already accepted it. */
export async function delegate(deps: DelegatorDeps, input: DelegateInput): Promise<Delegation> {
  const peerUrl = normalisePeerUrl(input.peerUrl)
  const task = await deps.store.repos.tasks.get(input.tenantId, input.taskId)
  if (!task) throw taskNotFound(input.taskId)
  const now = deps.clock.now()
  const row = await deps.store.repos.federation.insertOrGet({
    id: deps.ids.shortId(),
    tenantId: input.tenantId,
    peerUrl,
    localTaskId: task.id,
    remoteId: null,
    remoteTaskId: null,
    remoteA2ATaskId: null,
    status: 'pending',
    attempts: 0,
    lastError: null,
    peerIssuer: null,
    peerFingerprint: null,
    peerJwks: null,
    message: input.message ?? (task.description || task.title),
    role: input.role ?? task.role,
    result: null,
    createdAt: now,
    updatedAt: now,
    nextPollAt: null,
    polls: 0,
    trustLevel: null,
    peerCardKey: null,
  })
  // Idempotent: a delegation the peer already accepted is not sent again.
  if (row.status !== 'pending' && row.status !== 'failed' && row.status !== 'rejected') return row
  const entry = new LedgerEntry(row, deps.store.repos.federation, deps.clock)
  await entry.save({ status: 'pending', lastError: null })
  const fromPeer = peerFetch(deps.peer)

  // 1. The peer's capability card: any rejection stops here, before any delegation I/O.
  let card: PeerCardResult
  try {
    card = await fetchAndVerifyPeerCard(peerUrl, {
      trustedFingerprints: input.trustedFingerprints,
      requireCostCapUsd: input.requirements.maxCostCapUsd,
      requireRedactionTier: input.requirements.minRedactionTier,
      requireSandboxProfile: input.requirements.minSandboxProfile,
      now: deps.clock.now(),
      fetch: fromPeer,
      ...(deps.metrics && { metrics: deps.metrics }),
    })
  } catch (error) {
    if (error instanceof PeerUnreachable) return entry.save({ status: 'failed', lastError: `capability card unreachable: ${error.message}` })
    return entry.save({ status: 'rejected', lastError: `capability card unusable: ${(error as Error).message}` })
  }
  if (!card.ok) return entry.save({ status: 'rejected', lastError: cardRefusal(card) })
  const issuer = card.value.card.card.issuer
  const cardKeyPem = card.value.card.card.public_key_pem
  const key = pinnedPeerKey(publicKeyFromPem(cardKeyPem))

  // 2. Proof of possession, before any secret leaves: a fresh challenge the peer must answer signed by the key of
  //    the card just pinned. A server that merely re-serves the card cannot, and never sees the token.
  const proven = peerFetch({ ...deps.peer, exchange: peerExchange(deps.signer, deps.clock, deps.signatureWindowSeconds, key) })
  const nonce = freshNonce()
  const proof = await peerOutcome(peerClient(peerUrl, proven).GET('/a2a/v0/proof', { params: { query: { nonce } }, parseAs: 'text' }))
  let trustLevel: TrustLevel
  if (proof.kind === 'network')
    return entry.save({ status: 'failed', lastError: `proof of possession: peer unreachable after ${proof.attempts} attempts: ${proof.error}` })
  if (proof.kind === 'response') {
    const echoed = proofEchoes(proof, nonce, key.keyid)
    if (echoed !== null) return entry.save({ status: 'rejected', lastError: `proof of possession failed: ${echoed}` })
    trustLevel = 'proven'
  } else if (proof.code === 'missing' && (input.allowUnsignedPeer ?? deps.allowUnsignedPeers)) {
    // A peer that cannot sign (Bernstein 3.x), taken on its card alone because the operator said so.
    trustLevel = 'card-only'
  } else {
    const why =
      proof.code === 'missing'
        ? `the peer did not prove it holds the key of card ${key.keyid} (its answer ${proof.status} is unsigned); the token was not sent. ` +
          'Delegate to a peer that cannot sign (Bernstein 3.x) only with --allow-unsigned-peer (BERNSTEIN_ALLOW_UNSIGNED_PEERS=1)'
        : `the peer's answer is not signed by the pinned card key ${key.keyid} (${proof.code}: ${proof.error}); the token was not sent`
    return entry.save({ status: 'rejected', lastError: `proof of possession failed: ${why}`, peerIssuer: issuer, peerFingerprint: card.value.fingerprint })
  }
  // From here every request is signed; a proven peer's every answer must be signed by the pinned key.
  const exchange = peerExchange(deps.signer, deps.clock, deps.signatureWindowSeconds, trustLevel === 'proven' ? key : null)

  // 3. Pin the peer's receipt key now, from the same origin, to verify its completion receipt later (a proven peer's
  //    JWKS comes signed by its card key, which vouches for the receipt keys in it).
  const client = peerClient(peerUrl, peerFetch({ ...deps.peer, exchange }))
  const jwks = await peerOutcome(client.GET('/.well-known/agent.json/keys', { parseAs: 'text' }))
  const peerJwks = jwks.kind === 'response' && jwks.status === 200 ? jwks.text : null
  await entry.save({ peerIssuer: issuer, peerFingerprint: card.value.fingerprint, peerJwks, trustLevel, peerCardKey: cardKeyPem })

  // 4. Deliver the task with our signed card and the task's lineage envelope.
  const envelope = await deps.lineage.envelope(task.id)
  const body = pythonCanonical({
    sender: await deps.senderCard(),
    task: { id: task.id, message: entry.row.message, role: entry.row.role },
    [LINEAGE_ENVELOPE_FIELD]: lineageEnvelopePayload(envelope),
  })
  let attempts = entry.row.attempts
  const countAttempt = async (): Promise<void> => void (await entry.save({ status: 'sent', attempts: ++attempts }))
  const sent = await peerOutcome(
    client.POST('/a2a/v0/tasks', {
      fetch: peerFetch({ ...deps.peer, exchange, onAttempt: countAttempt }),
      headers: bearer(input.peerToken),
      middleware: [rawJsonBody(body)],
      parseAs: 'text',
    }),
  )
  if (sent.kind === 'network') return entry.save({ status: 'failed', lastError: `peer unreachable after ${sent.attempts} attempts: ${sent.error}` })
  if (sent.kind === 'unverified')
    return entry.save({ status: 'failed', lastError: `peer answered ${sent.status} not signed by its pinned card key (${sent.code}): ${sent.error}` })
  if (sent.status !== 202) {
    // A status worth retrying that outlasted the retries may pass later; any other is the peer's final answer.
    const status = isRetryableStatus(sent.status) ? 'failed' : 'rejected'
    return entry.save({ status, lastError: `peer answered ${sent.status}: ${peerErrorDetail(sent.text)}` })
  }
  let accepted: Record<string, unknown>
  try {
    accepted = JSON.parse(sent.text) as Record<string, unknown>
  } catch {
    return entry.save({ status: 'failed', lastError: 'peer answered 202 with a body that is not JSON' })
  }
  const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)
  const d = await entry.save({
    status: 'accepted',
    remoteId: str(accepted['id']),
    // The peer's linked task: what `POST <peer>/a2a/message` takes as `task_id` (`federation message --task-id`).
    remoteTaskId: str(accepted['task_id']),
    remoteA2ATaskId: str(accepted['a2a_task_id']),
    lastError: null,
    nextPollAt: deps.clock.now(),
  })
  // The work now happens at the peer: hold the local task so local workers do not pick it up too.
  if (task.status === 'open') await deps.tasks.claim(task.tenantId, task.id, `a2a:${issuer}`).catch(() => undefined)
  return d
}

/** Null when a proven answer to the challenge echoes our nonce and names the pinned key, else what is wrong. */
function proofEchoes(answer: { status: number; text: string }, nonce: string, keyid: string): string | null {
  if (answer.status !== 200) return `the peer answered the challenge with ${answer.status}: ${peerErrorDetail(answer.text)}`
  try {
    const body = JSON.parse(answer.text) as { nonce?: unknown; key_fingerprint?: unknown }
    if (body.nonce !== nonce) return 'the signed answer does not echo our nonce'
    if (body.key_fingerprint !== keyid) return `the signed answer names key ${String(body.key_fingerprint)}, not ${keyid}`
  } catch {
    return 'the signed answer is not JSON'
  }
  return null
}

/** The ledger's `lastError` for a card the delegation may not go to. */
function cardRefusal(card: Extract<PeerCardResult, { ok: false }>): string {
  if (card.code === 'http') return `capability card: HTTP ${card.httpStatus}`
  if (card.code === 'malformed' || card.code === 'invalid_argument') return `capability card unusable: ${card.detail}`
  return `capability card rejected (${card.code}): ${card.detail}`
}

/**
 * Sends a message into a task at a peer (`POST <peer>/a2a/message`, `task_id` being the peer's task id) and
 * records it as `outbound` with the peer as `external_endpoint` once the peer accepted it (2xx). A refusal or an
 * unreachable peer records nothing and throws.
 */
export async function sendMessage(
  deps: Pick<DelegatorDeps, 'store' | 'clock' | 'ids' | 'peer' | 'signer' | 'signatureWindowSeconds'>,
  input: SendMessageInput,
): Promise<A2AMessage> {
  const peerUrl = normalisePeerUrl(input.peerUrl)
  // Into a task delegated to a proven peer: its answer must be signed by the card key pinned then.
  const delegated = (await deps.store.repos.federation.list(input.tenantId)).find(
    (d) => d.peerUrl === peerUrl && d.remoteTaskId === input.taskId && d.trustLevel === 'proven' && d.peerCardKey !== null,
  )
  const key = delegated?.peerCardKey ? pinnedPeerKey(publicKeyFromPem(delegated.peerCardKey)) : null
  const exchange = peerExchange(deps.signer, deps.clock, deps.signatureWindowSeconds, key)
  const outcome = await peerOutcome(
    peerClient(peerUrl, peerFetch({ ...deps.peer, exchange })).POST('/a2a/message', {
      headers: bearer(input.peerToken),
      body: { sender: input.sender, recipient: input.recipient, content: input.content, task_id: input.taskId },
      parseAs: 'text',
    }),
  )
  if (outcome.kind === 'network') throw new AppError('unavailable', `peer unreachable after ${outcome.attempts} attempts: ${outcome.error}`)
  if (outcome.kind === 'unverified')
    throw new AppError('rejected', `peer answered ${outcome.status} not signed by its pinned card key (${outcome.code}): ${outcome.error}`)
  if (outcome.status < 200 || outcome.status > 299) throw new AppError('rejected', `peer answered ${outcome.status}: ${peerErrorDetail(outcome.text)}`)
  const message: A2AMessage = {
    id: deps.ids.shortId(),
    tenantId: input.tenantId,
    sender: input.sender,
    recipient: input.recipient,
    content: input.content,
    taskId: input.taskId,
    direction: 'outbound',
    delivered: true,
    externalEndpoint: peerUrl,
    createdAt: deps.clock.now(),
  }
  await deps.store.repos.a2a.insertMessage(message)
  return message
}
