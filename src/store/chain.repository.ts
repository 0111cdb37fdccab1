import { CompiledQuery, type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely'
import type { ChainEntryTable, Database } from './database.js'
import type { Engine } from './engine.js'
import { Repository } from './repository.js'
import { inLoopSlices } from './loop-slices.js'
import { fixedShape } from './statement-shapes.js'
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

// Reads nothing a held-back INSERT writes, so on PostgreSQL it carries them (see statement-shapes.ts).
const SELECT_HEAD = new ReusableQuery(1, (db, chain: string) => db.selectFrom('chain_heads').select(['head_hash', 'length']).where('chain', '=', chain), 'host')
const SELECT_HEAD_FOR_UPDATE = new ReusableQuery(
  1,
  (db, chain: string) => db.selectFrom('chain_heads').select(['head_hash', 'length']).where('chain', '=', chain).forUpdate(),
  'host',
)
/** `chain` is `prefix` itself or one of its partitions (`<prefix>/...`; src/lineage/partitions.ts). */
function partitionsOf(eb: ExpressionBuilder<Database, 'chain_heads'>, prefix: string) {
  return eb.or([eb('chain', '=', prefix), eb(sql<string>`substr(chain, 1, ${prefix.length + 1})`, '=', `${prefix}/`)])
}

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
 * PostgreSQL: one statement that waits for the head's lock, moves the head to the entry, and stores the entry when
 * it was built on the head as it really was (`$3`, `$4`); either way it answers what the head was, and the lock is
 * then held to COMMIT. The head is locked by `FOR UPDATE`, which waits for a writer in flight and then reads the head
 * that writer made: an entry built on that writer's entry before it committed (this process's guess) is stored in
 * the same round trip. (A plain compare-and-swap cannot do that: its WHERE is tested on the head as of the
 * statement's start, before the writer committed, and so always missed when sends were in flight.) When the guess
 * was wrong, the head has moved to an entry not stored; the caller, holding the lock, builds the entry again on the
 * head as it was and stores it with APPEND_AND_MOVE_HEAD.
 */
const APPEND_ON_GUESS = fixedShape(
  `with locked as (
  select chain, head_hash, length from chain_heads where chain = $1 for update
), moved as (
  update chain_heads set head_hash = $2, length = locked.length + 1 from locked
  where chain_heads.chain = locked.chain
  returning locked.head_hash as previous_hash, locked.length as previous_length
), appended as (
  insert into chain_entries (chain, position, entry_hash, ticket_id, tracker_name, line)
  select $1, previous_length + 1, $2, $5, $6, $7 from moved where previous_hash = $3 and previous_length = $4
  returning position
)
select previous_hash, previous_length, (select count(*) from appended) as appended from moved`,
  'host',
)

/**
 * PostgreSQL: APPEND_ON_GUESS for an entry whose caller needs no answer, sent in the round trip of the transaction's
 * next statement or its COMMIT (write-behind.ts). Its answer comes too late to build the entry again, so a stale
 * guess (or no head row) fails the statement instead, through `bernstein_chain_moved` (migration 017): a serialization
 * failure, for which the store runs the whole transaction again, building on the heads as they are.
 */
const APPEND_BEFORE_COMMIT = fixedShape(
  `with locked as (
  select chain, head_hash, length from chain_heads where chain = $1 for update
), moved as (
  update chain_heads set head_hash = $2, length = locked.length + 1 from locked
  where chain_heads.chain = locked.chain and locked.head_hash = $3 and locked.length = $4
  returning chain_heads.length
), appended as (
  insert into chain_entries (chain, position, entry_hash, ticket_id, tracker_name, line)
  select $1, length, $2, $5, $6, $7 from moved
  returning position
)
select case when (select count(*) from appended) = 1 then 1 else bernstein_chain_moved($1) end as appended`,
  'before-commit',
)

/**
 * How many right guesses in a row make a chain's appends go with the COMMIT (APPEND_BEFORE_COMMIT) instead of in a
 * round trip of their own: a wrong one there costs the whole transaction, so only a chain this process alone has
 * been writing (one replica, or a partition no other replica writes) gets them.
 */
const CALM_AFTER = 8

/** The parameters of APPEND_ON_GUESS and APPEND_BEFORE_COMMIT: the entry, and the head it was built on. */
const onGuess = (chain: string, guess: ChainHead, entry: Omit<ChainLine, 'position'>): unknown[] => [
  chain,
  entry.entryHash,
  guess.headHash,
  guess.length,
  entry.ticketId,
  entry.trackerName,
  entry.line,
]

interface AppendOnGuessRow {
  readonly previous_hash: string
  readonly previous_length: number | string
  /** 1 when the entry was stored (a count: a string on PostgreSQL). */
  readonly appended: number | string
}

/** How `appendAtCommit` queues an append. */
export interface AtCommitOptions<T> {
  /**
   * Ahead of the appends queued so far: chain heads are locked in one order in every transaction (the receipt spine
   * before the tracker-audit chain), so that two writers never wait for each other's.
   */
  readonly first?: boolean
  /** Told what `build` returned once the append is stored (or travels with the COMMIT), before the next one. */
  readonly afterAppend?: (value: T) => Promise<void>
}

interface DeferredAppend {
  readonly chain: string
  readonly genesis: string
  readonly build: ChainEntryBuilder<unknown>
  readonly afterAppend: ((value: unknown) => Promise<void>) | undefined
}

/** How long an appender waits for the previous one's turn (ChainHeadCache.turn) before trying anyway. */
const TURN_WAIT_MS = 100

/** An entry built on a head; `build` may run more than once (PostgreSQL, when another writer moved the head). */
export type ChainEntryBuilder<T> = (head: ChainHead) => { readonly entry: Omit<ChainLine, 'position'>; readonly value: T }

/**
 * What a store shares with the chain repositories it binds to its connection and transactions.
 *
 * SQLite: this process is the only writer and the group commit runs transactions one at a time, so the heads are
 * kept here and an append costs one INSERT and one UPDATE, no read. The group commit clears them whenever it rolls
 * anything back (a savepoint or the whole group) and whenever another connection has committed since (PRAGMA
 * data_version, e.g. a CLI import), so they are read again from the database, which then holds the truth.
 */
export class ChainHeadCache {
  readonly #heads = new Map<string, ChainHead>()
  /** PostgreSQL: per chain, the turn of this process's latest appender (settled once its append statement returns). */
  readonly #turns = new Map<string, Promise<void>>()
  /** PostgreSQL: per chain, how many of this process's guesses of its head in a row were right (see CALM_AFTER). */
  readonly #rightInARow = new Map<string, number>()

  /**
   * PostgreSQL: waits until this process's previous appender to `chain` has its append statement answered (or
   * `boundMs`, by default {@link TURN_WAIT_MS}, have passed), so that the next one builds on the head that one made
   * instead of on the same guess: ten sends in flight built on one guess and all but one missed, two round trips
   * each. An append that travels with its COMMIT is answered with it: its turn lasts until its transaction settles,
   * because pipelines written on several connections reach PostgreSQL in no set order, and one built on another's
   * entry that arrived first would find the head stale. Bounded, because the wait is invisible to PostgreSQL's
   * deadlock detector: a cycle through it becomes a miss, never a hang. Returns the function that ends the turn.
   */
  async turn(chain: string, boundMs = TURN_WAIT_MS): Promise<() => void> {
    const previous = this.#turns.get(chain)
    let end = (): void => {}
    const mine = new Promise<void>((resolve) => {
      end = resolve
    })
    this.#turns.set(chain, mine)
    if (previous !== undefined) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([previous, new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)))])
      clearTimeout(timer)
    }
    return () => {
      end()
      if (this.#turns.get(chain) === mine) this.#turns.delete(chain)
    }
  }

  get(chain: string): ChainHead | undefined {
    return this.#heads.get(chain)
  }

  /** PostgreSQL: whether appends to `chain` may be built on the guess and sent with the COMMIT (see CALM_AFTER). */
  calm(chain: string): boolean {
    return (this.#rightInARow.get(chain) ?? 0) >= CALM_AFTER
  }

  /** PostgreSQL: a guess of `chain`'s head turned out right or wrong. */
  guessed(chain: string, right: boolean): void {
    if (right) this.#rightInARow.set(chain, Math.min((this.#rightInARow.get(chain) ?? 0) + 1, CALM_AFTER))
    else this.#rightInARow.delete(chain)
  }

  /**
   * PostgreSQL: the end of a transaction that appended on guesses (APPEND_BEFORE_COMMIT). Committed, they were right.
   * Otherwise the heads it left as guesses never came to be: they are forgotten (unless a later append has replaced
   * them already) and the chains are no longer calm, so that the next attempt reads and builds on the real heads.
   */
  settle(transaction: ChainTransaction, committed: boolean): void {
    for (const { chain, head, endTurn } of transaction.guesses) {
      this.guessed(chain, committed)
      if (!committed) {
        const now = this.#heads.get(chain)
        if (now !== undefined && now.headHash === head.headHash && now.length === head.length) this.#heads.delete(chain)
      }
      endTurn()
    }
  }

  set(chain: string, head: ChainHead): void {
    this.#heads.set(chain, head)
  }

  delete(chain: string): void {
    this.#heads.delete(chain)
  }

  clear(): void {
    this.#heads.clear()
  }
}

