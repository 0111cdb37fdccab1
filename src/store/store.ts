import { CompiledQuery, sql } from 'kysely'
import { A2ARepository } from './a2a.repository.js'
import { A2AV1Repository } from './a2a-v1.repository.js'
import { A2AV1StreamEventRepository } from './a2a-v1-stream-events.repository.js'
import { ChainHeadCache, ChainRepository, type ChainTransaction, chainTransaction } from './chain.repository.js'
import { CheckpointRepository } from './checkpoint.repository.js'
import { A2AV1PushRepository } from './a2a-v1-push.repository.js'
import { DocumentRepository } from './document.repository.js'
import { FederationRepository } from './federation.repository.js'
import { PeerNonceRepository } from './peer-nonce.repository.js'
import type { Connection } from './connect.js'
import type { Engine } from './engine.js'
import { TaskRepository } from './task.repository.js'
import { TokenRepository } from './token.repository.js'
import { SqliteGroupCommit } from './sqlite-group-commit.js'
import { FOLD_COUNTS } from './row-counts.js'
import { DatabaseUnavailable } from './unavailable.js'
import { type StorageObserver, asStorageFault } from './storage-fault.js'

/**
 * PostgreSQL gave up on a transaction to break a deadlock or a serialization conflict (among them a chain append sent
 * with its COMMIT on a stale head: migration 017); running it again is safe.
 */
const RETRYABLE = new Set(['40P01', '40001'])
const MAX_ATTEMPTS = 3

/** Every repository, bound to one connection or one transaction. */
export interface Repositories {
  readonly tasks: TaskRepository
  readonly a2a: A2ARepository
  readonly a2aV1: A2AV1Repository
  readonly a2aV1Events: A2AV1StreamEventRepository
  readonly a2aV1Push: A2AV1PushRepository
  readonly tokens: TokenRepository
  readonly chains: ChainRepository
  readonly checkpoints: CheckpointRepository
  readonly documents: DocumentRepository
  readonly federation: FederationRepository
  readonly peerNonces: PeerNonceRepository
}

/**
 * The store as services see it: repositories, and transactions that hand out repositories bound to them. No
 * Kysely type crosses this boundary.
 */
export class Store {
  readonly #connection: Connection
  readonly repos: Repositories
  /** SQLite: transactions arriving together share one COMMIT (one fsync); see SqliteGroupCommit. */
  readonly #group: SqliteGroupCommit | null
  readonly #storageObservers: StorageObserver[] = []
  readonly #holdObservers: Array<(seconds: number) => void> = []
  /** The chain heads kept between transactions: SQLite's own (see ChainHeadCache), PostgreSQL's guesses (ChainRepository). */
  readonly #heads = new ChainHeadCache()

  constructor(connection: Connection) {
    this.#connection = connection
    this.repos = Store.#bind(connection.db, connection.engine, null, null)
    this.#group = connection.engine === 'sqlite' ? new SqliteGroupCommit(connection.db, () => this.#heads.clear()) : null
  }

