import { type RouteDefinition, route } from '../http/route.js'
import type { NodeIdentity, ServedDocument } from './node-identity.js'

/** An entity tag without its weakness indicator: If-None-Match compares weakly (RFC 9110 §13.1.2). */
const opaqueTag = (tag: string): string => {
  const trimmed = tag.trim()
  return trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed
}

/**
 * Exact bytes with caching validators; a matching `If-None-Match` gets a 304 without a body. `issuedAt` (Unix
 * seconds) is the `Last-Modified` of a signed document: the capability card's issue time, shared by every replica.
 */
function document(doc: ServedDocument, ifNoneMatch: string | undefined, cacheControl: string, issuedAt?: number) {
  const headers = {
    ETag: doc.etag,
    'Cache-Control': cacheControl,
    ...(issuedAt !== undefined && { 'Last-Modified': new Date(Math.floor(issuedAt) * 1000).toUTCString() }),
  }
  const ours = opaqueTag(doc.etag)
  if (ifNoneMatch?.split(',').some((tag) => opaqueTag(tag) === ours || tag.trim() === '*')) {
    return { status: 304 as const, body: undefined, headers }
  }
  return { status: 200 as const, raw: doc.bytes, contentType: 'application/json', headers }
}

export function identityRoutes(identity: NodeIdentity): RouteDefinition[] {
  // The agent cards embed or accompany the capability card: they are as new as it is (never older than their bytes).
  const issuedAt = async (): Promise<number> => (await identity.capabilityCard()).signed.card.created_at
  return [
    route('getAgentCard', 'get', '/.well-known/agent.json', async ({ headers }) =>
      document(await identity.agentCard(), headers['if-none-match'], 'public, max-age=3600', await issuedAt()),
    ),
    route('getAgentCardV1Path', 'get', '/.well-known/agent-card.json', async ({ headers }) =>
      document((await identity.agentCardV1()).document, headers['if-none-match'], 'public, max-age=3600', await issuedAt()),
    ),
    route('getJwks', 'get', '/.well-known/agent.json/keys', async ({ headers }) => document(identity.jwks(), headers['if-none-match'], 'public, max-age=300')),
    // The proof is the answer's signature (src/http/signed-answers.ts signs it, bound to the challenger's request).
    route('getPeerProof', 'get', '/a2a/v0/proof', async ({ query }) => ({
      status: 200,
      body: { nonce: query.nonce, issuer: (await identity.capabilityCard()).signed.card.issuer, key_fingerprint: identity.capabilityCardFingerprint },
      headers: { 'Cache-Control': 'no-store' },
    })),
    route('getCapabilityCard', 'get', '/.well-known/a2a-capability-card.json', async ({ headers }) =>
      document((await identity.capabilityCard()).document, headers['if-none-match'], 'public, max-age=300', await issuedAt()),
    ),
  ]
}