/** What one attempt of a transaction knows about its chain appends. */
export interface ChainTransaction {
  /**
   * When it first held a chain head's lock (`performance.now()`, once the statement that takes it has returned, so
   * time spent waiting for another writer's lock is not counted; for an append sent with the COMMIT, when it was
   * queued), for the hold-time histogram.
   */
  lockedAt: number | null
  /** Whether appends to a calm chain may go with the COMMIT (not after such an attempt failed). */
  readonly appendBeforeCommit: boolean
  /**
   * The heads its appends before COMMIT left as this process's guesses, and the ends of their chains' turns, for
   * `ChainHeadCache.settle`.
   */
  readonly guesses: Array<{ readonly chain: string; readonly head: ChainHead; readonly endTurn: () => void }>
}

/** A new attempt's state; `appendBeforeCommit` off after an attempt failed. */
export function chainTransaction(appendBeforeCommit: boolean): ChainTransaction {
  return { lockedAt: null, appendBeforeCommit, guesses: [] }
}

/**
 * Append-only chains. Callers append inside a transaction, either with `appendNext` (the head read, the entry built
 * on it, and stored, the head's lock taken as late as possible) or after `lockHead`, which on PostgreSQL takes the
 * head row's lock (`FOR UPDATE`) for the rest of the transaction. Either way appends from several processes queue
 * instead of forking the chain.
 */
