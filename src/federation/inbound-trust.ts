import { type PyValue, isPyObject, parsePythonJson } from '../canonical/python-json.js'
import { PeerCardRejected, consumePeerCard, parseCardFile } from '../cards/index.js'
import type { PolicyRequirements } from '../cards/policy-gate.js'
import type { AuditTrail } from '../lineage/audit-trail.js'
import { AppError } from '../errors.js'
import { LINEAGE_ENVELOPE_FIELD, type LineageEnvelope, parseLineageEnvelopeField } from '../lineage/envelope.js'
import { type Metrics, noMetrics } from '../signature-metrics.js'
import type { Clock } from '../runtime.js'
import type { InboundGate, InboundGateResult, InboundTaskRequest } from './inbound.service.js'

export interface InboundTrustOptions {
  /** When non-empty, the sender must carry a signed capability card whose key is one of these. */
  readonly trustedPeerFingerprints: readonly string[]
  readonly requirements: PolicyRequirements
  /** Also require the carried entries to link up and hash correctly (Bernstein checks neither). */
  readonly strictLineage: boolean
}

const rejected = (detail: string): AppError => new AppError('rejected', detail)

/**
 * The trust checks of an inbound delegation, before anything is stored: the sender's signed capability card
 * (when the operator pins peers), and the `bernstein.lineage_v2` envelope, whose digest must recompute and whose
 * `source_issuer` must be the verified card's issuer. On acceptance the cross-org boundary entry is appended to
 * our chain, bound to the sender's chain digest, in the accepting transaction.
 */
export class InboundTrustGate implements InboundGate {
  readonly #options: InboundTrustOptions
  readonly #audit: AuditTrail
  readonly #clock: Clock
  readonly #metrics: Metrics

  constructor(options: InboundTrustOptions, audit: AuditTrail, clock: Clock, metrics: Metrics = noMetrics) {
    this.#options = options
    this.#audit = audit
    this.#clock = clock
    this.#metrics = metrics
  }

  async check(request: InboundTaskRequest): Promise<InboundGateResult> {
    const lossless = request.body[LINEAGE_ENVELOPE_FIELD] === undefined ? null : parsePythonJson(request.raw)
    const carried = lossless !== null && isPyObject(lossless) ? lossless[LINEAGE_ENVELOPE_FIELD] : undefined
    const claimedIssuer =
      isPyObject(carried as PyValue) && typeof (carried as Record<string, PyValue>)['source_issuer'] === 'string'
        ? ((carried as Record<string, PyValue>)['source_issuer'] as string)
        : undefined

    let verifiedIssuer: string | undefined
    let senderKey: string | undefined
    if (this.#options.trustedPeerFingerprints.length > 0) {
      const card = request.senderRaw['capability_card']
      if (card === undefined || card === null) throw rejected('sender capability card required: this node only accepts pinned peers')
      try {
        const signed = parseCardFile(JSON.stringify(card))
        const accepted = await consumePeerCard(signed, {
          trustedIssuerFingerprints: this.#options.trustedPeerFingerprints,
          requirements: this.#options.requirements,
          now: this.#clock.now(),
          metrics: this.#metrics,
          ...(claimedIssuer !== undefined && { expectedIssuer: claimedIssuer }),
        })
        verifiedIssuer = accepted.card.card.issuer
        senderKey = accepted.fingerprint
      } catch (error) {
        if (error instanceof PeerCardRejected) throw rejected(`sender capability card rejected (${error.code}): ${error.detail}`)
        throw rejected(`sender capability card unusable: ${(error as Error).message}`)
      }
    }

    // The key, not the issuer: an issuer is whatever a pinned key chose to sign, so two pinned peers could share one.
    const verified = senderKey === undefined ? {} : { senderKey }
    if (lossless === null) return verified
    const parsed = parseLineageEnvelopeField(lossless, {
      // A delegation carries its task's entries only, with gaps where the sender's other tasks wrote.
      ...(this.#options.strictLineage && { checkLinks: true, allowTicketGaps: true, checkEntryHashes: true }),
      ...(verifiedIssuer !== undefined && { expectedIssuer: verifiedIssuer }),
    })
    if (!parsed.ok) throw rejected(`lineage envelope rejected: ${parsed.detail}`)
    const envelope: LineageEnvelope = parsed.value
    return {
      ...verified,
      onAccepted: async (repos, taskId, tenantId) => {
        this.#audit.appendBoundary(repos, tenantId, envelope, {
          actor: { session_id: `a2a:${request.sender.name}`, role: request.task.role, model: 'none' },
          ticketId: taskId,
        })
      },
    }
  }
}
