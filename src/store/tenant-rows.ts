import type { Kysely, Selectable } from 'kysely'
import type { Database } from './database.js'
import type { Engine } from './engine.js'
import { Repository } from './repository.js'
import type { RowMapping } from './row-mapping.js'
import { ReusableInsert, ReusableQuery } from './reusable-query.js'

/** The tables whose rows are found by tenant and id on every request: tasks and A2A tasks. */
type TenantTable = 'tasks' | 'a2a_tasks'

/**
 * A tenant-scoped table's two hot statements, compiled once (see {@link ReusableQuery}): insert a domain object,
 * and read one back by tenant and id.
 */
export class TenantRows<Table extends TenantTable, Domain> {
  readonly #mapping: RowMapping<Domain, Selectable<Database[Table]>>
  readonly #insert: ReusableInsert<Selectable<Database[Table]>>
  readonly #get: ReusableQuery<[tenantId: string, id: string], Selectable<Database[Table]>>

  constructor(table: Table, mapping: RowMapping<Domain, Selectable<Database[Table]>>) {
    this.#mapping = mapping
    // A new row's INSERT needs nothing back but success: PostgreSQL sends it with the transaction's next statement.
    this.#insert = new ReusableInsert(table, 'deferrable')
    // Kysely types a query over either table as one over both (it merges their columns); each row is of `table`.
    const from: TenantTable = table
    this.#get = new ReusableQuery(2, (db, tenantId: string, id: string) =>
      db.selectFrom(from).selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
    ) as ReusableQuery<[tenantId: string, id: string], Selectable<Database[Table]>>
  }

  async insert(db: Kysely<Database>, engine: Engine, value: Domain): Promise<void> {
    await this.#insert.execute(db, engine, this.#mapping.toRow(value))
  }

  async get(db: Kysely<Database>, engine: Engine, tenantId: string, id: string): Promise<Domain | undefined> {
    const row = await this.#get.first(db, engine, tenantId, id)
    return row && this.#mapping.toDomain(row)
  }
}

/**
 * A repository whose rows are found by tenant and id: {@link insert} and {@link get} over its table's
 * {@link TenantRows} (module-level, so compiled once: repositories are made for every transaction).
 */
export abstract class TenantRepository<Table extends TenantTable, Domain> extends Repository {
  protected abstract readonly rows: TenantRows<Table, Domain>

  async insert(value: Domain): Promise<void> {
    await this.rows.insert(this.db, this.engine, value)
  }

  async get(tenantId: string, id: string): Promise<Domain | undefined> {
    return this.rows.get(this.db, this.engine, tenantId, id)
  }
}
