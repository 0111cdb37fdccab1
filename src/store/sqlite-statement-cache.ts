import type SQLite from 'better-sqlite3'
import type { SqliteDatabase } from 'kysely'

/** Distinct SQL texts kept prepared; Kysely's texts vary only with the shape of a query, not its values. */
const DEFAULT_CAPACITY = 512

/**
 * The database as Kysely's SQLite driver sees it, with prepared statements reused: the driver prepares every query
 * it runs, and compiling the same SQL text again is most of the cost of a small query. Values are always bound as
 * parameters, so a cached statement never carries data from one call to the next. A statement still being iterated
 * (a streamed select) is busy and cannot run twice at once; a fresh one is prepared for that call instead.
 */
export function withStatementCache(database: SQLite.Database, capacity = DEFAULT_CAPACITY): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>()
  return {
    close: () => database.close(),
    prepare(sql: string) {
      const cached = cache.get(sql)
      if (cached !== undefined && !cached.busy) return cached
      const statement = database.prepare(sql)
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