  static #bind(db: Connection['db'], engine: Engine, heads: ChainHeadCache | null, chainState: ChainTransaction | null): Repositories {
    return {
      tasks: new TaskRepository(db, engine),
      a2a: new A2ARepository(db, engine),
      a2aV1: new A2AV1Repository(db, engine),
      a2aV1Events: new A2AV1StreamEventRepository(db, engine),
      a2aV1Push: new A2AV1PushRepository(db, engine),
      tokens: new TokenRepository(db, engine),
      chains: new ChainRepository(db, engine, heads, chainState),
      checkpoints: new CheckpointRepository(db, engine),
      documents: new DocumentRepository(db, engine),
      federation: new FederationRepository(db, engine),
      peerNonces: new PeerNonceRepository(db, engine),
    }
  }

  get engine(): Engine {
    return this.#connection.engine
  }

  /**
   * One transaction per mutation: everything `work` writes commits together or not at all. When PostgreSQL aborts
   * it as a deadlock victim (replicas taking row and chain locks in different orders), it is run again from the
   * start, so `work` must only touch the database through `repos`; one still aborted after the last attempt is a
   * `DatabaseUnavailable` (503). A lost connection surfaces as a `DatabaseUnavailable` too and is not retried here:
   * the caller cannot know whether the commit happened.
   */
  async transaction<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    try {
      return await this.#transaction(work)
    } catch (error) {
      // Disk full, I/O error, read-only storage: a 503 with Retry-After, and readiness and the metrics are told.
      const fault = asStorageFault(error)
      if (fault === undefined) throw error
      for (const observer of this.#storageObservers) observer(fault.reason)
      throw fault
    }
  }

  /** Subscribes to the storage faults transactions meet (told the reason, e.g. `disk full`). Observers must not throw. */
  observeStorage(observer: StorageObserver): void {
    this.#storageObservers.push(observer)
  }

  /**
   * Subscribes to how long each committed transaction held a chain head: from the moment it took the first head's
   * lock (PostgreSQL: the append statement, APPEND_ON_GUESS, or `FOR UPDATE`; SQLite: its first append, the database
   * being its one lock) to its COMMIT's return, in seconds. Observers must not throw.
   */
  observeChainHold(observer: (seconds: number) => void): void {
    this.#holdObservers.push(observer)
  }

  #held(chainState: ChainTransaction): void {
    if (chainState.lockedAt === null) return
    const seconds = (performance.now() - chainState.lockedAt) / 1000
    for (const observer of this.#holdObservers) observer(seconds)
  }

  async #transaction<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const engine = this.#connection.engine
    if (this.#group) {
      const chainState = chainTransaction(false)
      const value = await this.#group.run((db) => Store.#run(work, Store.#bind(db, engine, this.#heads, chainState)))
      this.#held(chainState)
      return value
    }
    for (let attempt = 1; ; attempt++) {
      // After a failed attempt, appends go in round trips of their own: one built on a stale guess and sent with
      // the COMMIT (ChainRepository) costs the whole transaction, and may be what failed it.
      const chainState = chainTransaction(attempt === 1)
      try {
        const value = await this.#connection.db.transaction().execute((trx) => Store.#run(work, Store.#bind(trx, engine, this.#heads, chainState)))
        this.#heads.settle(chainState, true)
        this.#held(chainState)
        return value
      } catch (error) {
        this.#heads.settle(chainState, false)
        const code = (error as { code?: unknown } | null)?.code
        if (typeof code !== 'string' || !RETRYABLE.has(code)) throw error
        // Still aborted after every attempt: nothing was written, and the client may simply retry (503, not 500).
        if (attempt >= MAX_ATTEMPTS) throw new DatabaseUnavailable(`transaction aborted ${attempt} times by lock contention (${code})`, error)
      }
    }
  }

  /** `work`, then the chain appends it deferred to its end (`appendAtCommit`): the head locks are taken last. */
  static async #run<T>(work: (repos: Repositories) => Promise<T>, repos: Repositories): Promise<T> {
    const value = await work(repos)
    await repos.chains.flushDeferred()
    return value
  }

  /**
   * PostgreSQL: moves the deltas of the counts (migration 016) into `row_counts`, so that reading them stays a few
   * rows; returns how many counts changed. Safe on several replicas at once. SQLite updates its counts in place: 0.
   */
  async foldCounts(): Promise<number> {
    if (this.#connection.engine !== 'postgres') return 0
    const result = await this.#connection.db.executeQuery(CompiledQuery.raw(FOLD_COUNTS, []))
    return Number(result.numAffectedRows ?? 0n)
  }

  /** Throws when the database does not answer; the message says why without naming hosts or addresses. */
  async ping(): Promise<void> {
    try {
      await sql`select 1`.execute(this.#connection.db)
    } catch (error) {
      if (error instanceof DatabaseUnavailable) throw new Error(error.reason, { cause: error })
      throw error
    }
  }

  async close(): Promise<void> {
    await this.#connection.close()
  }
}
