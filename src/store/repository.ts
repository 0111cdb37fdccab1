import type { Kysely } from 'kysely'
import type { Database } from './database.js'
import type { Engine } from './engine.js'

/**
 * What every repository is bound to: one connection or one transaction (see `Store.transaction`), and which engine
 * it speaks to, for the few queries that differ between them.
 */
export abstract class Repository {
  protected readonly db: Kysely<Database>
  protected readonly engine: Engine

  constructor(db: Kysely<Database>, engine: Engine) {
    this.db = db
    this.engine = engine
  }
}
