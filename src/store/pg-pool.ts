import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import type pg from 'pg'
import { DatabaseUnavailable, asUnavailable } from './unavailable.js'

/** Statement-level give-ups after which the session itself is still healthy (it can roll back and be reused). */
const SESSION_SURVIVES = new Set(['57014', '55P03'])

interface Guard {
  broken: boolean
  readonly view: PostgresPoolClient
}

/**
 * node-postgres's pool as Kysely sees it, made safe for outages:
 *
 * - every connection-loss error (refused, reset, terminated, connect/query timeout, admin shutdown) becomes a
 *   `DatabaseUnavailable`, whichever query or pool checkout hit it;
 * - a checked-out client whose server goes away between two queries of a transaction emits `error` while
 *   pg-pool has no listener on it (the process would crash); the guard listens and marks it broken;
 * - so does a new client that loses its server before the caller has it (guarded from the pool's `connect` event);
 * - a broken client fails its remaining queries at once (the `rollback` after a lost connection would otherwise
 *   wait for the query timeout) and is destroyed on release instead of going back to the pool.
 */
export function guardedPool(pool: pg.Pool): PostgresPool {
  const guards = new WeakMap<pg.PoolClient, Guard>()

  const guardOf = (client: pg.PoolClient): Guard => {
    const known = guards.get(client)
    if (known) return known
    const query = (sqlOrCursor: unknown, parameters?: readonly unknown[]): unknown => {
      if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor as never)
      if (guard.broken) return Promise.reject(new DatabaseUnavailable('connection lost', new Error('query on a connection that was lost earlier')))
      return client.query(sqlOrCursor, parameters as unknown[]).then(
        (result) => result as unknown as PostgresQueryResult<unknown>,
        (error: unknown) => {
          const mapped = asUnavailable(error)
          if (mapped instanceof DatabaseUnavailable && !SESSION_SURVIVES.has(String((error as { code?: unknown }).code))) guard.broken = true
          throw mapped
        },
      )
    }
    const guard: Guard = {
      broken: false,
      view: {
        query: query as PostgresPoolClient['query'],
        release: (destroy?: boolean) => client.release(destroy === true || guard.broken ? true : undefined),
      },
    }
    client.on('error', () => {
      guard.broken = true
    })
    guards.set(client, guard)
    return guard
  }

  // Guarded as soon as the pool has connected it: pg-pool takes its own error listener off a new client before
  // handing it over, and `pool.connect()` resolves a turn later, so an error arriving in between (a backend
  // terminated right after it started, read in the same chunk as its ReadyForQuery) had no listener and crashed the
  // process. Such a client is handed out broken: its first query fails as unavailable and release destroys it.
  pool.on('connect', (client) => {
    guardOf(client)
  })

  return {
    async connect() {
      let client: pg.PoolClient
      try {
        client = await pool.connect()
      } catch (error) {
        throw asUnavailable(error)
      }
      // A client never goes back to the pool broken (release destroys it), so an idle one handed out is healthy.
      return guardOf(client).view
    },
    end: () => pool.end(),
  }
}
