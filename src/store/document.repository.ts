import { Repository } from './repository.js'

export interface NodeDocument {
  readonly name: string
  readonly body: string
  readonly keyFingerprint: string
  /** Unix seconds; 0 = never. */
  readonly expiresAt: number
}

export class DocumentRepository extends Repository {
  /** Reads a document; `lock` holds its row for the transaction (PostgreSQL) so only one replica re-issues it. */
  async get(name: string, lock = false): Promise<NodeDocument | undefined> {
    let q = this.db.selectFrom('node_documents').selectAll().where('name', '=', name)
    if (lock && this.engine === 'postgres') q = q.forUpdate()
    const row = await q.executeTakeFirst()
    return row && { name: row.name, body: row.body, keyFingerprint: row.key_fingerprint, expiresAt: Number(row.expires_at) }
  }

  async put(doc: NodeDocument): Promise<void> {
    await this.db
      .insertInto('node_documents')
      .values({ name: doc.name, body: doc.body, key_fingerprint: doc.keyFingerprint, expires_at: doc.expiresAt })
      .onConflict((oc) => oc.column('name').doUpdateSet({ body: doc.body, key_fingerprint: doc.keyFingerprint, expires_at: doc.expiresAt }))
      .execute()
  }

  /** Takes the transaction-wide lock that serialises issuers across replicas (a placeholder row to lock on). */
  async lockName(name: string): Promise<void> {
    await this.db
      .insertInto('node_documents')
      .values({ name: `lock:${name}`, body: '', key_fingerprint: '', expires_at: 0 })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute()
    if (this.engine === 'postgres') await this.db.selectFrom('node_documents').select('name').where('name', '=', `lock:${name}`).forUpdate().execute()
  }
}
