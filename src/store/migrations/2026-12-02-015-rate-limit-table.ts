import { type Kysely, sql } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * The table the PostgreSQL rate limiters keep their counters in (rate-limiter-flexible's layout), created here once
 * instead of by each limiter at start: replicas starting together each ran the library's `CREATE TABLE IF NOT
 * EXISTS`, and PostgreSQL answers a concurrent one with "type already exists", which stopped a replica's start.
 * `IF NOT EXISTS`: nodes before this migration had the library create it. SQLite's limiters live in memory.
 */
export function rateLimitTable(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine !== 'postgres') return
      await sql`CREATE TABLE IF NOT EXISTS rate_limits (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`.execute(db)
    },
    async down(db: Kysely<unknown>): Promise<void> {
      if (engine !== 'postgres') return
      await sql`DROP TABLE IF EXISTS rate_limits`.execute(db)
    },
  }
}
