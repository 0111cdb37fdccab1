import type { Selectable } from 'kysely'
import type { ApiToken, TokenRole } from '../auth/api-token.js'
import type { ApiTokenTable } from './database.js'
import { Repository } from './repository.js'
import { integer, member, nullable, rowMapping, sameNames } from './row-mapping.js'

const TOKEN = rowMapping<ApiToken, Selectable<ApiTokenTable>>()({
  ...sameNames('id', 'secretHash'),
  role: member<TokenRole>(),
  ...sameNames('tenantId', 'label'),
  createdAt: integer,
  expiresAt: nullable(integer),
  revokedAt: nullable(integer),
})

export class TokenRepository extends Repository {
  async insert(token: ApiToken): Promise<void> {
    await this.db.insertInto('api_tokens').values(TOKEN.toRow(token)).execute()
  }

  async get(id: string): Promise<ApiToken | undefined> {
    const row = await this.db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst()
    return row && TOKEN.toDomain(row)
  }

  async list(): Promise<ApiToken[]> {
    const rows = await this.db.selectFrom('api_tokens').selectAll().orderBy('created_at', 'asc').execute()
    return rows.map(TOKEN.toDomain)
  }

  /** Marks the token revoked; false when no such (unrevoked) token exists. */
  async revoke(id: string, at: number): Promise<boolean> {
    const result = await this.db.updateTable('api_tokens').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }
}