export class ChainRepository extends Repository {
  /** SQLite: the heads themselves (see ChainHeadCache). */
  readonly #cache: ChainHeadCache | null
  /**
   * PostgreSQL: the head each chain had after this process's last append to it (committed or not yet), a guess
   * only. An append is built on it and APPEND_ON_GUESS checks it: right (one replica, or a partition no other replica
   * wrote since), the append is one round trip; wrong (another replica appended, or the transaction that moved it
   * rolled back), one more, under the lock.
   */
  readonly #hints: ChainHeadCache | null
  readonly #transaction: ChainTransaction | null
  /** PostgreSQL: the chains whose head this transaction has locked (appended to, or `lockHead`). */
  readonly #holding = new Set<string>()
  /** Appends `appendAtCommit` queued, in order; `flushDeferred` runs them. */
  readonly #deferred: DeferredAppend[] = []

  constructor(db: Kysely<Database>, engine: Engine, cache: ChainHeadCache | null = null, transaction: ChainTransaction | null = null) {
    super(db, engine)
    this.#cache = engine === 'sqlite' ? cache : null
    this.#hints = engine === 'postgres' ? cache : null
    this.#transaction = transaction
  }

  #locked(): void {
    if (this.#transaction !== null && this.#transaction.lockedAt === null) this.#transaction.lockedAt = performance.now()
  }

