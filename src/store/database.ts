import type { Generated } from 'kysely'

/** Tables as stored. JSON values are TEXT on both engines so that one set of queries serves both. */
export interface TaskTable {
  id: string
  tenant_id: string
  title: string
  description: string
  role: string
  priority: number
  scope: string
  complexity: string
  estimated_minutes: number
  status: string
  task_type: string
  depends_on: string
  parent_task_id: string | null
  owned_files: string
  assigned_agent: string | null
  result_summary: string | null
  terminal_reason: string | null
  metadata: string
  created_at: number
  updated_at: number
  claimed_at: number | null
  completed_at: number | null
  closed_at: number | null
  progress_log: string
  version: number
}

export interface A2ATaskTable {
  id: string
  tenant_id: string
  bernstein_task_id: string
  sender: string
  message: string
  created_at: number
  updated_at: number
  /** The newest receipt (acceptance, then completion) as JSON text, or null when unattested. */
  receipt: string | null
  receipt_kind: string | null
}

export interface A2AArtifactTable {
  seq: Generated<number>
  a2a_task_id: string
  name: string
  content_type: string
  data: string
  created_at: number
}

/** A2A v1.0 additions to an A2A task (migration 010): its context. */
export interface A2AV1TaskTable {
  a2a_task_id: string
  tenant_id: string
  context_id: string
  created_at: number
}

/** A2A v1.0 history: each message sent into an A2A task, as JSON text of the v1 Message. */
export interface A2AV1MessageTable {
  seq: Generated<number>
  a2a_task_id: string
  message_id: string
  role: string
  body: string
  created_at: number
}

export interface A2AV1StreamEventTable {
  a2a_task_id: string
  seq: number
  kind: string
  state: string
  artifacts: number
  body: string
  created_at: number
}

export interface A2AMessageTable {
  id: string
  tenant_id: string
  sender: string
  recipient: string
  content: string
  task_id: string
  direction: string
  delivered: number
  external_endpoint: string | null
  created_at: number
}

export interface FederatedInboundTable {
  id: string
  tenant_id: string
  peer_name: string
  remote_task_id: string
  task_id: string
  a2a_task_id: string
  message: string
  role: string
  created_at: number
  /** Fingerprint of the capability-card key that vouched for the delivery; '' when none was required. */
  sender_key: string
  /** PEM of the card key whose signature the delivery carried; null when it was not signed (migration 011). */
  signing_key: string | null
}

export interface PeerTable {
  tenant_id: string
  name: string
  endpoint: string
  capabilities: string
  status: string
  last_seen: number
}

export interface ApiTokenTable {
  id: string
  secret_hash: string
  role: string
  tenant_id: string | null
  label: string | null
  created_at: number
  expires_at: number | null
  revoked_at: number | null
}

export interface ChainHeadTable {
  chain: string
  head_hash: string
  length: number
}

export interface ChainEntryTable {
  chain: string
  position: number
  entry_hash: string
  ticket_id: string | null
  tracker_name: string | null
  line: string
}

export interface ChainCheckpointTable {
  id: string
  created_at: number
  body: string
  jws: string
}

export interface NodeDocumentTable {
  name: string
  body: string
  key_fingerprint: string
  expires_at: number
}

export interface FederationLedgerTable {
  id: string
  tenant_id: string
  peer_url: string
  local_task_id: string
  remote_id: string | null
  remote_task_id: string | null
  remote_a2a_task_id: string | null
  status: string
  attempts: number
  last_error: string | null
  peer_issuer: string | null
  peer_fingerprint: string | null
  peer_jwks: string | null
  message: string
  role: string
  result: string | null
  created_at: number
  updated_at: number
  next_poll_at: number | null
  polls: number
  trust_level: string | null
  peer_card_key: string | null
}

export interface PeerNonceTable {
  key_fingerprint: string
  nonce: string
  seen_at: number
  expires_at: number
}

/** PostgreSQL: a change to a count not folded into `row_counts` yet (migration 016); empty on SQLite. */
export interface RowCountDeltaTable {
  name: string
  /** A bigint: a string on PostgreSQL. */
  delta: number | string
}

/** Counts kept on write by triggers (`tasks.<status>`, `peers`); see migration 007. */
export interface RowCountTable {
  name: string
  /** A bigint: a string on PostgreSQL. */
  n: number | string
}

/** A2A v1.0 push notification configs (migration 012). */
export interface A2AV1PushConfigTable {
  tenant_id: string
  a2a_task_id: string
  config_id: string
  url: string
  token: string | null
  auth_scheme: string | null
  auth_credentials: string | null
  created_at: number
}

/** The outbox of A2A v1.0 push deliveries (migration 012). */
export interface A2AV1PushDeliveryTable {
  seq: Generated<number>
  id: string
  tenant_id: string
  a2a_task_id: string
  config_id: string
  body: string
  status: string
  attempts: number
  next_attempt_at: number
  lease_owner: string | null
  lease_until: number | null
  last_error: string | null
  created_at: number
  finished_at: number | null
}

export interface Database {
  row_counts: RowCountTable
  row_count_deltas: RowCountDeltaTable
  peer_nonces: PeerNonceTable
  federation_ledger: FederationLedgerTable
  node_documents: NodeDocumentTable
  chain_heads: ChainHeadTable
  chain_entries: ChainEntryTable
  chain_checkpoints: ChainCheckpointTable
  api_tokens: ApiTokenTable
  tasks: TaskTable
  a2a_tasks: A2ATaskTable
  a2a_artifacts: A2AArtifactTable
  a2a_messages: A2AMessageTable
  a2a_v1_tasks: A2AV1TaskTable
  a2a_v1_messages: A2AV1MessageTable
  a2a_v1_stream_events: A2AV1StreamEventTable
  a2a_v1_push_configs: A2AV1PushConfigTable
  a2a_v1_push_deliveries: A2AV1PushDeliveryTable
  federated_inbound: FederatedInboundTable
  peers: PeerTable
}
