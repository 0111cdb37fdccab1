import type { KeyObject } from 'node:crypto'
import { type KeyName, listArchivedKeys, loadOrCreateKey } from '../crypto/key-files.js'
import { keyFingerprint } from '../crypto/fingerprint.js'
import { type Jwks, type JwksKey, jwksEntry } from '../crypto/jwks.js'

/** A signing key with the `kid` it is published under. */
export interface NodeKey {
  readonly kid: string
  readonly privateKey: KeyObject
  readonly publicKey: KeyObject
}

/**
 * kids are derived from the key, so a rotated key gets a new kid and a JWKS can publish the old and the new key
 * side by side (a fixed kid would make every signature made before a rotation unverifiable).
 */
export function derivedKid(prefix: string, publicKey: KeyObject): string {
  return `${prefix}-${keyFingerprint(publicKey).slice('sha256:'.length, 'sha256:'.length + 16)}`
}

export const AGENT_CARD_KID_PREFIX = 'agent-bernstein-orchestrator'
export const RECEIPT_KID_PREFIX = 'a2a-server-lineage'

export interface NodeKeys {
  readonly agentCard: NodeKey
  readonly receipt: NodeKey
  readonly capabilityCard: NodeKey
  /** Public keys rotated out less than 24 h ago, still published so older signatures verify. */
  readonly archived: readonly JwksKey[]
}

async function load(dataDir: string, name: KeyName, prefix: string): Promise<NodeKey> {
  const stored = await loadOrCreateKey(dataDir, name)
  return { kid: derivedKid(prefix, stored.publicKey), privateKey: stored.privateKey, publicKey: stored.publicKey }
}

/** The node's three Ed25519 keys from `<dataDir>/keys/` (created 0600 on first start), plus the archive. */
export async function loadNodeKeys(dataDir: string, now: Date = new Date()): Promise<NodeKeys> {
  const agentCard = await load(dataDir, 'agent-card', AGENT_CARD_KID_PREFIX)
  const receipt = await load(dataDir, 'receipt', RECEIPT_KID_PREFIX)
  const capabilityCard = await load(dataDir, 'capability-card', 'a2a-capability')
  const archived: JwksKey[] = []
  for (const [name, prefix] of [
    ['agent-card', AGENT_CARD_KID_PREFIX],
    ['receipt', RECEIPT_KID_PREFIX],
  ] as const) {
    for (const key of await listArchivedKeys(dataDir, name, { now })) archived.push(jwksEntry(key.publicKey, derivedKid(prefix, key.publicKey)))
  }
  return { agentCard, receipt, capabilityCard, archived }
}

/** The published JWKS: the current agent-card and receipt keys first, then archived ones. */
export function nodeJwks(keys: NodeKeys): Jwks {
  return { keys: [jwksEntry(keys.agentCard.publicKey, keys.agentCard.kid), jwksEntry(keys.receipt.publicKey, keys.receipt.kid), ...keys.archived] }
}