  /**
   * Appends the entry `build` makes from the chain's current head (created empty, `genesis`, on first use) and
   * returns its position and what `build` returned. PostgreSQL: the entry is built on this process's guess of the
   * head (or the head read without a lock) and stored by one statement that takes the head's lock (APPEND_ON_GUESS);
   * when the guess was wrong, it is built again on the head that statement found, and stored under the lock.
   */
  async appendNext<T>(chain: string, genesis: string, build: ChainEntryBuilder<T>): Promise<{ readonly position: number; readonly value: T }> {
    return this.#appendNext(chain, genesis, build, false)
  }

  /**
   * `appendNext`; `last` when nothing but the COMMIT and other such appends follow (`flushDeferred`), so that the
   * append may travel with the COMMIT. Appends in the middle of a transaction never do: their turn would last for the
   * rest of the transaction.
   */
  async #appendNext<T>(chain: string, genesis: string, build: ChainEntryBuilder<T>, last: boolean): Promise<{ readonly position: number; readonly value: T }> {
    if (this.engine !== 'postgres') {
      const head = await this.lockHead(chain, genesis)
      const { entry, value } = build(head)
      return { position: await this.append(chain, head, entry), value }
    }
    // A transaction that already appended to the chain holds its lock: nobody else can move it, no turn to wait for.
    let endTurn = this.#hints === null || this.#holding.has(chain) ? undefined : await this.#hints.turn(chain)
    try {
      const hint = this.#hints?.get(chain)
      if (last && endTurn !== undefined && hint !== undefined && this.#transaction?.appendBeforeCommit === true && this.#hints?.calm(chain) === true) {
        const appended = await this.#appendBeforeCommit(chain, hint, build, this.#transaction, endTurn)
        // The turn now ends when the transaction does (ChainHeadCache.settle).
        endTurn = undefined
        return appended
      }
      let guess = hint ?? (await this.head(chain)) ?? (await this.#create(chain, genesis))
      for (let attempt = 1; ; attempt++) {
        const built = build(guess)
        const { entry } = built
        const { rows } = await this.db.executeQuery<AppendOnGuessRow>(CompiledQuery.raw(APPEND_ON_GUESS, onGuess(chain, guess, entry)))
        const row = rows[0]
        if (row !== undefined) return this.#appended(chain, row, built, build)
        // No head row to lock: a new chain whose creator has not committed yet (this process's guess came from it).
        // Creating it again waits for that creator, then does nothing; its head is then there to be read.
        if (attempt >= 3) throw new Error(`chain head '${chain}' is not there to be appended to`)
        guess = await this.#create(chain, genesis)
      }
    } finally {
      endTurn?.()
    }
  }

