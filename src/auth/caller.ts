/** Who is calling, as established by the auth middleware. Services receive the tenant, never the request. */
export interface Caller {
  /**
   * `anonymous` only reaches public paths (health, discovery, the API description); `metrics` (the
   * `BERNSTEIN_METRICS_TOKEN`) reaches them and `GET /metrics`.
   */
  readonly role: 'operator' | 'agent' | 'metrics' | 'anonymous'
  readonly tenantId: string
  /** The agent token's id, or null for the operator token (and for disabled auth). */
  readonly tokenId: string | null
  /**
   * The tenant comes from the token (agent tokens, operator tokens issued for one tenant), not from the header:
   * such a caller never sees beyond its tenant, node-wide endpoints included.
   */
  readonly tenantBound: boolean
}

/** An identity a bearer token resolves to. Agent tokens are bound to one tenant; the operator's is not. */
export interface TokenIdentity {
  readonly role: 'operator' | 'agent' | 'metrics'
  readonly tokenId: string | null
  readonly tenantId: string | null
}

/**
 * Resolves a bearer token to an identity (null: unknown or expired). May answer at once (the operator and metrics
 * tokens are compared in memory) or later (issued tokens are looked up in the store).
 */
export type TokenResolver = (token: string) => TokenIdentity | null | Promise<TokenIdentity | null>
