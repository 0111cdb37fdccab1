import { UNRECOGNISED_DECODE_MESSAGE, jsonNestingOverflow, parsePythonJson, pythonJsonDecodeText } from '../canonical/python-json.js'
import type { Schema } from '../contract.js'
import { AppError } from '../errors.js'
import { LONE_SURROGATE_MESSAGE, codePointLength, findLoneSurrogate } from '../text/unicode.js'
import type { Clock, Ids } from '../runtime.js'
import type { Repositories, Store } from '../store/store.js'
import type { A2AService } from '../a2a/a2a.service.js'
import type { FederatedInbound, InboundKey } from '../a2a/a2a-task.js'

/**
 * The v0.1 agent card a delegating peer sends about itself: the members of Bernstein's `AgentCard` (the contract's
 * `A2AAgentCardResponse`) that delivery reads.
 */
export type SenderCard = Readonly<Pick<Schema<'A2AAgentCardResponse'>, 'name' | 'description' | 'capabilities' | 'endpoint'>>

export interface InboundTaskRequest {
  readonly sender: SenderCard
  /** The whole sender object as received (it may carry a signed `capability_card`). */
  readonly senderRaw: Readonly<Record<string, unknown>>
  readonly task: { readonly id: string; readonly message: string; readonly role: string }
  /** The whole body, for extensions such as the `bernstein.lineage_v2` envelope. */
  readonly body: Readonly<Record<string, unknown>>
  /** The body text as received: the envelope's digest is recomputed from a lossless parse of it. */
  readonly raw: string
  /**
   * How the request arrived, for its RFC 9421 signature: method, `scheme://host` as addressed, path with query and
   * header fields (lowercase names). Absent when the request did not come over HTTP.
   */
  readonly transport?: {
    readonly method: string
    readonly origin: string
    readonly path: string
    readonly headers: Readonly<Record<string, string>>
  }
}

/** The 202 answer, which the handler returns as the contract's response (so the compiler checks it there), and whether it is new. */
export interface InboundAccepted {
  readonly id: string
  readonly remote_task_id: string
  readonly status: 'accepted'
  readonly peer_name: string
  readonly task_id: string
  readonly a2a_task_id: string
  /** False when this delivery repeated an earlier one (same peer, sender key, remote id and task). */
  readonly created: boolean
}

/** Thrown inside the accepting transaction to roll it back when a concurrent duplicate already won. */
class DuplicateDelivery extends Error {}

/** Limits in characters, counted as code points like Python's `len` and the contract's `maxLength` (see codePointLength). */
const MAX_ID = 1000
const MAX_MESSAGE = 100_000
const MAX_ROLE = 1000

const NUL = '\u0000'

const badRequest = (detail: string): AppError => new AppError('invalid_request', detail)
const rejected = (detail: string): AppError => new AppError('rejected', detail)

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Bernstein's refusal of a body its `request.json()` cannot read (bernstein-behaviour.md §2.6): 400
 * `Invalid JSON body: <str(exc)>`. Also used for a body that is not UTF-8, before it is decoded.
 */
export function invalidJsonBody(reason: string): AppError {
  return badRequest(`Invalid JSON body: ${reason}`)
}

/**
 * Hand validation of `POST /a2a/v0/tasks`, in Bernstein's order and with its texts (bernstein-behaviour.md §2.6):
 * structural problems are 400, a present but unusable task is 409 (terminal for the caller's retry policy).
 */
