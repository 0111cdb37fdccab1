import type { Selectable } from 'kysely'
import type { ApiToken, TokenRole } from '../auth/api-token.js'
import type { ApiTokenTable } from './database.js'
import { Repository } from './repository.js'

function rowToToken(row: Selectable<ApiTokenTable>): ApiToken {
  return {
    id: row.id,
    secretHash: row.secret_hash,
    role: row.role as TokenRole,
    tenantId: row.tenant_id,
    label: row.label,
    createdAt: Number(row.created_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  }
}

export class TokenRepository extends Repository {
  async insert(token: ApiToken): Promise<void> {
    await this.db
      .insertInto('api_tokens')
      .values({
        id: token.id,
        secret_hash: token.secretHash,
        role: token.role,
        tenant_id: token.tenantId,
        label: token.label,
        created_at: token.createdAt,
        expires_at: token.expiresAt,
        revoked_at: token.revokedAt,
      })
      .execute()
  }

  async get(id: string): Promise<ApiToken | undefined> {
    const row = await this.db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst()
    return row && rowToToken(row)
  }

  async list(): Promise<ApiToken[]> {
    const rows = await this.db.selectFrom('api_tokens').selectAll().orderBy('created_at', 'asc').execute()
    return rows.map(rowToToken)
  }

  /** Marks the token revoked; false when no such (unrevoked) token exists. */
  async revoke(id: string, at: number): Promise<boolean> {
    const result = await this.db.updateTable('api_tokens').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }
}
