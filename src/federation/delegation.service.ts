import { type PyObject, parsePythonJson, pythonCanonical } from '../canonical/python-json.js'
import { PeerCardRejected, consumePeerCard, parseCardFile } from '../cards/index.js'
import type { PolicyRequirements } from '../cards/policy-gate.js'
import type { Metrics } from '../signature-metrics.js'
import { verifyA2AReceipt } from '../receipts/verify-a2a-receipt.js'
import type { LineageService } from '../lineage/lineage.service.js'
import { AppError, taskNotFound } from '../errors.js'
import { LINEAGE_ENVELOPE_FIELD, lineageEnvelopePayload } from '../lineage/envelope.js'
import type { A2AMessage } from '../a2a/a2a-task.js'
import type { Clock, Ids } from '../runtime.js'
import type { Store } from '../store/store.js'
import type { TaskService } from '../tasks/task.service.js'
import { type Delegation, FOLLOWED_STATUSES } from './delegation.js'
import { DEFAULT_RETRY_POLICY, type RetryPolicy, requestPeer } from './peer-http.js'

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
}

export interface DelegationServiceDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
  readonly tasks: TaskService
  readonly lineage: LineageService
  /** This node as a v0.1 sender card, carrying its signed capability card under `capability_card`. */
  readonly senderCard: () => Promise<PyObject>
  /** The bearer token to use towards a peer when following it (tokens are never stored in the ledger). */
  readonly peerToken: (peerUrl: string) => string | null
  readonly fetch?: typeof globalThis.fetch
  readonly sleep?: (ms: number) => Promise<void>
  readonly retry?: RetryPolicy
  /** Told about the peer cards and completion receipts this service verifies. */
  readonly metrics?: Metrics
  /** Follower backoff between polls of one delegation. */
  readonly pollBaseMs?: number
  readonly pollMaxMs?: number
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

export function normalisePeerUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new AppError('invalid_request', `peer URL '${url}' is not an absolute http(s) URL`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new AppError('invalid_request', `peer URL '${url}' is not http(s)`)
  return url.replace(/\/+$/, '')
}

function headers(token: string | null, json: boolean): Record<string, string> {
  return { accept: 'application/json', ...(json && { 'content-type': 'application/json' }), ...(token && { authorization: `Bearer ${token}` }) }
}

/** How much of a peer's error answer a ledger row's `lastError` keeps, in UTF-16 units. */
const MAX_PEER_DETAIL = 500

/**
 * A peer's error answer for the ledger: its `detail` when that is a string, else its text, cut to
 * {@link MAX_PEER_DETAIL} (marked with `…`) and never inside a surrogate pair, which would leave half a character.
 */
export function peerErrorDetail(text: string): string {
  let detail = text
  try {
    const body = JSON.parse(text) as { detail?: unknown } | null
    if (typeof body?.detail === 'string') detail = body.detail
  } catch {
    // Not JSON: the text itself.
  }
  if (detail.length <= MAX_PEER_DETAIL) return detail
  const cut = detail.slice(0, MAX_PEER_DETAIL)
  return (/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut) + '…'
}

/**
 * Delegation to peer orchestrators (the seed's "consume side"): verify the peer's capability card (signature,
 * pinned issuer, policies) before any delegation I/O, deliver the task with this node's signed card and the
 * task's lineage envelope, keep a persisted ledger, and follow the remote task to its end, verifying the peer's
 * completion receipt against the key pinned from its JWKS.
 */
export class DelegationService {
  readonly #deps: DelegationServiceDeps
  readonly #fetch: typeof globalThis.fetch
  readonly #sleep: (ms: number) => Promise<void>
  readonly #retry: RetryPolicy

  constructor(deps: DelegationServiceDeps) {
    this.#deps = deps
    this.#fetch = deps.fetch ?? globalThis.fetch
    this.#sleep = deps.sleep ?? sleep
    this.#retry = deps.retry ?? DEFAULT_RETRY_POLICY
  }

