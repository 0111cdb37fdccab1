/**
 * In-process micro-benchmarks against the raw primitive underneath, interleaved (A, B, A, B, …) with the same
 * number of iterations per round, medians reported:
 * - capability-card verification (`verifyCapabilityCard`) vs one node:crypto Ed25519 verify of the same JWS
 *   signing input with an already parsed key;
 * - tracker-audit chain verification (`TrackerAuditVerifier`) vs SHA-256 + HMAC-SHA256 over the same line bytes;
 * - proof of possession (RFC 9421): signing and verifying a signed delivery (`signPeerRequest` + `verifyPeerRequest`,
 *   content digest included) vs one raw Ed25519 sign and verify of the same body, the cost each federation request adds.
 */
import { createHash, createHmac, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto'
import { capabilityCardSigningBytes, issueCapabilityCard, verifyCapabilityCard } from '../../src/cards/index.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { pinnedPeerKey, signPeerRequest, verifyPeerRequest } from '../../src/crypto/peer-http-signature.js'
import { systemClock } from '../../src/runtime.js'
import { GENESIS_PREV_HASH, buildTrackerEntry, trackerEntryLine } from '../../src/lineage/tracker-entry.js'
import { TrackerAuditVerifier } from '../../src/lineage/tracker-verify.js'
import { median, medianOfRatios } from './stats.js'

export interface MicroResult {
  readonly name: string
  /** Operations per second, median of the rounds. */
  readonly subjectOps: number
  readonly baselineOps: number
  /** subject ÷ baseline: the median of the rounds' ratios (each round times both back to back). */
  readonly ratio: number
  readonly iterations: number
  readonly rounds: number
}

async function timeRounds(rounds: number, subject: () => Promise<number>, baseline: () => number): Promise<{ subject: number[]; baseline: number[] }> {
  const s: number[] = []
  const b: number[] = []
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so neither always runs on a warmer (or hotter) machine.
    if (r % 2 === 0) {
      s.push(await subject())
      b.push(baseline())
    } else {
      b.push(baseline())
      s.push(await subject())
    }
  }
  return { subject: s, baseline: b }
}

export async function cardVerification(iterations: number, rounds: number): Promise<MicroResult> {
  const { privateKey } = generateKeyPairSync('ed25519')
  const card = await issueCapabilityCard({
    issuer: 'bench-org',
    name: 'bench-orchestrator',
    description: 'A node used by the benchmark',
    tools: ['task_orchestration', 'agent_spawning', 'code_review', 'a2a_message'],
    policies: { cost_cap_usd: 10, redaction_tier: 'standard', sandbox_profile: 'container' },
    ttlSeconds: 86_400,
    privateKey,
  })
  // The raw primitive: the exact signing input of the detached JWS, verified with a key parsed once.
  const [headerSegment, , signatureSegment] = card.signature.split('.') as [string, string, string]
  const signingInput = Buffer.from(`${headerSegment}.${Buffer.from(capabilityCardSigningBytes(card.card)).toString('base64url')}`, 'ascii')
  const signature = Buffer.from(signatureSegment, 'base64url')
  const publicKey = createPublicKey(card.card.public_key_pem)
  if (!verify(null, signingInput, publicKey, signature)) throw new Error('card bench: raw verify failed')
  const check = await verifyCapabilityCard(card)
  if (!check.ok) throw new Error(`card bench: verifyCapabilityCard failed: ${check.detail}`)

  const subject = async (): Promise<number> => {
    const t0 = performance.now()
    for (let i = 0; i < iterations; i++) {
      const result = await verifyCapabilityCard(card)
      if (!result.ok) throw new Error('card bench: verification failed')
    }
    return iterations / ((performance.now() - t0) / 1000)
  }
  const baseline = (): number => {
    const t0 = performance.now()
    for (let i = 0; i < iterations; i++) {
      if (!verify(null, signingInput, publicKey, signature)) throw new Error('card bench: raw verify failed')
    }
    return iterations / ((performance.now() - t0) / 1000)
  }
  await subject()
  baseline()
  const times = await timeRounds(rounds, subject, baseline)
  return {
    name: 'capability-card verification',
    subjectOps: median(times.subject),
    baselineOps: median(times.baseline),
    ratio: medianOfRatios(times.subject, times.baseline),
    iterations,
    rounds,
  }
}

