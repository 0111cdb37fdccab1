import { createHash, randomBytes } from 'node:crypto'
import { constantTimeEqual } from '../crypto/constant-time.js'
import { AppError } from '../errors.js'
import type { TokenIdentity } from './caller.js'
import type { Clock, Ids } from '../runtime.js'
import type { Store } from '../store/store.js'
import type { ApiToken, TokenRole } from './api-token.js'

/** Issued tokens look like `bat_<id>.<secret>`: the id finds the row, the secret is compared in constant time. */
const TOKEN_PATTERN = /^bat_([0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/

const hashSecret = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex')

export interface IssuedToken {
  readonly id: string
  /** Shown once; only its hash is stored. */
  readonly token: string
  readonly role: TokenRole
  readonly tenant: string | null
  readonly expires_at: number | null
}

export interface TokenServiceDeps {
  readonly store: Store
  readonly clock: Clock
  readonly ids: Ids
}

export class TokenService {
  readonly #deps: TokenServiceDeps

  constructor(deps: TokenServiceDeps) {
    this.#deps = deps
  }

  async create(input: { role: TokenRole; tenant: string | null; expiresInSeconds: number | null; label?: string | null }): Promise<IssuedToken> {
    const id = this.#deps.ids.shortId()
    const secret = randomBytes(32).toString('base64url')
    const now = this.#deps.clock.now()
    const expiresAt = input.expiresInSeconds === null ? null : now + input.expiresInSeconds
    // Agent tokens are always bound to one tenant (`default` unless told otherwise): a null tenant would let the
    // holder pick any tenant with `x-tenant-id`, as only the operator may.
    const tenant = input.role === 'agent' ? (input.tenant ?? 'default') : input.tenant
    await this.#deps.store.repos.tokens.insert({
      id,
      secretHash: hashSecret(secret),
      role: input.role,
      tenantId: tenant,
      label: input.label ?? null,
      createdAt: now,
      expiresAt,
      revokedAt: null,
    })
    return { id, token: `bat_${id}.${secret}`, role: input.role, tenant, expires_at: expiresAt }
  }

  async revoke(id: string): Promise<void> {
    if (!(await this.#deps.store.repos.tokens.revoke(id, this.#deps.clock.now()))) throw new AppError('not_found', `Token '${id}' not found or already revoked`)
  }

  list(): Promise<ApiToken[]> {
    return this.#deps.store.repos.tokens.list()
  }

  /**
   * The identity behind a presented token, or null when it is unknown, revoked, expired or malformed. A token that
   * is not of the issued form is refused at once, without a lookup (and without a promise).
   */
  resolve(presented: string): TokenIdentity | null | Promise<TokenIdentity | null> {
    const match = TOKEN_PATTERN.exec(presented)
    if (!match) return null
    return this.#lookup(match[1] as string, match[2] as string)
  }

  async #lookup(id: string, secret: string): Promise<TokenIdentity | null> {
    const token = await this.#deps.store.repos.tokens.get(id)
    if (!token) return null
    const expected = Buffer.from(token.secretHash, 'hex')
    const actual = Buffer.from(hashSecret(secret), 'hex')
    if (!constantTimeEqual(expected, actual)) return null
    const now = this.#deps.clock.now()
    if (token.revokedAt !== null || (token.expiresAt !== null && now >= token.expiresAt)) return null
    return { role: token.role, tokenId: token.id, tenantId: token.role === 'agent' ? (token.tenantId ?? 'default') : token.tenantId }
  }
}
