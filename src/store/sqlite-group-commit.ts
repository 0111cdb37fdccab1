import { type Kysely, sql } from 'kysely'
import type { Database } from './database.js'

/** Transactions committed together at most; bounds how long one waits for the others of its group. */
const MAX_GROUP = 64

interface Pending {
  readonly work: (db: Kysely<Database>) => Promise<unknown>
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
}

/**
 * Group commit for SQLite. With `synchronous = FULL` every COMMIT waits for an fsync of the WAL, and SQLite has
 * one writer at a time anyway, so transactions that arrive together (in one turn of the event loop) run one after
 * the other inside a single database transaction, each in its own savepoint, and share one COMMIT.
 *
 * Each transaction keeps its own outcome: one that throws is rolled back to its savepoint alone and rejects with its
 * error; the others are unaffected. Nothing is reported as done before the shared COMMIT has returned, so an answer
 * sent after `run` resolves is as durable as before; if the COMMIT (or the database itself, which can abandon the
 * whole transaction on I/O errors) fails, every transaction of the group rejects. Transactions run in arrival
 * order and see each other's writes exactly as consecutive transactions would. Reads outside transactions wait
 * for the group like they waited for a single transaction (one connection).
 */
export class SqliteGroupCommit {
  readonly #db: Kysely<Database>
  /** Told whenever anything is rolled back, or another connection committed: state kept in memory is stale. */
  readonly #onStale: () => void
  /** PRAGMA data_version at the end of our last group; it changes when another connection commits. */
  #dataVersion: number | null = null
  #queue: Pending[] = []
  #scheduled = false

  constructor(db: Kysely<Database>, onStale: () => void = () => {}) {
    this.#db = db
    this.#onStale = onStale
  }

  run<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
      this.#schedule()
    })
  }

  /** After the current turn of the event loop, so that requests parsed in the same turn join one group. */
  #schedule(): void {
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => {
      void this.#drain()
    })
  }

  async #drain(): Promise<void> {
    let drained = 0
    try {
      while (this.#queue.length > 0) {
        const group = this.#queue.splice(0, MAX_GROUP)
        // One group per turn of the event loop: better-sqlite3 answers synchronously, so without this the whole
        // backlog would run in one turn, and the loop would read no request and accept no connection meanwhile
        // (Node accepts about one connection per turn: a long turn fills the listen backlog, and clients' SYNs are
        // then dropped and retried seconds later).
        if (drained++ > 0) await new Promise<void>((resolve) => setImmediate(resolve))
        try {
          await this.#db.connection().execute((connection) => this.#commitGroup(connection, group))
        } catch (error) {
          // The connection could not be had or BEGIN failed: nothing of this group ran.
          for (const pending of group) pending.reject(error)
        }
      }
    } finally {
      this.#scheduled = false
      if (this.#queue.length > 0) this.#schedule()
    }
  }

  async #commitGroup(db: Kysely<Database>, group: readonly Pending[]): Promise<void> {
    await sql`begin`.execute(db)
    try {
      await this.#checkDataVersion(db)
      await this.#runGroup(db, group)
    } catch (error) {
      // A savepoint statement itself failed: undo everything and fail the whole group.
      this.#onStale()
      await sql`rollback`.execute(db).catch(() => {})
      for (const pending of group) pending.reject(error)
    }
  }

  /** Another connection (a CLI command on the same file) committed since our last group: what we keep is stale. */
  async #checkDataVersion(db: Kysely<Database>): Promise<void> {
    const { rows } = await sql<{ data_version: number }>`pragma data_version`.execute(db)
    const version = Number(rows[0]?.data_version)
    if (version !== this.#dataVersion) this.#onStale()
    this.#dataVersion = version
  }

  async #runGroup(db: Kysely<Database>, group: readonly Pending[]): Promise<void> {
    const done: { pending: Pending; value: unknown }[] = []
    let abandoned: unknown
    let next = 0
    for (; next < group.length; next++) {
      const pending = group[next] as Pending
      await sql`savepoint group_commit_item`.execute(db)
      try {
        const value = await pending.work(db)
        await sql`release group_commit_item`.execute(db)
        done.push({ pending, value })
      } catch (error) {
        pending.reject(error)
        this.#onStale()
        try {
          await sql`rollback to group_commit_item`.execute(db)
          await sql`release group_commit_item`.execute(db)
        } catch {
          // SQLite already rolled the whole transaction back (I/O error, full disk): the group's work is gone.
          abandoned = error
          next++
          break
        }
      }
    }
    if (abandoned === undefined) {
      try {
        await sql`commit`.execute(db)
      } catch (error) {
        abandoned = error
      }
    }
    if (abandoned !== undefined) {
      this.#onStale()
      await sql`rollback`.execute(db).catch(() => {})
      for (const { pending } of done) pending.reject(abandoned)
      // Those not started yet run in a later group, unaffected.
      this.#queue.unshift(...group.slice(next))
      return
    }
    for (const { pending, value } of done) pending.resolve(value)
  }
}
