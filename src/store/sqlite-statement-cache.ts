import type SQLite from 'better-sqlite3'
import type { SqliteDatabase, SqliteStatement } from 'kysely'

/** Distinct SQL texts kept prepared; Kysely's texts vary only with the shape of a query, not its values. */
const DEFAULT_CAPACITY = 512

/**
 * What PostgreSQL answers a text holding U+0000 (SQLSTATE 22021), which the HTTP layer turns into the contract's 422
 * for a NUL (http/problem.ts). SQLite would store the character, or look a key up with it: on both engines one input
 * gets one answer, whichever schema of the contract forgot its NUL pattern.
 */
export class NulInText extends Error {
  readonly code = '22021'

  constructor() {
    super('invalid byte sequence for encoding "UTF8": 0x00')
    this.name = 'NulInText'
  }
}

function refuseNul(parameters: readonly unknown[]): void {
  for (const value of parameters) if (typeof value === 'string' && value.includes('\u0000')) throw new NulInText()
}

/** A prepared statement as Kysely's SQLite driver uses it, refusing a NUL in a bound text as PostgreSQL does. */
class Statement implements SqliteStatement {
  readonly prepared: SQLite.Statement
  readonly reader: boolean

  constructor(prepared: SQLite.Statement) {
    this.prepared = prepared
    this.reader = prepared.reader
  }

  all(parameters: readonly unknown[]): unknown[] {
    refuseNul(parameters)
    return this.prepared.all(parameters)
  }

  run(parameters: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint } {
    refuseNul(parameters)
    return this.prepared.run(parameters)
  }

  iterate(parameters: readonly unknown[]): IterableIterator<unknown> {
    refuseNul(parameters)
    return this.prepared.iterate(parameters)
  }
}

/**
 * The database as Kysely's SQLite driver sees it, with prepared statements reused: the driver prepares every query
 * it runs, and compiling the same SQL text again is most of the cost of a small query. Values are always bound as
 * parameters, so a cached statement never carries data from one call to the next. A statement still being iterated
 * (a streamed select) is busy and cannot run twice at once; a fresh one is prepared for that call instead.
 */
export function withStatementCache(database: SQLite.Database, capacity = DEFAULT_CAPACITY): SqliteDatabase {
  const cache = new Map<string, Statement>()
  return {
    close: () => database.close(),
    prepare(sql: string) {
      const cached = cache.get(sql)
      if (cached !== undefined && !cached.prepared.busy) return cached
      const statement = new Statement(database.prepare(sql))
      if (cached === undefined) {
        if (cache.size >= capacity) {
          const oldest = cache.keys().next()
          if (!oldest.done) cache.delete(oldest.value)
        }
        cache.set(sql, statement)
      }
      return statement
    },
  }
}
