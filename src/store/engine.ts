import type { CreateTableBuilder } from 'kysely'

/** The two engines. The few places where they differ take this and nothing else does. */
export type Engine = 'sqlite' | 'postgres'

/** An auto-incrementing integer primary key: `integer primary key autoincrement` vs an identity column. */
export function serialPrimaryKey<T extends string>(engine: Engine, builder: CreateTableBuilder<T, never>, column: string): CreateTableBuilder<T, string> {
  return engine === 'sqlite'
    ? builder.addColumn(column, 'integer', (c) => c.primaryKey().autoIncrement())
    : builder.addColumn(column, 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
}
