import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import type { Database } from '../../../src/store/database.js'
import { SqliteGroupCommit } from '../../../src/store/sqlite-group-commit.js'

type Db = Kysely<Database>

function open(): { db: Db; raw: SQLite.Database } {
  const raw = new SQLite(':memory:')
  raw.exec('create table items (id integer primary key, label text not null unique)')
  // No statement cache here: every statement is prepared anew, so the tests can count and fail COMMITs.
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) })
  return { db, raw }
}

const insert = (db: Db, label: string) => sql`insert into items (label) values (${label})`.execute(db)
const labels = (raw: SQLite.Database): string[] => (raw.prepare('select label from items order by id').all() as { label: string }[]).map((r) => r.label)

let current: Db | undefined
afterEach(async () => {
  await current?.destroy()
  current = undefined
})

describe('SqliteGroupCommit', () => {
  it('commits transactions that arrive together in one group, each with its own result', async () => {
    const { db, raw } = open()
    current = db
    const group = new SqliteGroupCommit(db)
    let commits = 0
    const original = raw.prepare.bind(raw)
    raw.prepare = ((text: string) => {
      if (text === 'commit') commits++
      return original(text)
    }) as typeof raw.prepare
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        group.run(async (trx) => {
          await insert(trx, `item-${i}`)
          return i * 2
        }),
      ),
    )
    expect(results).toEqual(Array.from({ length: 10 }, (_, i) => i * 2))
    expect(labels(raw)).toEqual(Array.from({ length: 10 }, (_, i) => `item-${i}`))
    expect(commits).toBe(1)
    expect(raw.inTransaction).toBe(false)
  })

  it('rolls back only the transaction that failed; the others of its group commit', async () => {
    const { db, raw } = open()
    current = db
    const group = new SqliteGroupCommit(db)
    const outcomes = await Promise.allSettled([
      group.run(async (trx) => insert(trx, 'a')),
      group.run(async (trx) => {
        await insert(trx, 'b')
        throw new Error('refused after writing')
      }),
      group.run(async (trx) => insert(trx, 'a')), // unique violation: a statement error, rolled back alone
      group.run(async (trx) => insert(trx, 'c')),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled'])
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(Error)
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain('refused after writing')
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toContain('UNIQUE')
    expect(labels(raw)).toEqual(['a', 'c'])
    expect(raw.inTransaction).toBe(false)
  })

  it('runs transactions in arrival order, each seeing the writes of those before it', async () => {
    const { db, raw } = open()
    current = db
    const group = new SqliteGroupCommit(db)
    const count = async (trx: Db): Promise<number> => Number((await sql<{ n: number }>`select count(*) as n from items`.execute(trx)).rows[0]?.n)
    const seen = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        group.run(async (trx) => {
          const before = await count(trx)
          await insert(trx, `x${i}`)
          return before
        }),
      ),
    )
    expect(seen).toEqual([0, 1, 2, 3, 4])
    expect(labels(raw)).toHaveLength(5)
  })

  it('does not report success when the shared COMMIT fails, and keeps working afterwards', async () => {
    const { db, raw } = open()
    current = db
    const group = new SqliteGroupCommit(db)
    const original = raw.prepare.bind(raw)
    let failCommit = true
    raw.prepare = ((text: string) => {
      if (text === 'commit' && failCommit) {
        failCommit = false
        throw new Error('disk I/O error')
      }
      return original(text)
    }) as typeof raw.prepare
    const outcomes = await Promise.allSettled([group.run(async (trx) => insert(trx, 'lost-1')), group.run(async (trx) => insert(trx, 'lost-2'))])
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected'])
    expect(labels(raw)).toEqual([])
    expect(raw.inTransaction).toBe(false)
    await group.run(async (trx) => insert(trx, 'kept'))
    expect(labels(raw)).toEqual(['kept'])
  })

  it('reads outside transactions never see a group before it commits', async () => {
    const { db, raw } = open()
    current = db
    const group = new SqliteGroupCommit(db)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const writing = group.run(async (trx) => {
      await insert(trx, 'pending')
      await gate
    })
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    const read = sql<{ label: string }>`select label from items`.execute(db).then((r) => r.rows.map((x) => x.label))
    release()
    await writing
    expect(await read).toEqual(['pending'])
    expect(labels(raw)).toEqual(['pending'])
  })
})
