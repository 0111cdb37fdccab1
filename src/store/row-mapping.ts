/** How a domain value is stored in its column, both ways (function properties, so that both are checked strictly). */
export interface Conversion<Value, Stored> {
  readonly read: (stored: Stored) => Value
  readonly write: (value: Value) => Stored
}

/** Integers and times: PostgreSQL returns a `bigint` column as a string. */
export const integer: Conversion<number, number> = { read: (stored) => Number(stored), write: (value) => value }

/** A 0/1 column. */
export const flag: Conversion<boolean, number> = { read: (stored) => Number(stored) === 1, write: (value) => (value ? 1 : 0) }

/** JSON text (both engines store JSON values as TEXT). */
export function json<Value>(): Conversion<Value, string> {
  return { read: (stored) => JSON.parse(stored) as Value, write: (value) => JSON.stringify(value) }
}

/** A text column holding one of a union's members (the code that writes it writes nothing else). */
export function member<Value extends string>(): Conversion<Value, string> {
  return { read: (stored) => stored as Value, write: (value) => value }
}

/** `conversion` for a value that may be null (stored as NULL). */
export function nullable<Value, Stored>(conversion: Conversion<Value, Stored>): Conversion<Value | null, Stored | null> {
  return {
    read: (stored) => (stored === null ? null : conversion.read(stored)),
    write: (value) => (value === null ? null : conversion.write(value)),
  }
}

/** The column a field is stored in by the naming rule: `tenantId` → `tenant_id`, `a2aTaskId` → `a2a_task_id`. */
export type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S

export function snakeCase<S extends string>(field: S): SnakeCase<S> {
  return field.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`) as SnakeCase<S>
}

/**
 * Fields stored as they are in the columns the naming rule gives them, for a mapping to spread in where they stand
 * (fields come out in the mapping's order).
 *
 * @example rowMapping<ApiToken, ApiTokenRow>()({ ...sameNames('id', 'secretHash'), role: member<TokenRole>(), … })
 */
export function sameNames<const Fields extends readonly string[]>(...fields: Fields): { readonly [F in Fields[number]]: SnakeCase<F> } {
  return Object.fromEntries(fields.map((field) => [field, snakeCase(field)])) as { readonly [F in Fields[number]]: SnakeCase<F> }
}

/**
 * How a field is stored: in a column named by hand with its value as it is (`'remote_a2a_task_id'`), through a
 * conversion into the column the naming rule gives it (`integer`), or both named (`['created', integer]`).
 */
type ColumnOf<Row, Field extends string, Value> =
  | { [C in keyof Row & string]: [Row[C]] extends [Value] ? ([Value] extends [Row[C]] ? C : never) : never }[keyof Row & string]
  | { [C in keyof Row & string]: readonly [C, Conversion<Value, Row[C]>] }[keyof Row & string]
  | (SnakeCase<Field> extends keyof Row ? Conversion<Value, Row[SnakeCase<Field>]> : never)

type Columns<Domain, Row> = { readonly [F in keyof Domain & string]-?: ColumnOf<Row, F, Domain[F]> }

type Named<Spec> = {
  [F in keyof Spec & string]: Spec[F] extends readonly [infer C, unknown] ? C : Spec[F] extends string ? Spec[F] : SnakeCase<F>
}[keyof Spec & string]

/** Where every column of `Row` is named by some field: the compiler refuses a mapping that leaves one out. */
type EveryColumn<Row, Spec> = [Exclude<keyof Row, Named<Spec>>] extends [never] ? unknown : { missing: Exclude<keyof Row, Named<Spec>> }

export interface RowMapping<Domain, Row> {
  /** The domain object a row holds (`rowToX`); columns the mapping does not name (joined ones) are not read. */
  readonly toDomain: (row: Row) => Domain
  /** The row that stores a domain object, columns in the mapping's order. */
  readonly toRow: (value: Domain) => Row
}

type Entry = string | readonly [string, Conversion<unknown, unknown>] | Conversion<unknown, unknown>

/**
 * A table's columns and the domain fields they hold, written once for reading and writing, so that the two
 * directions cannot drift apart. A column is named by the naming rule ({@link SnakeCase}) unless the mapping names
 * it. Fields come out in the order the mapping lists them.
 *
 * @example const TOKEN = rowMapping<ApiToken, ApiTokenRow>()({ ...sameNames('id', 'secretHash'), createdAt: integer, … })
 */
export function rowMapping<Domain, Row>() {
  return <const Spec extends Columns<Domain, Row>>(
    spec: Spec & EveryColumn<Row, Spec> & Record<Exclude<keyof Spec, keyof Domain>, never>,
  ): RowMapping<Domain, Row> => {
    const entries = Object.entries(spec as Record<string, Entry>).map(([field, entry]) => {
      if (typeof entry === 'string') return { field, column: entry, conversion: undefined }
      if (Array.isArray(entry)) return { field, column: entry[0] as string, conversion: entry[1] as Conversion<unknown, unknown> }
      return { field, column: snakeCase(field), conversion: entry as Conversion<unknown, unknown> }
    })
    return {
      toDomain: (row) => {
        const stored = row as Record<string, unknown>
        const value: Record<string, unknown> = {}
        for (const { field, column, conversion } of entries) value[field] = conversion ? conversion.read(stored[column]) : stored[column]
        return value as Domain
      },
      toRow: (value) => {
        const fields = value as Record<string, unknown>
        const row: Record<string, unknown> = {}
        for (const { field, column, conversion } of entries) row[column] = conversion ? conversion.write(fields[field]) : fields[field]
        return row as Row
      },
    }
  }
}