  list(tenantId?: string): Promise<Delegation[]> {
    return this.#deps.store.repos.federation.list(tenantId)
  }

  async delegate(input: DelegateInput): Promise<Delegation> {
    const peerUrl = normalisePeerUrl(input.peerUrl)
    const task = await this.#deps.store.repos.tasks.get(input.tenantId, input.taskId)
    if (!task) throw taskNotFound(input.taskId)
    const now = this.#deps.clock.now()
    let d = await this.#deps.store.repos.federation.insertOrGet({
      id: this.#deps.ids.shortId(),
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
    })
    // Idempotent: a delegation the peer already accepted is not sent again.
    if (d.status !== 'pending' && d.status !== 'failed' && d.status !== 'rejected') return d
    const save = async (changes: Partial<Delegation>): Promise<Delegation> => {
      d = { ...d, ...changes, updatedAt: this.#deps.clock.now() }
      await this.#deps.store.repos.federation.save(d)
      return d
    }
    await save({ status: 'pending', lastError: null })

    // 1. The peer's capability card: any rejection stops here, before any delegation I/O.
    const cardOutcome = await requestPeer(this.#requestDeps(), `${peerUrl}/.well-known/a2a-capability-card.json`, { headers: headers(null, false) })
    if (cardOutcome.kind === 'network') return save({ status: 'failed', lastError: `capability card unreachable: ${cardOutcome.error}` })
    if (cardOutcome.status !== 200) return save({ status: 'rejected', lastError: `capability card: HTTP ${cardOutcome.status}` })
    let issuer: string
    let fingerprint: string
    try {
      const signed = parseCardFile(cardOutcome.text)
      const accepted = await consumePeerCard(signed, {
        trustedIssuerFingerprints: input.trustedFingerprints,
        requirements: input.requirements,
        now: this.#deps.clock.now(),
        ...(this.#deps.metrics && { metrics: this.#deps.metrics }),
      })
      issuer = accepted.card.card.issuer
      fingerprint = accepted.fingerprint
    } catch (error) {
      if (error instanceof PeerCardRejected) return save({ status: 'rejected', lastError: `capability card rejected (${error.reason}): ${error.detail}` })
      return save({ status: 'rejected', lastError: `capability card unusable: ${(error as Error).message}` })
    }

    // 2. Pin the peer's receipt key now, from the same origin, to verify its completion receipt later.
    const jwksOutcome = await requestPeer(this.#requestDeps(), `${peerUrl}/.well-known/agent.json/keys`, { headers: headers(null, false) })
    const peerJwks = jwksOutcome.kind === 'response' && jwksOutcome.status === 200 ? jwksOutcome.text : null
    await save({ peerIssuer: issuer, peerFingerprint: fingerprint, peerJwks })

    // 3. Deliver the task with our signed card and the task's lineage envelope.
    const envelope = await this.#deps.lineage.envelope(task.id)
    const body = pythonCanonical({
      sender: await this.#deps.senderCard(),
      task: { id: task.id, message: d.message, role: d.role },
      [LINEAGE_ENVELOPE_FIELD]: lineageEnvelopePayload(envelope),
    })
    let attempts = d.attempts
    const sent = await requestPeer(
      { ...this.#requestDeps(), onAttempt: async () => void (await save({ status: 'sent', attempts: ++attempts })) },
      `${peerUrl}/a2a/v0/tasks`,
      { method: 'POST', headers: headers(input.peerToken, true), body },
    )
    if (sent.kind === 'network') return save({ status: 'failed', lastError: `peer unreachable after ${sent.attempts} attempts: ${sent.error}` })
    if (sent.status !== 202) {
      const terminal = !(sent.status >= 500 || sent.status === 408 || sent.status === 425 || sent.status === 429)
      return save({ status: terminal ? 'rejected' : 'failed', lastError: `peer answered ${sent.status}: ${peerErrorDetail(sent.text)}` })
    }
    let accepted: Record<string, unknown>
    try {
      accepted = JSON.parse(sent.text) as Record<string, unknown>
    } catch {
      return save({ status: 'failed', lastError: 'peer answered 202 with a body that is not JSON' })
    }
    const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)
    d = await save({
      status: 'accepted',
      remoteId: str(accepted['id']),
      // The peer's linked task: what `POST <peer>/a2a/message` takes as `task_id` (`federation message --task-id`).
      remoteTaskId: str(accepted['task_id']),
      remoteA2ATaskId: str(accepted['a2a_task_id']),
      lastError: null,
      nextPollAt: this.#deps.clock.now(),
    })
    // The work now happens at the peer: hold the local task so local workers do not pick it up too.
    if (task.status === 'open') await this.#deps.tasks.claim(task.tenantId, task.id, `a2a:${issuer}`).catch(() => undefined)
    return d
  }

  /** Polls one delegation's remote task once and settles it when it has ended. */
  async follow(delegation: Delegation): Promise<Delegation> {
    let d = delegation
    if (!FOLLOWED_STATUSES.has(d.status) || d.remoteA2ATaskId === null) return d
    const save = async (changes: Partial<Delegation>): Promise<Delegation> => {
      d = { ...d, ...changes, updatedAt: this.#deps.clock.now() }
      await this.#deps.store.repos.federation.save(d)
      return d
    }
    const base = this.#deps.pollBaseMs ?? 1000
    const next = (): number => this.#deps.clock.now() + Math.min(this.#deps.pollMaxMs ?? 60_000, base * 2 ** Math.min(d.polls, 16)) / 1000
    const outcome = await requestPeer(this.#requestDeps(), `${d.peerUrl}/a2a/tasks/${encodeURIComponent(d.remoteA2ATaskId)}`, {
      headers: headers(this.#deps.peerToken(d.peerUrl), false),
    })
    if (outcome.kind === 'network' || outcome.status !== 200) {
      const why = outcome.kind === 'network' ? outcome.error : `HTTP ${outcome.status}: ${peerErrorDetail(outcome.text)}`
      return save({ lastError: `follow: ${why}`, polls: d.polls + 1, nextPollAt: next() })
    }
    let body: { status?: unknown; receipt?: unknown; artifacts?: unknown }
    try {
      body = JSON.parse(outcome.text) as typeof body
    } catch {
      return save({ lastError: 'follow: the peer answered with a body that is not JSON', polls: d.polls + 1, nextPollAt: next() })
    }
    const status = body.status
    if (status === 'submitted') return save({ polls: d.polls + 1, nextPollAt: next(), lastError: null })
    if (status === 'working' || status === 'input-required' || status === 'auth-required') {
      return save({ status: 'in_progress', polls: d.polls + 1, nextPollAt: next(), lastError: null })
    }
    if (status !== 'completed' && status !== 'failed' && status !== 'canceled') {
      return save({ lastError: `follow: unknown remote status ${JSON.stringify(status)}`, polls: d.polls + 1, nextPollAt: next() })
    }
    // The outcome is final only if the peer's completion receipt verifies against the key pinned at delegation.
    if (d.peerJwks === null) return save({ lastError: 'follow: no pinned peer JWKS to verify the completion receipt', polls: d.polls + 1, nextPollAt: next() })
    const verdict = await verifyA2AReceipt(body.receipt ?? null, outcome.text, { jwks: JSON.parse(d.peerJwks) as unknown })
    this.#deps.metrics?.signatureVerified('receipt', verdict.ok)
    if (!verdict.ok) {
      const why = verdict.parsed ? verdict.failures.join('; ') : verdict.error
      return save({ lastError: `completion receipt did not verify: ${why}`, polls: d.polls + 1, nextPollAt: next() })
    }
    const artifacts = Array.isArray(body.artifacts) ? (body.artifacts as { name?: unknown; data?: unknown }[]) : []
    // The peer's last `result` artifact on completion, its last `error` artifact (the reason) on failure.
    const carried = status === 'completed' ? 'result' : 'error'
    const result = artifacts.filter((a) => a.name === carried && typeof a.data === 'string').map((a) => a.data as string).pop() ?? null
    const summary = result ?? `${status} at ${d.peerIssuer ?? d.peerUrl}`
    if (status === 'completed') {
      await this.#settle(() => this.#deps.tasks.complete(d.tenantId, d.localTaskId, summary))
      return save({ status: 'completed', result: summary, lastError: null, nextPollAt: null, polls: d.polls + 1 })
    }
    await this.#settle(() => this.#deps.tasks.fail(d.tenantId, d.localTaskId, `delegated task ${status} at ${d.peerIssuer ?? d.peerUrl}: ${summary}`))
    return save({ status: 'failed', result: summary, lastError: `remote task ${status}`, nextPollAt: null, polls: d.polls + 1 })
  }

  /**
   * Sends a message into a task at a peer (`POST <peer>/a2a/message`, `task_id` being the peer's task id) and
   * records it as `outbound` with the peer as `external_endpoint` once the peer accepted it (2xx). A refusal or an
   * unreachable peer records nothing and throws.
   */
  async sendMessage(input: {
    tenantId: string
    peerUrl: string
    peerToken: string | null
    sender: string
    recipient: string
    content: string
    taskId: string
  }): Promise<A2AMessage> {
    const peerUrl = normalisePeerUrl(input.peerUrl)
    const outcome = await requestPeer(this.#requestDeps(), `${peerUrl}/a2a/message`, {
      method: 'POST',
      headers: headers(input.peerToken, true),
      body: JSON.stringify({ sender: input.sender, recipient: input.recipient, content: input.content, task_id: input.taskId }),
    })
    if (outcome.kind === 'network') throw new AppError('unavailable', `peer unreachable after ${outcome.attempts} attempts: ${outcome.error}`)
    if (outcome.status < 200 || outcome.status > 299) throw new AppError('rejected', `peer answered ${outcome.status}: ${peerErrorDetail(outcome.text)}`)
    const message: A2AMessage = {
      id: this.#deps.ids.shortId(),
      tenantId: input.tenantId,
      sender: input.sender,
      recipient: input.recipient,
      content: input.content,
      taskId: input.taskId,
      direction: 'outbound',
      delivered: true,
      externalEndpoint: peerUrl,
      createdAt: this.#deps.clock.now(),
    }
    await this.#deps.store.repos.a2a.insertMessage(message)
    return message
  }

  /** One pass over every delegation due for a poll (`all`: every followed one, ignoring backoff). */
  async syncDue(options: { all?: boolean } = {}): Promise<Delegation[]> {
    const now = this.#deps.clock.now()
    const lease = now + (this.#deps.retry ?? DEFAULT_RETRY_POLICY).timeoutMs / 1000 * 2
    const due = await this.#deps.store.transaction((repos) => repos.federation.claimDue(options.all ? Number.MAX_VALUE : now, lease))
    const settled: Delegation[] = []
    for (const d of due) settled.push(await this.follow(d))
    return settled
  }

  async #settle(move: () => Promise<unknown>): Promise<void> {
    try {
      await move()
    } catch (error) {
      // The local task was moved by someone else meanwhile (e.g. cancelled): the ledger still records the outcome.
      if (!(error instanceof AppError && (error.code === 'illegal_transition' || error.code === 'version_conflict'))) throw error
    }
  }

  #requestDeps() {
    return { fetch: this.#fetch, sleep: this.#sleep, policy: this.#retry }
  }
}

/** The parsed object of a card file, for embedding as `sender.capability_card`. */
export function cardFileObject(text: string): PyObject {
  return parsePythonJson(text) as PyObject
}
