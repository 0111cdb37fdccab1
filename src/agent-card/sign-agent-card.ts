/**
 * Bernstein's signed "v1.0" agent card (`/.well-known/agent.json`, §6.3): a JSON payload plus
 * `signatures: [{kid, alg: "EdDSA", typ: "agent-card+jws", jws}]`, where `jws` is a detached compact JWS over
 * the JCS of the payload without `signatures`.
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import { jcs } from '../canonical/jcs.js'
import type { Schema } from '../contract.js'
import { signDetachedJws } from '../crypto/detached-jws.js'

export const AGENT_CARD_TYP = 'agent-card+jws' satisfies AgentCardSignature['typ']

/** One entry of `signatures`. */
export type AgentCardSignature = Schema<'AgentCardSignature'>

/** The card payload: plain JSON data (Bernstein's own shape, §6.2), without `signatures`. */
export type AgentCardPayload = { [member: string]: unknown }

/**
 * Any signed payload, not only the contract's `SignedAgentCard` (which is one of them, the card this node serves):
 * signing and verification work on whatever members a card has, Bernstein's vectors and other nodes' cards included.
 */
export type SignedAgentCard = AgentCardPayload & { signatures: AgentCardSignature[] }

export interface SignAgentCardOptions {
  kid: string
  privateKey: KeyObject
}

/**
 * The signed bytes: JCS (RFC 8785) of the card with its `signatures` member removed (`capabilityCard` and every
 * other member stay). Signing and verification both use this.
 *
 * @throws TypeError when the card is not a JSON object of JCS-serialisable data.
 */
export function agentCardSigningBytes(card: AgentCardPayload): Uint8Array {
  if (typeof card !== 'object' || card === null || Array.isArray(card)) throw new TypeError('agent card must be a JSON object')
  const { signatures: _ignored, ...payload } = card
  return jcs(payload)
}

/**
 * Signs a card payload. The result is a new object; the payload is not modified.
 *
 * @throws TypeError when the payload already has `signatures`, is not JCS-serialisable, or the key is not an
 *   Ed25519 private key.
 * @example const card = await signAgentCard(payload, { kid: 'agent-bernstein-orchestrator', privateKey })
 */
export async function signAgentCard(payload: AgentCardPayload, { kid, privateKey }: SignAgentCardOptions): Promise<SignedAgentCard> {
  if (typeof kid !== 'string' || kid === '') throw new TypeError('kid must be a non-empty string')
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new TypeError('agent card payload must be a JSON object')
  }
  if ('signatures' in payload) throw new TypeError('agent card payload must not contain signatures yet')
  const jws = await signDetachedJws(agentCardSigningBytes(payload), { alg: 'EdDSA', kid, typ: AGENT_CARD_TYP }, privateKey)
  return { ...payload, signatures: [{ kid, alg: 'EdDSA', typ: AGENT_CARD_TYP, jws }] }
}

/**
 * The bytes to serve: JCS of the whole card, `signatures` included (§6.1). `/.well-known/agent.json` and
 * `/.well-known/agent-card.json` serve these same bytes.
 */
export function agentCardBytes(card: SignedAgentCard): Uint8Array {
  return jcs(card)
}