export function parseInboundTask(raw: string): InboundTaskRequest {
  let body: unknown
  try {
    // The lossless parser that later reads this text again (the lineage envelope's digest) refuses nesting deeper
    // than MAX_JSON_NESTING, as Python's json module does; refuse such a body here, as invalid JSON, before any of
    // it is used. JSON.parse alone would accept it.
    if (jsonNestingOverflow(raw) >= 0) parsePythonJson(raw)
    body = JSON.parse(raw)
  } catch {
    throw invalidJsonBody(pythonDecodeMessage(raw))
  }
  if (!isObject(body)) throw badRequest('Body must be a JSON object')
  const lone = findLoneSurrogate(body)
  if (lone) throw invalidJsonBody(`${LONE_SURROGATE_MESSAGE} (at ${lone.join('.')})`)
  const sender = body['sender']
  if (!isObject(sender) || Object.keys(sender).length === 0) throw badRequest("Missing or invalid 'sender' Agent Card")
  const task = body['task']
  if (!isObject(task) || Object.keys(task).length === 0) throw badRequest("Missing or invalid 'task' body")
  const card = parseSenderCard(sender)
  const id = task['id']
  if (typeof id !== 'string' || id.trim() === '') throw rejected("Missing 'task.id'")
  if (codePointLength(id) > MAX_ID) throw rejected(`'task.id' exceeds ${MAX_ID} characters`)
  const message = task['message']
  if (typeof message !== 'string' || message.trim() === '') throw rejected("Missing or empty 'task.message'")
  if (codePointLength(message) > MAX_MESSAGE) throw rejected(`'task.message' exceeds ${MAX_MESSAGE} characters`)
  const role = task['role'] ?? 'backend'
  if (typeof role !== 'string' || codePointLength(role) > MAX_ROLE) throw rejected("Invalid 'task.role'")
  // Stored text cannot hold U+0000 on PostgreSQL; refuse it here, on every engine, with this route's own statuses.
  for (const [field, value] of [
    ['id', id],
    ['message', message],
    ['role', role],
  ] as const) {
    if (value.includes(NUL)) throw rejected(`'task.${field}' must not contain the NUL character`)
  }
  return { sender: card, senderRaw: sender, task: { id, message, role: role.trim() === '' ? 'backend' : role }, body, raw }
}

/**
 * `str(exc)` of the `json.JSONDecodeError` Bernstein's `request.json()` raises for the same text, from the
 * Python-compatible parser. Should that parser accept what JSON.parse refused, a fixed message stands in: the
 * engine's own message never reaches the client.
 */
function pythonDecodeMessage(raw: string): string {
  try {
    parsePythonJson(raw)
  } catch (error) {
    return pythonJsonDecodeText(error, raw)
  }
  return pythonJsonDecodeText(new SyntaxError(UNRECOGNISED_DECODE_MESSAGE), raw)
}

function parseSenderCard(sender: Record<string, unknown>): SenderCard {
  const invalid = (reason: string): AppError => badRequest(`Invalid sender card: ${reason}`)
  const name = sender['name']
  if (typeof name !== 'string' || name.trim() === '') throw invalid("AgentCard requires a non-empty 'name' string")
  if (codePointLength(name) > MAX_ID) throw invalid(`AgentCard 'name' exceeds ${MAX_ID} characters`)
  // Bernstein's AgentCard.validate requires the description (an empty string is fine, a missing one is not).
  const description = sender['description']
  if (typeof description !== 'string') throw invalid("AgentCard requires a 'description' string")
  const capabilities = sender['capabilities'] ?? []
  if (!Array.isArray(capabilities)) throw invalid("AgentCard 'capabilities' must be a list")
  capabilities.forEach((c, i) => {
    if (typeof c !== 'string') throw invalid(`AgentCard capability at index ${i} must be a string`)
  })
  const endpoint = sender['endpoint'] ?? ''
  if (typeof endpoint !== 'string') throw invalid("AgentCard 'endpoint' must be a string")
  if ([name, endpoint, ...(capabilities as string[])].some((text) => text.includes(NUL))) throw invalid('AgentCard text must not contain the NUL character')
  // Stored and listed as the peer's address: an http(s) URL, never one carrying credentials (which listings would show).
  if (endpoint !== '' && !isPeerAddress(endpoint)) throw invalid("AgentCard 'endpoint' must be an absolute http(s) URL without credentials")
  return { name, description, capabilities: capabilities as string[], endpoint: endpoint.replace(/\/+$/, '') }
}

/**
 * A gate an inbound delegation must pass before anything is stored (capability-card trust, lineage envelope).
 * It throws an AppError `rejected` to refuse, and may return a hook to run inside the accepting transaction.
 * Gates also run for a repeated delivery, before it is recognised as one, so `check` must not change anything;
 * the one exception is the signature gate's replay cache, where recording a nonce is what makes a replay fail.
 */
export interface InboundGate {
  check(request: InboundTaskRequest, tenantId: string): Promise<InboundGateResult>
}

export interface InboundGateResult {
  /** Runs inside the accepting transaction, after the local task exists. */
  readonly onAccepted?: (repos: Repositories, taskId: string, tenantId: string) => Promise<void>
  /**
   * The identity the gate verified for the sender (its capability-card key's fingerprint). Deliveries are keyed by
   * it, so what one verified sender delivers is never found by, or in the way of, another.
   */
  readonly senderKey?: string
  /**
   * The public key (PEM) whose RFC 9421 signature the delivery carried and passed. Recorded with the delegation, it
   * is the key every later request on its task must be signed by.
   */
  readonly signingKey?: string
}

