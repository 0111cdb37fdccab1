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

/** A column holding a field's value as it is, or the column and the conversion between them. */
type ColumnOf<Row, Value> =
  | { [C in keyof Row & string]: [Row[C]] extends [Value] ? ([Value] extends [Row[C]] ? C : never) : never }[keyof Row & string]
  | { [C in keyof Row & string]: readonly [C, Conversion<Value, Row[C]>] }[keyof Row & string]

type Columns<Domain, Row> = { readonly [F in keyof Domain]-?: ColumnOf<Row, Domain[F]> }

type Named<Entry> = Entry extends readonly [infer C, unknown] ? C : Entry

/** Where every column of `Row` is named by some field: the compiler refuses a mapping that leaves one out. */
type EveryColumn<Row, Spec> = [Exclude<keyof Row, Named<Spec[keyof Spec]>>] extends [never] ? unknown : { missing: Exclude<keyof Row, Named<Spec[keyof Spec]>> }

export interface RowMapping<Domain, Row> {
  /** The domain object a row holds (`rowToX`); columns the mapping does not name (joined ones) are not read. */
  readonly toDomain: (row: Row) => Domain
  /** The row that stores a domain object, columns in the mapping's order. */
  readonly toRow: (value: Domain) => Row
}

/**
 * A table's columns and the domain fields they hold, written once for reading and writing, so that the two
 * directions cannot drift apart. Fields come out in the order the mapping lists them.
 *
 * @example const TOKEN = rowMapping<ApiToken, ApiTokenRow>()({ id: 'id', createdAt: ['created_at', integer], … })
 */
export function rowMapping<Domain, Row>() {
  return <const Spec extends Columns<Domain, Row>>(
    spec: Spec & EveryColumn<Row, Spec> & Record<Exclude<keyof Spec, keyof Domain>, never>,
  ): RowMapping<Domain, Row> => {
    const entries = Object.entries(spec as Record<string, string | readonly [string, Conversion<unknown, unknown>]>).map(([field, entry]) =>
      typeof entry === 'string' ? { field, column: entry, conversion: undefined } : { field, column: entry[0], conversion: entry[1] },
    )
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
