import type { Selectable } from 'kysely'
import type { ChainEntryTable } from './database.js'
import { Repository } from './repository.js'
import { ReusableInsert, ReusableQuery } from './reusable-query.js'

/** A stored chain line and its position (1-based). */
export interface ChainLine {
  readonly position: number
  readonly entryHash: string
  readonly ticketId: string | null
  readonly trackerName: string | null
  readonly line: string
}

export interface ChainHead {
  readonly headHash: string
  readonly length: number
}

export interface ChainListQuery {
  readonly chain: string
  readonly ticketId?: string
  readonly trackerName?: string
  /** Lines strictly after this position. */
  readonly afterPosition?: number
  readonly limit?: number
}

const SELECT_HEAD = new ReusableQuery(1, (db, chain: string) => db.selectFrom('chain_heads').select(['head_hash', 'length']).where('chain', '=', chain))
const SELECT_HEAD_FOR_UPDATE = new ReusableQuery(1, (db, chain: string) =>
  db.selectFrom('chain_heads').select(['head_hash', 'length']).where('chain', '=', chain).forUpdate(),
)
const INSERT_ENTRY = new ReusableInsert<Selectable<ChainEntryTable>>('chain_entries')
const UPDATE_HEAD = new ReusableQuery(3, (db, chain: string, headHash: string, length: number) =>
  db.updateTable('chain_heads').set({ head_hash: headHash, length }).where('chain', '=', chain),
)
/**
 * PostgreSQL: the entry and the head it becomes in one statement (a data-modifying CTE; the head is set from the
 * inserted row's RETURNING values), one round trip instead of two while the head's lock is held.
 */
const APPEND_AND_MOVE_HEAD = new ReusableQuery(
  6,
  (db, chain: string, position: number, entryHash: string, ticketId: string | null, trackerName: string | null, line: string) =>
    db
      .with('appended', (qc) =>
        qc
          .insertInto('chain_entries')
          .values({ chain, position, entry_hash: entryHash, ticket_id: ticketId, tracker_name: trackerName, line })
          .returning(['chain', 'position', 'entry_hash']),
      )
      .updateTable('chain_heads')
      .from('appended')
      .set((eb) => ({ head_hash: eb.ref('appended.entry_hash'), length: eb.ref('appended.position') }))
      .whereRef('chain_heads.chain', '=', 'appended.chain'),
)

/**
 * Append-only chains. Callers append inside a transaction after `lockHead`, which on PostgreSQL takes the
 * head row's lock (`FOR UPDATE`), so appends from several processes queue instead of forking the chain.
 */
export class ChainRepository extends Repository {
  /** The chain's head, locked for this transaction; created empty (`genesis`) on first use. */
  async lockHead(chain: string, genesis: string): Promise<ChainHead> {
    // The head row exists for every chain but the newest, so it is read (and locked) first; only a missing one is
    // created, by whichever transaction gets there first, and then read again under the lock.
    const existing = await this.#selectHead(chain)
    if (existing !== undefined) return existing
    await this.db
      .insertInto('chain_heads')
      .values({ chain, head_hash: genesis, length: 0 })
      .onConflict((oc) => oc.column('chain').doNothing())
      .execute()
    const created = await this.#selectHead(chain)
    if (created === undefined) throw new Error(`chain head '${chain}' vanished while it was being created`)
    return created
  }

  async #selectHead(chain: string, query = this.engine === 'postgres' ? SELECT_HEAD_FOR_UPDATE : SELECT_HEAD): Promise<ChainHead | undefined> {
    const row = await query.first(this.db, this.engine, chain)
    return row && { headHash: row.head_hash, length: Number(row.length) }
  }

  /** The chain's head as it is now, without a lock. */
  async head(chain: string): Promise<ChainHead | undefined> {
    return this.#selectHead(chain, SELECT_HEAD)
  }

  /** Appends after a `lockHead` in the same transaction; `previous` is what `lockHead` returned. */
  async append(chain: string, previous: ChainHead, entry: Omit<ChainLine, 'position'>): Promise<number> {
    const position = previous.length + 1
    if (this.engine === 'postgres') {
      await APPEND_AND_MOVE_HEAD.execute(this.db, this.engine, chain, position, entry.entryHash, entry.ticketId, entry.trackerName, entry.line)
      return position
    }
    await INSERT_ENTRY.execute(this.db, this.engine, {
      chain,
      position,
      entry_hash: entry.entryHash,
      ticket_id: entry.ticketId,
      tracker_name: entry.trackerName,
      line: entry.line,
    })
    await UPDATE_HEAD.execute(this.db, this.engine, chain, entry.entryHash, position)
    return position
  }

  async list(query: ChainListQuery): Promise<ChainLine[]> {
    let q = this.db.selectFrom('chain_entries').select(['position', 'entry_hash', 'ticket_id', 'tracker_name', 'line']).where('chain', '=', query.chain)
    if (query.ticketId !== undefined) q = q.where('ticket_id', '=', query.ticketId)
    if (query.trackerName !== undefined) q = q.where('tracker_name', '=', query.trackerName)
    if (query.afterPosition !== undefined) q = q.where('position', '>', query.afterPosition)
    q = q.orderBy('position', 'asc')
    if (query.limit !== undefined) q = q.limit(query.limit)
    const rows = await q.execute()
    return rows.map((r) => ({ position: Number(r.position), entryHash: r.entry_hash, ticketId: r.ticket_id, trackerName: r.tracker_name, line: r.line }))
  }

  /** Streams a whole chain in pages, so verification and export use constant memory. */
  async *stream(chain: string, pageSize = 1000): AsyncGenerator<ChainLine> {
    let after = 0
    for (;;) {
      const page = await this.list({ chain, afterPosition: after, limit: pageSize })
      for (const line of page) yield line
      if (page.length < pageSize) return
      after = (page[page.length - 1] as ChainLine).position
    }
  }
}
