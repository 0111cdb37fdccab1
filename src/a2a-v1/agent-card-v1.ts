import type { V1AgentCard } from './a2a-v1-wire.js'

/** Where the two A2A v1.0 bindings are served, under one interface base. */
export const A2A_V1_BASE = '/a2a/v1'

export interface AgentCardV1Profile {
  readonly name: string
  readonly description: string
  readonly version: string
  readonly publicBaseUrl: string
}

/**
 * The A2A v1.0 AgentCard of this node (spec §1.3 of the reference), unsigned: both bindings at `/a2a/v1` with
 * protocolVersion 1.0 (JSON-RPC first, the client's default), bearer authentication, the extended card. No field is
 * empty or at its default value, so that the card canonicalises the same with and without the default-value
 * stripping the SDKs apply before verifying a signature.
 */
export function agentCardV1(profile: AgentCardV1Profile): V1AgentCard {
  const base = profile.publicBaseUrl
  return {
    name: profile.name,
    description: profile.description,
    supportedInterfaces: [
      { url: `${base}${A2A_V1_BASE}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${base}${A2A_V1_BASE}`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ],
    provider: { organization: 'bernstein', url: base },
    version: profile.version,
    documentationUrl: `${base}/docs`,
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'An operator or agent token of this node' } },
    },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'task-orchestration',
        name: 'Task orchestration',
        description: 'Runs delegated tasks through Bernstein workers, with signed receipts and an auditable lineage',
        tags: ['orchestration', 'a2a'],
      },
    ],
  }
}
