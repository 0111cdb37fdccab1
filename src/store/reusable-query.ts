import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely'
import type { Database } from './database.js'
import type { Engine } from './engine.js'
import { fixedShape, type ShapeRole } from './statement-shapes.js'

/** A value no caller passes: it marks where argument `i` lands among the compiled parameters. */
const MARKER_PREFIX = '\u0000bernstein-a2a:argument:'
const marker = (i: number): string => `${MARKER_PREFIX}${i}\u0000`

/** Where each parameter of the compiled SQL comes from: an argument's index, or a constant of the query. */
type Slot = { readonly argument: number } | { readonly constant: unknown }

interface Shape {
  readonly sql: string
  readonly slots: readonly Slot[]
}

/**
 * A hot query whose shape never changes, built and compiled by Kysely once per engine instead of on every call;
 * later calls only bind their values. Building and compiling is most of Kysely's cost for a one-row statement
 * (several µs each, a dozen statements per accepted task), and the SQL text is the same every time anyway.
 *
 * The builder must pass every argument to Kysely as a value (never transform it, never use it to choose the
 * shape); the first compilation checks that each argument is bound exactly once as a parameter, and refuses the
 * query otherwise.
 */
export class ReusableQuery<Args extends readonly unknown[], Row> {
  readonly #build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>
  readonly #arity: number
  readonly #shapes = new Map<Engine, Shape>()
  readonly #role: ShapeRole | undefined

  /** `role`: what PostgreSQL's connection may do with the statement besides preparing it (see statement-shapes.ts). */
  constructor(arity: Args['length'], build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>, role?: ShapeRole) {
    this.#arity = arity
    this.#build = build
    this.#role = role
  }

  async execute(db: Kysely<Database>, engine: Engine, ...args: Args): Promise<QueryResult<Row>> {
    if (args.length !== this.#arity) throw new TypeError(`expected ${this.#arity} arguments, got ${args.length}`)
    const shape = this.#shapes.get(engine) ?? this.#compile(db, engine)
    const parameters = shape.slots.map((slot) => ('argument' in slot ? args[slot.argument] : slot.constant))
    return db.executeQuery<Row>(CompiledQuery.raw(shape.sql, parameters) as CompiledQuery<Row>)
  }

  /** The first row, if any. */
  async first(db: Kysely<Database>, engine: Engine, ...args: Args): Promise<Row | undefined> {
    return (await this.execute(db, engine, ...args)).rows[0]
  }

  #compile(db: Kysely<Database>, engine: Engine): Shape {
    const markers = Array.from({ length: this.#arity }, (_, i) => marker(i))
    const compiled = this.#build(db, ...(markers as unknown as Args)).compile()
    const seen = new Set<number>()
    const slots = compiled.parameters.map((value): Slot => {
      if (typeof value === 'string' && value.includes(MARKER_PREFIX)) {
        const index = markers.indexOf(value)
        if (index < 0 || seen.has(index)) throw new TypeError('a reusable query must bind each argument once, unchanged')
        seen.add(index)
        return { argument: index }
      }
      return { constant: value }
    })
    if (seen.size !== this.#arity || compiled.sql.includes(MARKER_PREFIX)) {
      throw new TypeError('a reusable query must bind every argument as a parameter')
    }
    const shape = { sql: engine === 'postgres' ? fixedShape(compiled.sql, this.#role) : compiled.sql, slots }
    this.#shapes.set(engine, shape)
    return shape
  }
}

/**
 * A one-row INSERT into `table`, compiled once per set of columns (the rows a repository writes always have the
 * same keys, so in practice once per engine).
 */
export class ReusableInsert<Row extends Readonly<Record<string, unknown>>> {
  readonly #table: keyof Database & string
  readonly #role: ShapeRole | undefined
  readonly #byColumns = new Map<string, { readonly columns: readonly string[]; readonly query: ReusableQuery<unknown[], never> }>()

  constructor(table: keyof Database & string, role?: ShapeRole) {
    this.#table = table
    this.#role = role
  }

  async execute(db: Kysely<Database>, engine: Engine, row: Row): Promise<QueryResult<never>> {
    const columns = Object.keys(row)
    const key = columns.join('\u0000')
    let entry = this.#byColumns.get(key)
    if (entry === undefined) {
      const table = this.#table
      const query = new ReusableQuery<unknown[], never>(
        columns.length,
        (builder, ...values) => builder.insertInto(table).values(Object.fromEntries(columns.map((column, i) => [column, values[i]])) as never),
        this.#role,
      )
      entry = { columns, query }
      this.#byColumns.set(key, entry)
    }
    return entry.query.execute(db, engine, ...entry.columns.map((column) => row[column]))
  }
}
