import { createHash, type KeyObject } from 'node:crypto'
import { type PyObject, parsePythonJson } from '../canonical/python-json.js'
import { agentCardBytes, signAgentCard } from '../agent-card/index.js'
import { agentCardV1 } from '../a2a-v1/agent-card-v1.js'
import type { V1AgentCard } from '../a2a-v1/a2a-v1-wire.js'
import { jcs } from '../canonical/jcs.js'
import { signDetachedJws } from '../crypto/detached-jws.js'
import { issueCapabilityCard } from '../cards/issue-capability-card.js'
import { parseCardFile, serializeCardFile } from '../cards/card-file.js'
import type { CardPolicies, SignedCapabilityCard } from '../cards/capability-card.js'
import { keyFingerprint } from '../crypto/fingerprint.js'
import { type Metrics, noMetrics } from '../signature-metrics.js'
import type { Clock } from '../runtime.js'
import type { Store } from '../store/store.js'
import { type NodeKeys, nodeJwks } from './node-keys.js'

export interface NodeProfile {
  readonly issuer: string
  readonly name: string
  readonly description: string
  readonly tools: readonly string[]
  readonly policies: CardPolicies
  readonly publicBaseUrl: string
  readonly version: string
  /** Capability card lifetime; re-issued within `renewBeforeSeconds` of expiry. */
  readonly cardTtlSeconds: number
  readonly renewBeforeSeconds: number
}

export interface ServedDocument {
  readonly bytes: Buffer
  readonly etag: string
}

const CAPABILITY_CARD = 'capability-card'

function served(bytes: Uint8Array | string): ServedDocument {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes)
  return { bytes: buffer, etag: `"${createHash('sha256').update(buffer).digest('base64url')}"` }
}

/**
 * The node's published identity: its signed capability card, its signed agent card (§6) embedding that card,
 * and the JWKS. The capability card lives in the database, so every replica serves the same bytes; whichever
 * replica first finds it near expiry re-issues it under a lock, and the others pick the new one up.
 */
export class NodeIdentity {
  readonly #store: Store
  readonly #keys: NodeKeys
  readonly #profile: NodeProfile
  readonly #clock: Clock
  readonly #metrics: Metrics
  #card: { signed: SignedCapabilityCard; document: ServedDocument } | undefined
  #agentCard: { forCard: string; document: ServedDocument } | undefined
  #agentCardV1: Promise<{ card: V1AgentCard; document: ServedDocument }> | undefined
  readonly #jwks: ServedDocument

  constructor(store: Store, keys: NodeKeys, profile: NodeProfile, clock: Clock, metrics: Metrics = noMetrics) {
    this.#store = store
    this.#keys = keys
    this.#profile = profile
    this.#clock = clock
    this.#metrics = metrics
    this.#jwks = served(JSON.stringify(nodeJwks(keys)))
  }

