import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import type pg from 'pg'
import { preparedName } from './statement-shapes.js'
import { DatabaseUnavailable, asUnavailable } from './unavailable.js'
import { type Statement, WriteBehind } from './write-behind.js'

/**
 * What a held-back statement answers at once: an INSERT's one row, which the statement that carries it will write or
 * fail on (BEGIN, COMMIT and the guessed chain append ignore it).
 */
const HELD_BACK = { command: 'INSERT', rowCount: 1, rows: [] }

/**
 * The answer to statements written together on a pipelined client (each with its own Sync, answered in order): the
 * last one's result, or the first error. Statements after a failed one run in the aborted transaction and fail too
 * (or, for COMMIT, roll it back), so the first error is the one that says why.
 */
async function inOneRoundTrip(sent: ReadonlyArray<Promise<PostgresQueryResult<unknown>>>): Promise<PostgresQueryResult<unknown>> {
  const settled = await Promise.allSettled(sent)
  const failed = settled.find((outcome) => outcome.status === 'rejected')
  if (failed !== undefined) throw failed.reason
  return (settled.at(-1) as PromiseFulfilledResult<PostgresQueryResult<unknown>>).value
}

/** Statement-level give-ups after which the session itself is still healthy (it can roll back and be reused). */
const SESSION_SURVIVES = new Set(['57014', '55P03'])

/**
 * A named statement prepared before a schema change (another replica's migration) whose result columns changed: the
 * connection keeps failing it until the statement is prepared again, so the connection is dropped and the request
 * answered as unavailable (503, to be retried) instead of as an internal error.
 */
const isOutdatedPlan = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === '0A000' && /cached plan must not change result type/.test(String((error as Error).message))

interface Guard {
  broken: boolean
  /** The transaction's INSERTs held back to travel with its next statement (see WriteBehind). */
  readonly writes: WriteBehind
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
 *
 * and cheaper per statement (statement-shapes.ts): the fixed-shape statements are prepared once per connection under
 * a name (unless `prepare` is off), and a transaction's BEGIN, deferrable INSERTs and guessed chain appends travel
 * with its next statement (write-behind.ts): on a client made with `pipeline: true` (connect.ts), in one round trip.
 */
export function guardedPool(pool: pg.Pool, options: { readonly prepare?: boolean } = {}): PostgresPool {
  const prepare = options.prepare ?? true
  const guards = new WeakMap<pg.PoolClient, Guard>()

  const guardOf = (client: pg.PoolClient): Guard => {
    const known = guards.get(client)
    if (known) return known
    const send = (statement: Statement): Promise<PostgresQueryResult<unknown>> => {
      const name = prepare ? preparedName(statement.sql) : undefined
      const values = statement.values as unknown[]
      const sent = name === undefined ? client.query(statement.sql, values) : client.query({ name, text: statement.sql, values })
      return sent.then(
        (result) => result as unknown as PostgresQueryResult<unknown>,
        (error: unknown) => {
          if (name !== undefined && isOutdatedPlan(error)) {
            guard.broken = true
            throw new DatabaseUnavailable('a prepared statement was outdated by a schema change; its connection is replaced', error)
          }
          const mapped = asUnavailable(error)
          if (mapped instanceof DatabaseUnavailable && !SESSION_SURVIVES.has(String((error as { code?: unknown }).code))) guard.broken = true
          throw mapped
        },
      )
    }
    const query = (sqlOrCursor: unknown, parameters?: readonly unknown[]): unknown => {
      if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor as never)
      if (guard.broken) return Promise.reject(new DatabaseUnavailable('connection lost', new Error('query on a connection that was lost earlier')))
      const plan = guard.writes.plan({ sql: sqlOrCursor, values: parameters ?? [] })
      if (plan.length === 0) return Promise.resolve(HELD_BACK)
      if (plan.length === 1) return send(plan[0] as Statement)
      if (!client.pipeline) {
        let result = send(plan[0] as Statement)
        for (const statement of plan.slice(1)) result = result.then(() => send(statement))
        return result
      }
      return inOneRoundTrip(plan.map(send))
    }
    const guard: Guard = {
      broken: false,
      writes: new WriteBehind(),
      view: {
        query: query as PostgresPoolClient['query'],
        release: (destroy?: boolean) => {
          guard.writes.reset()
          client.release(destroy === true || guard.broken ? true : undefined)
        },
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
