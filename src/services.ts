import { A2AService } from './a2a/a2a.service.js'
import { type A2AV1Options, A2AV1Service } from './a2a-v1/a2a-v1.service.js'
import { TaskEventSource } from './a2a-v1/task-events.js'
import type { AgentExecutor } from './a2a-v1/executor/agent-executor.js'
import { type A2AV1StreamOptions, A2AV1Streams, DEFAULT_STREAM_OPTIONS } from './a2a-v1/streaming.js'
import { StreamEventRecorder } from './a2a-v1/stream-recorder.js'
import { PushConfigService } from './a2a-v1/push/push-configs.js'
import { type PushDeliveryOptions, PushDeliveryWorker } from './a2a-v1/push/push-delivery.js'
import { PushOutbox } from './a2a-v1/push/push-outbox.js'
import { PushTargetGuard, type ResolveHost } from './a2a-v1/push/push-target-guard.js'
import { type Attestor, noAttestation } from './receipts/attestation.js'
import { AuditTrail } from './lineage/audit-trail.js'
import type { PartitionScheme } from './lineage/partitions.js'
import { LineageService } from './lineage/lineage.service.js'
import { DelegationService } from './federation/delegation.service.js'
import { type InboundTrustOptions, InboundTrustGate } from './federation/inbound-trust.js'
import { InboundSignatureGate } from './federation/inbound-signature.js'
import { DelegatorSignatureGuard } from './federation/delegator-signature.js'
import { DEFAULT_SIGNATURE_WINDOW_SECONDS } from './crypto/peer-http-signature.js'
import { type InboundGate, InboundService } from './federation/inbound.service.js'
import type { RetryPolicy } from './federation/peer-fetch.js'
import { type HealthOptions, HealthService } from './health/health.service.js'
import type { NodeIdentity } from './identity/node-identity.js'
import { type Metrics, noMetrics } from './signature-metrics.js'
import { type Clock, type Ids, systemIds, systemClock } from './runtime.js'
import type { Store } from './store/store.js'
import { TaskService } from './tasks/task.service.js'
import type { TaskObserver } from './tasks/task-events.js'

export interface ServiceDeps {
  readonly store: Store
  /** The operator HMAC key of the tracker-audit chain (the ASCII bytes of `audit.key`). */
  readonly auditKey: Uint8Array
  /** This node's issuer name (capability card, lineage envelopes). */
  readonly issuer: string
  /** The node's signed capability card, agent card and JWKS. */
  readonly identity: NodeIdentity
  readonly publicBaseUrl: string
  readonly clock?: Clock
  readonly ids?: Ids
  readonly attestor?: Attestor
  readonly taskObservers?: readonly TaskObserver[]
  readonly inboundGates?: readonly InboundGate[]
  /** A2A v1.0: the blocking bound of SendMessage and the role of new linked tasks (defaults otherwise). */
  readonly a2aV1?: Partial<A2AV1Options>
  /** A2A v1.0: an in-process agent that answers messages (none: external workers do). */
  readonly a2aV1Executor?: AgentExecutor
  /** Told when that agent throws (its task is failed). */
  readonly onExecutorError?: (error: unknown, taskId: string) => void
  /** A2A v1.0 streams: keep-alive, per-stream buffer, retention of the event log, poll interval (defaults otherwise). */
  readonly a2aV1Streams?: Partial<A2AV1StreamOptions>
  /**
   * A2A v1.0 push notifications: targets allowed although internal (addresses, CIDRs, host names), delivery timing,
   * and the injected `fetch` and resolver (defaults: the global fetch, the system resolver, no allowed targets).
   */
  readonly a2aV1Push?: Partial<PushDeliveryOptions> & {
    readonly allowedTargets?: readonly string[]
    readonly fetch?: typeof globalThis.fetch
    readonly resolveHost?: ResolveHost
  }
  /** Told about every signature checked (peers' capability cards, delegations' completion receipts). */
  readonly metrics?: Metrics
  /** Readiness: how long one database check answers probes. */
  readonly health?: HealthOptions
  /** Tracker-audit partitions per tenant (docs/scaling.md); 1 when absent. */
  readonly chainPartitions?: PartitionScheme
  /** Checks on inbound delegations (pinned peers, policies, strict lineage); none by default. */
  readonly inboundTrust?: InboundTrustOptions
  /**
   * Proof of possession between peers (RFC 9421 signatures by the card key). Defaults: inbound signatures required
   * when peers are pinned, a ±300 s window, the target URI as addressed, unsigned peers refused.
   */
  readonly peerSignatures?: {
    readonly requireInbound?: boolean
    readonly windowSeconds?: number
    readonly targetBase?: string | null
    readonly allowUnsignedPeers?: boolean
  }
  /** Outbound federation: tokens towards peers (never stored), `fetch`, retries. */
  readonly federation?: {
    readonly peerToken?: (peerUrl: string) => string | null
    readonly fetch?: typeof globalThis.fetch
    readonly sleep?: (ms: number) => Promise<void>
    readonly retry?: RetryPolicy
    readonly pollBaseMs?: number
    readonly pollMaxMs?: number
  }
}