export interface InboundServiceDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
  readonly a2a: A2AService
  readonly gates?: readonly InboundGate[]
}

/**
 * Accepts tasks delegated by peer orchestrators. Unlike Bernstein (§2.6), the delegation is persisted, it
 * creates a linked Bernstein task and an A2A task the delegator can follow, and a repeated delivery of the same
 * (peer, remote id) and task returns the first acceptance without creating anything, once it has passed every
 * check a new delivery must pass (Bernstein looks the id up first and answers any repeat with the first entry).
 */
export class InboundService {
  readonly #deps: InboundServiceDeps

  constructor(deps: InboundServiceDeps) {
    this.#deps = deps
  }

  async accept(tenantId: string, request: InboundTaskRequest): Promise<InboundAccepted> {
    // Every trust check runs before the delivery is looked up: a repeat is answered `duplicate` only when it would
    // itself be accepted. Looking first let a request without the card (or with a bad one) learn, and be told it
    // succeeded with, the ids of a delegation that only the trusted sender may follow.
    const hooks: InboundGateResult[] = []
    for (const gate of this.#deps.gates ?? []) hooks.push(await gate.check(request, tenantId))
    // Without a verified key the tenant is the trust boundary and the name is all there is: '' keys those.
    const key: InboundKey = {
      tenantId,
      peerName: request.sender.name,
      senderKey: hooks.find((hook) => hook.senderKey !== undefined)?.senderKey ?? '',
      remoteTaskId: request.task.id,
    }
    const existing = await this.#deps.store.repos.a2a.getInbound(key)
    if (existing) return this.#repeated(existing, request)
    const now = this.#deps.clock.now()
    return this.#deps.store
      .transaction(async (repos) => {
        const id = this.#deps.ids.shortId()
        const view = await this.#deps.a2a.createWithin(repos, tenantId, {
          sender: request.sender.name,
          message: request.task.message,
          role: request.task.role,
        })
        const inbound: FederatedInbound = {
          ...key,
          id,
          taskId: view.body.bernstein_task_id ?? '',
          a2aTaskId: view.body.id,
          message: request.task.message,
          role: request.task.role,
          createdAt: now,
          signingKey: hooks.find((hook) => hook.signingKey !== undefined)?.signingKey ?? null,
        }
        if (!(await repos.a2a.insertInboundIfNew(inbound))) {
          // A concurrent duplicate won the unique constraint: undo this attempt and answer with the winner.
          throw new DuplicateDelivery()
        }
        await repos.a2a.upsertPeer({
          tenantId,
          name: request.sender.name,
          endpoint: request.sender.endpoint,
          capabilities: request.sender.capabilities,
          status: 'active',
          lastSeen: now,
        })
        for (const hook of hooks) await hook.onAccepted?.(repos, inbound.taskId, tenantId)
        return this.#answer(inbound, true)
      })
      .catch(async (error: unknown) => {
        if (!(error instanceof DuplicateDelivery)) throw error
        const winner = await this.#deps.store.repos.a2a.getInbound(key)
        if (!winner) throw error
        return this.#repeated(winner, request)
      })
  }

  /**
   * The answer to a delivery whose delegation (its InboundKey) was already accepted. The remote id is the delegator's
   * idempotency key: a redelivery repeats the task (its card and envelope may be fresh, and have passed the gates
   * again), so the same id with another message or role is not a retry but a second task under a used key.
   * Answering it with the first acceptance would tell the sender its new task was taken while it was dropped.
   */
  #repeated(existing: FederatedInbound, request: InboundTaskRequest): InboundAccepted {
    if (existing.message !== request.task.message || existing.role !== request.task.role) {
      throw new AppError(
        'delivery_conflict',
        "'task.id' was already accepted with a different task: a redelivery must repeat the message and role unchanged, new work needs a new 'task.id'",
      )
    }
    return this.#answer(existing, false)
  }

  #answer(inbound: { id: string; remoteTaskId: string; peerName: string; taskId: string; a2aTaskId: string }, created: boolean): InboundAccepted {
    return {
      id: inbound.id,
      remote_task_id: inbound.remoteTaskId,
      status: 'accepted',
      peer_name: inbound.peerName,
      task_id: inbound.taskId,
      a2a_task_id: inbound.a2aTaskId,
      created,
    }
  }
}

/** An absolute http(s) URL without `user:password@`. */
function isPeerAddress(text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === ''
  } catch {
    return false
  }
}