  get capabilityCardFingerprint(): string {
    return keyFingerprint(this.#keys.capabilityCard.publicKey)
  }

  /** What this node signs its peer requests and answers with: the capability-card key, named by its fingerprint. */
  peerSigner(): { readonly keyid: string; readonly privateKey: KeyObject } {
    return { keyid: this.capabilityCardFingerprint, privateKey: this.#keys.capabilityCard.privateKey }
  }

  /** The key A2A v1.0 push deliveries are signed with (the agent-card key, whose `kid` is in {@link jwks}), and where the JWKS is. */
  pushSigner(): { readonly kid: string; readonly privateKey: KeyObject; readonly jwksUrl: string } {
    const key = this.#keys.agentCard
    return { kid: key.kid, privateKey: key.privateKey, jwksUrl: `${this.#profile.publicBaseUrl}/.well-known/agent.json/keys` }
  }

  jwks(): ServedDocument {
    return this.#jwks
  }

  #fresh(signed: SignedCapabilityCard): boolean {
    const expiresAt = signed.card.expires_at
    return expiresAt === 0 || this.#clock.now() < expiresAt - this.#profile.renewBeforeSeconds
  }

  /** The current signed capability card (the file object `{alg, card, signature}`) and its served bytes. */
  async capabilityCard(): Promise<{ signed: SignedCapabilityCard; document: ServedDocument }> {
    if (this.#card && this.#fresh(this.#card.signed)) return this.#card
    const fingerprint = this.capabilityCardFingerprint
    const body = await this.#store.transaction(async (repos) => {
      await repos.documents.lockName(CAPABILITY_CARD)
      const stored = await repos.documents.get(CAPABILITY_CARD)
      if (stored && stored.keyFingerprint === fingerprint && this.#fresh(parseCardFile(stored.body))) return stored.body
      const signed = await issueCapabilityCard({
        issuer: this.#profile.issuer,
        name: this.#profile.name,
        description: this.#profile.description,
        tools: this.#profile.tools,
        policies: this.#profile.policies,
        ttlSeconds: this.#profile.cardTtlSeconds,
        privateKey: this.#keys.capabilityCard.privateKey,
        now: Math.floor(this.#clock.now()),
      })
      this.#metrics.signatureMade('capability_card')
      const text = serializeCardFile(signed)
      await repos.documents.put({ name: CAPABILITY_CARD, body: text, keyFingerprint: fingerprint, expiresAt: signed.card.expires_at })
      return text
    })
    this.#card = { signed: parseCardFile(body), document: served(body) }
    return this.#card
  }

  /** This node as a v0.1 sender card for `/a2a/v0/tasks`, carrying the signed capability card file object. */
  async senderCard(): Promise<PyObject> {
    const { document } = await this.capabilityCard()
    return {
      name: this.#profile.issuer,
      description: this.#profile.description,
      capabilities: [...this.#profile.tools],
      endpoint: this.#profile.publicBaseUrl,
      provider: 'bernstein',
      protocol_version: '0.1',
      capability_card: parsePythonJson(document.bytes.toString('utf8')),
    }
  }

  /**
   * The A2A v1.0 AgentCard (`/.well-known/agent-card.json`, and GetExtendedAgentCard), signed per A2A §8.4: a
   * detached JWS over the JCS of the card without `signatures` (it has no default-valued field to strip), with
   * `alg`, `kid`, `typ: JOSE` and `jku` (this node's JWKS) in the protected header. Built once: it depends only on
   * the profile and the agent-card key.
   */
  agentCardV1(): Promise<{ card: V1AgentCard; document: ServedDocument }> {
    this.#agentCardV1 ??= (async () => {
      const p = this.#profile
      const card = agentCardV1({ name: p.name, description: p.description, version: p.version, publicBaseUrl: p.publicBaseUrl })
      const jws = await signDetachedJws(
        jcs(card),
        { alg: 'EdDSA', kid: this.#keys.agentCard.kid, typ: 'JOSE', jku: `${p.publicBaseUrl}/.well-known/agent.json/keys` },
        this.#keys.agentCard.privateKey,
      )
      this.#metrics.signatureMade('agent_card')
      const [protectedHeader = '', , signature = ''] = jws.split('.')
      const signed: V1AgentCard = { ...card, signatures: [{ protected: protectedHeader, signature }] }
      return { card: signed, document: served(jcs(signed)) }
    })()
    return this.#agentCardV1
  }

  /** Bernstein's signed v1.0 agent card (§6.2-6.3), re-signed whenever the embedded capability card changes. */
  async agentCard(): Promise<ServedDocument> {
    const { signed, document } = await this.capabilityCard()
    if (this.#agentCard && this.#agentCard.forCard === document.etag) return this.#agentCard.document
    const p = this.#profile
    const payload = {
      name: 'bernstein',
      description: p.description,
      version: p.version,
      protocolVersion: '1.0',
      url: p.publicBaseUrl,
      documentationUrl: `${p.publicBaseUrl}/docs`,
      supportedInterfaces: ['HTTP+JSON'],
      securitySchemes: [
        { id: 'bearer-jwt', type: 'http', scheme: 'Bearer', description: 'Operator or agent bearer token', required: true },
        { id: 'mtls', type: 'mutualTLS', scheme: 'mtls', description: 'Mutual TLS at the deployment edge', required: false },
      ],
      capabilities: [
        { name: 'task-crud', description: 'Create, claim and drive tasks through their lifecycle' },
        { name: 'a2a-delegation', description: 'Accept delegated tasks from peers with signed receipts' },
        { name: 'status', description: 'Health and readiness probes' },
      ],
      skills: [
        {
          id: 'task-orchestration',
          name: 'Task orchestration',
          description: 'Runs delegated coding tasks with an auditable lineage',
          tags: ['orchestration', 'a2a'],
        },
      ],
      defaultInputModes: ['text', 'application/json'],
      defaultOutputModes: ['application/json'],
      authentication: {
        schemes: ['Bearer'],
        // What answers without a token here (`security: []` in openapi.yaml); /health needs one since it reports counts.
        publicPaths: [
          '/health/live',
          '/health/ready',
          '/.well-known/agent.json',
          '/.well-known/agent.json/keys',
          '/.well-known/agent-card.json',
          '/.well-known/a2a-capability-card.json',
        ],
        description: 'Authorization: Bearer <token> on every other path',
      },
      endpoints: [
        { method: 'POST', path: '/a2a/tasks/send', summary: 'Send a task' },
        { method: 'GET', path: '/a2a/tasks/{a2a_task_id}', summary: 'Follow a task and collect its receipt' },
        { method: 'POST', path: '/a2a/tasks/{a2a_task_id}/artifacts', summary: 'Attach an artifact' },
        { method: 'POST', path: '/a2a/message', summary: 'Send a message into a task' },
        { method: 'POST', path: '/a2a/v0/tasks', summary: 'Delegate a task (federation)' },
        { method: 'GET', path: '/a2a/agent-card', summary: 'Legacy v0.1 agent card' },
        { method: 'GET', path: '/.well-known/a2a-capability-card.json', summary: 'Signed capability card' },
        { method: 'GET', path: '/.well-known/agent.json/keys', summary: 'JWKS (agent-card and receipt keys)' },
        { method: 'GET', path: '/tasks', summary: 'List tasks' },
        { method: 'GET', path: '/health', summary: 'Health: counts and queue depth (token)' },
        { method: 'GET', path: '/health/ready', summary: 'Readiness' },
        { method: 'GET', path: '/openapi.json', summary: 'OpenAPI document' },
      ],
      capabilityCard: { alg: signed.alg, card: signed.card, signature: signed.signature },
    }
    const card = await signAgentCard(payload, { kid: this.#keys.agentCard.kid, privateKey: this.#keys.agentCard.privateKey })
    this.#metrics.signatureMade('agent_card')
    this.#agentCard = { forCard: document.etag, document: served(agentCardBytes(card)) }
    return this.#agentCard.document
  }
}