export interface Services {
  readonly tasks: TaskService
  readonly a2a: A2AService
  readonly a2aV1: A2AV1Service
  /** SendStreamingMessage and SubscribeToTask over the tasks' event logs. */
  readonly a2aV1Streams: A2AV1Streams
  /** Wakes whoever waits on a task when it changes (blocking SendMessage; streams next). */
  readonly taskEvents: TaskEventSource
  /** A2A v1.0 push notification configs (the four operations). */
  readonly a2aV1PushConfigs: PushConfigService
  /** Delivers push notifications from the outbox; `startServer` starts its loop. */
  readonly a2aV1PushDelivery: PushDeliveryWorker
  readonly inbound: InboundService
  readonly health: HealthService
  readonly audit: AuditTrail
  readonly lineage: LineageService
  readonly delegation: DelegationService
}

/** Wires the domain services over one store. Used by the HTTP app and by CLI commands that act on a node. */
export function createServices(deps: ServiceDeps): Services {
  const clock = deps.clock ?? systemClock
  const ids = deps.ids ?? systemIds
  const audit = new AuditTrail({ key: deps.auditKey, clock, ...(deps.chainPartitions && { partitions: deps.chainPartitions }) })
  const lineage = new LineageService(deps.store, deps.auditKey, deps.issuer)
  const tasks = new TaskService({ store: deps.store, clock, ids })
  const signatures = deps.peerSignatures ?? {}
  const windowSeconds = signatures.windowSeconds ?? DEFAULT_SIGNATURE_WINDOW_SECONDS
  const push = deps.a2aV1Push ?? {}
  const pushGuard = new PushTargetGuard(push.allowedTargets ?? [], push.resolveHost)
  const pushSigner = deps.identity.pushSigner()
  const pushDelivery = new PushDeliveryWorker({
    store: deps.store,
    clock,
    ids,
    guard: pushGuard,
    fetch: push.fetch ?? globalThis.fetch,
    signer: () => pushSigner,
    issuer: deps.publicBaseUrl,
    jwksUrl: pushSigner.jwksUrl,
    options: push,
  })
  const pushOutbox = new PushOutbox({ clock, ids, wake: () => pushDelivery.wake() })
  // The A2A v1.0 event log, written after the A2A service has added a finishing task's result artifact; each event
  // it logs is also a delivery to the task's push configs.
  const streamLog = new StreamEventRecorder(clock, deps.a2aV1Streams?.retentionMs ?? DEFAULT_STREAM_OPTIONS.retentionMs, [pushOutbox])
  const a2a = new A2AService({
    store: deps.store,
    clock,
    ids,
    tasks,
    attestor: deps.attestor ?? noAttestation,
    publicBaseUrl: deps.publicBaseUrl,
    artifactObservers: [audit, streamLog],
    // A task delegated by a signed delivery is acted on only with its delegator's signature.
    accessGuard: new DelegatorSignatureGuard({ windowSeconds, targetBase: signatures.targetBase ?? null }, { store: deps.store, clock }),
  })
  // Told inside each task change's transaction, in this order: the audit trail, any extra observers, then the A2A
  // service (which adds the result artifact of a finished linked task and attests it).
  tasks.subscribe(audit)
  for (const observer of deps.taskObservers ?? []) tasks.subscribe(observer)
  tasks.subscribe(a2a)
  tasks.subscribe(streamLog)
  const inboundTrust = deps.inboundTrust ?? { trustedPeerFingerprints: [], requirements: OPEN_REQUIREMENTS, strictLineage: false }
  // Last: it only wakes waiters, who read the task again.
  const taskEvents = new TaskEventSource()
  tasks.subscribe(taskEvents)
  const a2aV1PushConfigs = new PushConfigService({ store: deps.store, clock, ids, guard: pushGuard })
  const a2aV1 = new A2AV1Service({
    store: deps.store,
    clock,
    ids,
    a2a,
    tasks,
    events: taskEvents,
    pushConfigs: a2aV1PushConfigs,
    agentCard: async () => (await deps.identity.agentCardV1()).card,
    ...(deps.a2aV1 && { options: deps.a2aV1 }),
    ...(deps.a2aV1Executor && { executor: deps.a2aV1Executor }),
    ...(deps.onExecutorError && { onExecutorError: deps.onExecutorError }),
  })
  const a2aV1Streams = new A2AV1Streams({
    store: deps.store,
    clock,
    v1: a2aV1,
    events: taskEvents,
    ...(deps.a2aV1Streams && { options: deps.a2aV1Streams }),
  })
  const gates: InboundGate[] = [
    // First: nothing of the body is believed before its signature by the sender's pinned card key checks out.
    new InboundSignatureGate(
      {
        requireSignature: signatures.requireInbound ?? inboundTrust.trustedPeerFingerprints.length > 0,
        windowSeconds,
        targetBase: signatures.targetBase ?? null,
      },
      { store: deps.store, clock },
    ),
    new InboundTrustGate(inboundTrust, audit, clock, deps.metrics ?? noMetrics),
    ...(deps.inboundGates ?? []),
  ]
  const inbound = new InboundService({ store: deps.store, clock, ids, a2a, gates })
  const health = new HealthService(deps.store, clock, deps.health)
  const federation = deps.federation ?? {}
  const delegation = new DelegationService({
    store: deps.store,
    clock,
    ids,
    tasks,
    lineage,
    senderCard: () => deps.identity.senderCard(),
    signer: deps.identity.peerSigner(),
    signatureWindowSeconds: windowSeconds,
    allowUnsignedPeers: signatures.allowUnsignedPeers ?? false,
    peerToken: federation.peerToken ?? (() => null),
    metrics: deps.metrics ?? noMetrics,
    ...(federation.fetch && { fetch: federation.fetch }),
    ...(federation.sleep && { sleep: federation.sleep }),
    ...(federation.retry && { retry: federation.retry }),
    ...(federation.pollBaseMs !== undefined && { pollBaseMs: federation.pollBaseMs }),
    ...(federation.pollMaxMs !== undefined && { pollMaxMs: federation.pollMaxMs }),
  })
  return { tasks, a2a, a2aV1, a2aV1Streams, taskEvents, a2aV1PushConfigs, a2aV1PushDelivery: pushDelivery, inbound, health, audit, lineage, delegation }
}

/** Requirements that every ranked card meets: used when the operator sets none. */
export const OPEN_REQUIREMENTS = Object.freeze({ maxCostCapUsd: Infinity, minRedactionTier: 'none', minSandboxProfile: 'none' })