/** Lines of a valid chain as read from a file (bytes, without the newline). */
export function buildChainLines(count: number, key: Uint8Array): Buffer[] {
  const lines: Buffer[] = []
  let prev = GENESIS_PREV_HASH
  const ts = 1_796_000_000_000_000_000n
  for (let i = 0; i < count; i++) {
    const ticket = `task${(i % 997).toString(16).padStart(8, '0')}`
    const entry = buildTrackerEntry(
      {
        trackerName: 'bernstein',
        ticketId: ticket,
        action: i % 3 === 0 ? 'transition' : i % 3 === 1 ? 'claim' : 'comment',
        actor: { session_id: 'bernstein-a2a', role: 'backend', model: 'none' },
        inputPrompt: `note ${i}`,
        outputBlob: JSON.stringify({ id: ticket, status: 'open', version: i, result_summary: null }),
        etagBefore: `open@${i}`,
        etagAfter: `open@${i + 1}`,
        idempotencyKey: `${ticket}@${i + 1}`,
      },
      { prevEntryHash: prev, key, tsNs: ts + BigInt(i), id: i.toString(16).padStart(32, '0') },
    )
    prev = entry.entry_hash
    lines.push(Buffer.from(trackerEntryLine(entry).slice(0, -1), 'utf8'))
  }
  return lines
}

export async function chainVerification(count: number, rounds: number): Promise<MicroResult> {
  const key = Buffer.from('0123456789abcdef'.repeat(4), 'ascii')
  const lines = buildChainLines(count, key)
  const subject = async (): Promise<number> => {
    const t0 = performance.now()
    const verifier = new TrackerAuditVerifier(key)
    for (const line of lines) verifier.push(line)
    const result = verifier.result()
    if (!result.ok || result.value.entries !== count) throw new Error(`chain bench: ${result.ok ? 'wrong count' : result.detail}`)
    return count / ((performance.now() - t0) / 1000)
  }
  const baseline = (): number => {
    const t0 = performance.now()
    let sink = 0
    for (const line of lines) {
      sink ^= createHash('sha256').update(line).digest()[0] ?? 0
      sink ^= createHmac('sha256', key).update(line).digest()[0] ?? 0
    }
    if (sink < 0) throw new Error('unreachable')
    return count / ((performance.now() - t0) / 1000)
  }
  const times = await timeRounds(rounds, subject, baseline)
  return {
    name: 'tracker-audit chain verification',
    subjectOps: median(times.subject),
    baselineOps: median(times.baseline),
    ratio: medianOfRatios(times.subject, times.baseline),
    iterations: count,
    rounds,
  }
}

/** Signing and verifying one signed federation request (a delivery body of about 2 KiB) against raw Ed25519. */
export async function peerSignatures(iterations: number, rounds: number): Promise<MicroResult> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const signer = { keyid: keyFingerprint(publicKey), privateKey }
  const key = pinnedPeerKey(publicKey)
  const body = JSON.stringify({ sender: { name: 'bench-org', description: 'x'.repeat(1024) }, task: { id: 'bench-1', message: 'y'.repeat(1024) } })
  const request = { method: 'POST', url: 'http://127.0.0.1:8052/a2a/v0/tasks', headers: { 'content-type': 'application/json' }, body }
  const once = async (): Promise<void> => {
    const fields = await signPeerRequest(signer, systemClock, request)
    const verified = await verifyPeerRequest(key, systemClock, 300, { ...request, headers: { ...request.headers, ...fields } })
    if (!verified.ok) throw new Error(`signature bench: ${verified.detail}`)
  }
  await once()
  const bytes = Buffer.from(body, 'utf8')
  const subject = async (): Promise<number> => {
    const t0 = performance.now()
    for (let i = 0; i < iterations; i++) await once()
    return iterations / ((performance.now() - t0) / 1000)
  }
  const baseline = (): number => {
    const t0 = performance.now()
    for (let i = 0; i < iterations; i++) {
      if (!verify(null, bytes, publicKey, sign(null, bytes, privateKey))) throw new Error('signature bench: raw verify failed')
    }
    return iterations / ((performance.now() - t0) / 1000)
  }
  await subject()
  baseline()
  const times = await timeRounds(rounds, subject, baseline)
  return {
    name: 'signed request: sign + verify',
    subjectOps: median(times.subject),
    baselineOps: median(times.baseline),
    ratio: medianOfRatios(times.subject, times.baseline),
    iterations,
    rounds,
  }
}
