import { Repository } from './repository.js'
import { inLoopSlices } from './loop-slices.js'

/** A stored, signed checkpoint of the chain partition heads (the body is canonical JSON, the JWS detached). */
export interface StoredCheckpoint {
  readonly id: string
  readonly createdAt: number
  readonly body: string
  readonly jws: string
}

/** Signed checkpoints of every chain partition head (docs/scaling.md), oldest first. */
export class CheckpointRepository extends Repository {
  async insert(checkpoint: StoredCheckpoint): Promise<void> {
    await this.db
      .insertInto('chain_checkpoints')
      .values({ id: checkpoint.id, created_at: checkpoint.createdAt, body: checkpoint.body, jws: checkpoint.jws })
      .execute()
  }

  /** Every checkpoint, oldest first, in pages so verification uses constant memory, giving the loop back as a chain does. */
  stream(pageSize = 200): AsyncGenerator<StoredCheckpoint> {
    return inLoopSlices(this.#pages(pageSize))
  }

  async *#pages(pageSize: number): AsyncGenerator<StoredCheckpoint> {
    let after: { createdAt: number; id: string } | null = null
    for (;;) {
      let q = this.db.selectFrom('chain_checkpoints').select(['id', 'created_at', 'body', 'jws'])
      if (after !== null) {
        const { createdAt, id } = after
        // A row comparison, which the (created_at, id) index can start from; the same condition spelled with `or`
        // made PostgreSQL read every later checkpoint for each page, so a walk grew with the square of their number.
        q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(createdAt, id)))
      }
      const rows = await q.orderBy('created_at').orderBy('id').limit(pageSize).execute()
      for (const r of rows) yield { id: r.id, createdAt: Number(r.created_at), body: r.body, jws: r.jws }
      const last = rows[rows.length - 1]
      if (last === undefined || rows.length < pageSize) return
      after = { createdAt: Number(last.created_at), id: last.id }
    }
  }
}
