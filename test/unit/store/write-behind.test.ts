/**
 * What a PostgreSQL connection sends for each statement a transaction asks for (WriteBehind, the plan pg-pool.ts
 * writes in one round trip): BEGIN waits for the first statement, new rows' INSERTs ride as CTEs on the next host
 * statement, guessed chain appends are held until the next statement (at best the COMMIT), and whatever is held goes
 * before any other statement, in order. The same rules on a real server: test/pg/write-statements.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { fixedShape } from '../../../src/store/statement-shapes.js'
import { type Statement, WriteBehind } from '../../../src/store/write-behind.js'

const INSERT_TASK = fixedShape('insert into "wb_tasks" ("id") values ($1)', 'deferrable')
const INSERT_A2A = fixedShape('insert into "wb_a2a" ("id", "task") values ($1, $2)', 'deferrable')
const APPEND = fixedShape('select wb_append($1, $2)', 'host')
const APPEND_AT_COMMIT = fixedShape('select wb_append_or_fail($1, $2)', 'before-commit')
const READ = 'select * from "wb_tasks" where "id" = $1'

const at = (sql: string, ...values: unknown[]): Statement => ({ sql, values })
const texts = (plan: readonly Statement[]) => plan.map((statement) => statement.sql)

describe('WriteBehind', () => {
  it('sends BEGIN with the first statement, and nothing at all for a transaction that sends nothing', () => {
    const writes = new WriteBehind()
    expect(writes.plan(at('begin'))).toEqual([])
    expect(writes.plan(at('commit'))).toEqual([])
    expect(writes.plan(at('start transaction isolation level serializable'))).toEqual([])
    expect(writes.plan(at('rollback'))).toEqual([])
    expect(writes.plan(at('begin'))).toEqual([])
    expect(texts(writes.plan(at(READ, 't1')))).toEqual(['begin', READ])
    expect(texts(writes.plan(at('commit')))).toEqual(['commit'])
  })

  it('a send: both appends, each carrying the row before it, and the COMMIT, in one plan with every value in order', () => {
    const writes = new WriteBehind()
    for (const statement of [
      at('begin'),
      at(INSERT_TASK, 't1'),
      at(APPEND_AT_COMMIT, 'spine', 'h1'),
      at(INSERT_A2A, 'a1', 't1'),
      at(APPEND_AT_COMMIT, 'audit', 'h2'),
    ]) {
      expect(writes.plan(statement)).toEqual([])
    }
    const plan = writes.plan(at('commit'))
    expect(plan).toEqual([
      at('begin'),
      at(`with held_1 as (${INSERT_TASK}) select wb_append_or_fail($2, $3)`, 't1', 'spine', 'h1'),
      at(`with held_1 as (insert into "wb_a2a" ("id", "task") values ($1, $2)) select wb_append_or_fail($3, $4)`, 'a1', 't1', 'audit', 'h2'),
      at('commit'),
    ])
  })

  it('a statement that is not a host sends what is held first (a read sees the rows); a host carries the INSERTs after the last append', () => {
    const writes = new WriteBehind()
    writes.plan(at('begin'))
    writes.plan(at(APPEND_AT_COMMIT, 'spine', 'h1'))
    writes.plan(at(INSERT_TASK, 't1'))
    writes.plan(at(INSERT_A2A, 'a1', 't1'))
    expect(writes.plan(at(READ, 't1'))).toEqual([
      at('begin'),
      at(APPEND_AT_COMMIT, 'spine', 'h1'),
      at(`with held_1 as (${INSERT_TASK}) insert into "wb_a2a" ("id", "task") values ($2, $3)`, 't1', 'a1', 't1'),
      at(READ, 't1'),
    ])
    writes.plan(at(INSERT_TASK, 't2'))
    expect(writes.plan(at(APPEND, 'audit', 'h2'))).toEqual([at(`with held_1 as (${INSERT_TASK}) select wb_append($2, $3)`, 't2', 'audit', 'h2')])
    expect(writes.plan(at('commit'))).toEqual([at('commit')])
  })

  it('ROLLBACK drops what is held, and is sent only when something of the transaction was', () => {
    const writes = new WriteBehind()
    writes.plan(at('begin'))
    writes.plan(at(INSERT_TASK, 't1'))
    writes.plan(at(APPEND_AT_COMMIT, 'spine', 'h1'))
    expect(writes.plan(at('rollback'))).toEqual([])
    writes.plan(at('begin'))
    writes.plan(at(READ, 't1'))
    writes.plan(at(INSERT_TASK, 't2'))
    expect(writes.plan(at('rollback'))).toEqual([at('rollback')])
    // Nothing of either transaction is left to travel with a later one.
    writes.plan(at('begin'))
    expect(writes.plan(at('commit'))).toEqual([])
  })

  it('outside a transaction every statement goes at once, as asked', () => {
    const writes = new WriteBehind()
    expect(writes.plan(at(INSERT_TASK, 't1'))).toEqual([at(INSERT_TASK, 't1')])
    expect(writes.plan(at(APPEND_AT_COMMIT, 'spine', 'h1'))).toEqual([at(APPEND_AT_COMMIT, 'spine', 'h1')])
    writes.plan(at('begin'))
    writes.plan(at(INSERT_TASK, 't2'))
    writes.reset() // the connection went back to its pool
    expect(writes.plan(at(INSERT_TASK, 't3'))).toEqual([at(INSERT_TASK, 't3')])
  })
})