  /**
   * PostgreSQL: the entry built on this process's guess of the head and handed to the connection, which sends it with
   * the transaction's next statement (at best its COMMIT); the guess becomes the entry, and the chain's turn passes
   * to the next appender once the transaction settles (`endTurn`, called by ChainHeadCache.settle). A stale guess
   * (another replica appended) fails the transaction there (APPEND_BEFORE_COMMIT).
   */
  async #appendBeforeCommit<T>(
    chain: string,
    guess: ChainHead,
    build: ChainEntryBuilder<T>,
    transaction: ChainTransaction,
    endTurn: () => void,
  ): Promise<{ readonly position: number; readonly value: T }> {
    const { entry, value } = build(guess)
    await this.db.executeQuery(CompiledQuery.raw(APPEND_BEFORE_COMMIT, onGuess(chain, guess, entry)))
    this.#locked()
    this.#holding.add(chain)
    const head: ChainHead = { headHash: entry.entryHash, length: guess.length + 1 }
    this.#hints?.set(chain, head)
    transaction.guesses.push({ chain, head, endTurn })
    return { position: head.length, value }
  }

  /** PostgreSQL: after APPEND_ON_GUESS, which holds the head's lock now: the entry stored, or built again and stored. */
  async #appended<T>(
    chain: string,
    row: AppendOnGuessRow,
    built: { readonly entry: Omit<ChainLine, 'position'>; readonly value: T },
    build: ChainEntryBuilder<T>,
  ): Promise<{ readonly position: number; readonly value: T }> {
    this.#locked()
    this.#holding.add(chain)
    const head: ChainHead = { headHash: row.previous_hash, length: Number(row.previous_length) }
    this.#hints?.guessed(chain, Number(row.appended) === 1)
    if (Number(row.appended) === 1) {
      this.#hints?.set(chain, { headHash: built.entry.entryHash, length: head.length + 1 })
      return { position: head.length + 1, value: built.value }
    }
    // The guess was wrong (another replica appended, or the writer it was built on rolled back); the lock is ours.
    const rebuilt = build(head)
    const position = await this.append(chain, head, rebuilt.entry)
    this.#hints?.set(chain, { headHash: rebuilt.entry.entryHash, length: position })
    return { position, value: rebuilt.value }
  }

  /**
   * Queues an append whose result the transaction does not need, to run as its last statement before COMMIT
   * (`flushDeferred`, called by the store). On PostgreSQL the head's lock is then held for the COMMIT alone, not
   * across the rest of the transaction's round trips. Only a repository bound to a transaction can defer.
   */
  appendAtCommit<T>(chain: string, genesis: string, build: ChainEntryBuilder<T>, options: AtCommitOptions<T> = {}): void {
    if (this.#transaction === null) throw new TypeError('appendAtCommit needs a transaction: the queued append runs just before its COMMIT')
    const queued: DeferredAppend = { chain, genesis, build, afterAppend: options.afterAppend as DeferredAppend['afterAppend'] }
    if (options.first === true) this.#deferred.unshift(queued)
    else this.#deferred.push(queued)
  }

  /**
   * Runs the queued appends in order (those queued `first` ahead of the rest), each followed by its `afterAppend`; the
   * store calls it as the transaction's last step.
   */
  async flushDeferred(): Promise<void> {
    for (let next = this.#deferred.shift(); next !== undefined; next = this.#deferred.shift()) {
      const { value } = await this.#appendNext(next.chain, next.genesis, next.build, true)
      await next.afterAppend?.(value)
    }
  }

  async #create(chain: string, genesis: string): Promise<ChainHead> {
    await this.db
      .insertInto('chain_heads')
      .values({ chain, head_hash: genesis, length: 0 })
      .onConflict((oc) => oc.column('chain').doNothing())
      .execute()
    const created = await this.#selectHead(chain, SELECT_HEAD)
    if (created === undefined) throw new Error(`chain head '${chain}' vanished while it was being created`)
    return created
  }

  /** The chain's head, locked for this transaction; created empty (`genesis`) on first use. */
  async lockHead(chain: string, genesis: string): Promise<ChainHead> {
    const head = await this.#lockHead(chain, genesis)
    this.#locked()
    this.#holding.add(chain)
    return head
  }

  async #lockHead(chain: string, genesis: string): Promise<ChainHead> {
    const cached = this.#cache?.get(chain)
    if (cached !== undefined) return cached
    // The head row exists for every chain but the newest, so it is read (and locked) first; only a missing one is
    // created, by whichever transaction gets there first, and then read again under the lock.
    const existing = await this.#selectHead(chain)
    if (existing !== undefined) {
      this.#cache?.set(chain, existing)
      return existing
    }
    await this.db
      .insertInto('chain_heads')
      .values({ chain, head_hash: genesis, length: 0 })
      .onConflict((oc) => oc.column('chain').doNothing())
      .execute()
    const created = await this.#selectHead(chain)
    if (created === undefined) throw new Error(`chain head '${chain}' vanished while it was being created`)
    this.#cache?.set(chain, created)
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
    this.#cache?.set(chain, { headHash: entry.entryHash, length: position })
    return position
  }

  /** Every chain that is `prefix` itself or starts with `prefix/`, with its head (for partitions and checkpoints). */
  async heads(prefix: string, page: { readonly after?: string; readonly limit?: number } = {}): Promise<Array<{ readonly chain: string } & ChainHead>> {
    let q = this.db
      .selectFrom('chain_heads')
      .select(['chain', 'head_hash', 'length'])
      .where((eb) => partitionsOf(eb, prefix))
    if (page.after !== undefined) q = q.where('chain', '>', page.after)
    q = q.orderBy('chain')
    if (page.limit !== undefined) q = q.limit(page.limit)
    const rows = await q.execute()
    return rows.map((r) => ({ chain: r.chain, headHash: r.head_hash, length: Number(r.length) }))
  }

  /**
   * One ticket's entries in every partition of `prefix` that holds any, by partition name, each in chain order: one
   * statement, an index probe per partition (chain_entries_ticket_idx), however many partitions there are.
   */
  async ticketLines(prefix: string, ticketId: string): Promise<Array<{ readonly chain: string } & ChainLine>> {
    const rows = await this.db
      .selectFrom('chain_entries')
      .select(['chain', 'position', 'entry_hash', 'ticket_id', 'tracker_name', 'line'])
      .where('chain', 'in', (eb) =>
        eb
          .selectFrom('chain_heads')
          .select('chain')
          .where((inner) => partitionsOf(inner, prefix)),
      )
      .where('ticket_id', '=', ticketId)
      .orderBy('chain')
      .orderBy('position')
      .execute()
    return rows.map((r) => ({
      chain: r.chain,
      position: Number(r.position),
      entryHash: r.entry_hash,
      ticketId: r.ticket_id,
      trackerName: r.tracker_name,
      line: r.line,
    }))
  }

  /** The entry hash stored at a position of a chain, if there is one. */
  async hashAt(chain: string, position: number): Promise<string | undefined> {
    const row = await this.db.selectFrom('chain_entries').select('entry_hash').where('chain', '=', chain).where('position', '=', position).executeTakeFirst()
    return row?.entry_hash
  }

  async list(query: ChainListQuery): Promise<ChainLine[]> {
    let q = this.db.selectFrom('chain_entries').select(['position', 'entry_hash', 'ticket_id', 'tracker_name', 'line']).where('chain', '=', query.chain)
    if (query.ticketId !== undefined) q = q.where('ticket_id', '=', query.ticketId)
    if (query.trackerName !== undefined) q = q.where('tracker_name', '=', query.trackerName)
    if (query.afterPosition !== undefined) q = q.where('position', '>', query.afterPosition)
    if (query.limit !== undefined && query.ticketId === undefined && query.trackerName === undefined) {
      // Positions are dense (1..length), so an unfiltered page is a range of them. The upper bound keeps what the
      // database reads to the page whatever plan it picks: PostgreSQL, on statistics older than the chain, chose a
      // bitmap scan of every later row and a sort, per page, so walking a chain grew with its square (verifying
      // 300 000 entries took 50 s, 170 us an entry; 5.6 million blocks read from disk per walk past shared_buffers).
      q = q.where('position', '<=', (query.afterPosition ?? 0) + query.limit)
    }
    q = q.orderBy('position', 'asc')
    if (query.limit !== undefined) q = q.limit(query.limit)
    const rows = await q.execute()
    return rows.map((r) => ({ position: Number(r.position), entryHash: r.entry_hash, ticketId: r.ticket_id, trackerName: r.tracker_name, line: r.line }))
  }

  /**
   * Streams a whole chain in pages, so verification and export use constant memory, and gives the event loop back
   * every few milliseconds of the reader's work (`inLoopSlices`): a verification of a long chain does not stop the node.
   */
  stream(chain: string, pageSize = 1000): AsyncGenerator<ChainLine> {
    return inLoopSlices(this.#pages(chain, pageSize))
  }

  async *#pages(chain: string, pageSize: number): AsyncGenerator<ChainLine> {
    let after = 0
    for (;;) {
      const page = await this.list({ chain, afterPosition: after, limit: pageSize })
      yield* page
      if (page.length < pageSize) return
      after = (page[page.length - 1] as ChainLine).position
    }
  }
}
