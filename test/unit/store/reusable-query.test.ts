import { describe, expect, it } from 'vitest'
import { ReusableInsert, ReusableQuery } from '../../../src/store/reusable-query.js'
import { migratedDatabasePerTest, testEngines } from '../../helpers/engines.js'

const fresh = migratedDatabasePerTest()

describe.each(testEngines())('ReusableQuery on %s', (engine) => {
  it('binds new values into the shape compiled on the first call, constants included', async () => {
    const { db } = await fresh(engine)
    const insert = new ReusableInsert<{ chain: string; head_hash: string; length: number }>('chain_heads')
    for (const [chain, length] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      await insert.execute(db, engine, { chain, head_hash: `h-${chain}`, length })
    // 'c' is a constant of the query; the argument decides between the others.
    const select = new ReusableQuery(1, (k, chain: string) =>
      k
        .selectFrom('chain_heads')
        .select(['chain', 'length'])
        .where((eb) => eb.or([eb('chain', '=', chain), eb('chain', '=', 'c')]))
        .orderBy('chain'),
    )
    expect((await select.execute(db, engine, 'a')).rows.map((r) => [r.chain, Number(r.length)])).toEqual([
      ['a', 1],
      ['c', 3],
    ])
    expect((await select.execute(db, engine, 'b')).rows.map((r) => [r.chain, Number(r.length)])).toEqual([
      ['b', 2],
      ['c', 3],
    ])
    expect(await select.first(db, engine, 'zzz')).toEqual(expect.objectContaining({ chain: 'c' }))
    // A value that looks like SQL is bound, never spliced into the text.
    expect((await select.execute(db, engine, "a' or '1'='1")).rows.map((r) => r.chain)).toEqual(['c'])
  })

  it('refuses a builder that transforms, drops or repeats an argument, before running anything', async () => {
    const { db } = await fresh(engine)
    const suffixed = new ReusableQuery(1, (k, chain: string) => k.selectFrom('chain_heads').selectAll().where('chain', 'like', `${chain}%`))
    await expect(suffixed.execute(db, engine, 'a')).rejects.toThrow(/bind each argument once, unchanged/)
    const uppercased = new ReusableQuery(1, (k, chain: string) => k.selectFrom('chain_heads').selectAll().where('chain', '=', chain.toUpperCase()))
    await expect(uppercased.execute(db, engine, 'a')).rejects.toThrow(/bind every argument as a parameter/)
    const dropped = new ReusableQuery(2, (k, chain: string, _unused: string) => k.selectFrom('chain_heads').selectAll().where('chain', '=', chain))
    await expect(dropped.execute(db, engine, 'a', 'b')).rejects.toThrow(/bind every argument as a parameter/)
    const repeated = new ReusableQuery(1, (k, chain: string) =>
      k.selectFrom('chain_heads').selectAll().where('chain', '=', chain).where('head_hash', '=', chain),
    )
    await expect(repeated.execute(db, engine, 'a')).rejects.toThrow(/bind each argument once/)
  })

  it('an insert with another set of columns gets its own shape', async () => {
    const { db } = await fresh(engine)
    const insert = new ReusableInsert<Record<string, unknown>>('chain_heads')
    await insert.execute(db, engine, { chain: 'x', head_hash: 'h1', length: 1 })
    await insert.execute(db, engine, { length: 2, chain: 'y', head_hash: 'h2' })
    const rows = await db.selectFrom('chain_heads').selectAll().orderBy('chain').execute()
    expect(rows.map((r) => [r.chain, r.head_hash, Number(r.length)])).toEqual([
      ['x', 'h1', 1],
      ['y', 'h2', 2],
    ])
  })
})
