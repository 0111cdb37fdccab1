/**
 * Store.transaction on PostgreSQL: a transaction aborted as a deadlock victim is run again, so two writers that
 * take the same row locks in opposite orders both commit instead of one of them answering 500.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { connect, migrateToLatest } from '../../src/store/connect.js'
import { Store } from '../../src/store/store.js'
import { DatabaseUnavailable } from '../../src/store/unavailable.js'
import { type TestDatabase, createTestDatabase } from '../helpers/engines.js'
import { PG_URL, announceSkip, pgSuiteName } from './support.js'

announceSkip('test/pg/store-retry.test.ts')

/** Resolves once `count` parties have arrived. */
function barrier(count: number): () => Promise<void> {
  let arrived = 0
  let release!: () => void
  const all = new Promise<void>((r) => (release = r))
  return () => {
    if (++arrived === count) release()
    return all
  }
}

describe.skipIf(!PG_URL)(pgSuiteName('store transactions on PostgreSQL'), () => {
  let database: TestDatabase | undefined
  let store: Store | undefined
  afterEach(async () => {
    await store?.close()
    await database?.drop()
    store = database = undefined
  })

  it('two transactions locking two chain heads in opposite orders deadlock; the victim is retried and both commit', async () => {
    database = await createTestDatabase('postgres')
    const connection = connect(database.options)
    const migrated = await migrateToLatest(connection)
    expect(migrated.error).toBeUndefined()
    store = new Store(connection)
    const s = store
    await s.transaction(async (repos) => {
      await repos.chains.lockHead('left', 'genesis')
      await repos.chains.lockHead('right', 'genesis')
    })

    const bothHoldOne = barrier(2)
    const attempts = { ab: 0, ba: 0 }
    const crossing = (first: string, second: string, key: keyof typeof attempts) =>
      s.transaction(async (repos) => {
        attempts[key]++
        const head = await repos.chains.lockHead(first, 'genesis')
        // Only the first attempt waits for the other side: that is what makes the deadlock certain.
        if (attempts[key] === 1) await bothHoldOne()
        const other = await repos.chains.lockHead(second, 'genesis')
        await repos.chains.append(first, head, { entryHash: `${key}-${attempts[key]}-${first}`, ticketId: null, trackerName: null, line: '{}' })
        await repos.chains.append(second, other, { entryHash: `${key}-${attempts[key]}-${second}`, ticketId: null, trackerName: null, line: '{}' })
        return key
      })

    const results = await Promise.allSettled([crossing('left', 'right', 'ab'), crossing('right', 'left', 'ba')])
    expect(results).toEqual([
      { status: 'fulfilled', value: 'ab' },
      { status: 'fulfilled', value: 'ba' },
    ])
    // Exactly one side was chosen as the victim and ran a second time.
    expect(attempts.ab + attempts.ba).toBe(3)
    // Each chain got one entry per committed transaction (the winner's first attempt, the victim's second) and
    // nothing from the aborted attempt.
    const victim = attempts.ab === 2 ? 'ab' : 'ba'
    const winner = victim === 'ab' ? 'ba' : 'ab'
    for (const chain of ['left', 'right']) {
      const lines = await s.repos.chains.list({ chain })
      expect(lines.map((l) => l.position)).toEqual([1, 2])
      expect(lines.map((l) => l.entryHash).sort()).toEqual([`${winner}-1-${chain}`, `${victim}-2-${chain}`].sort())
    }
  }, 60_000)

  it('a transaction aborted on every attempt ends as a 503 DatabaseUnavailable after the last one, with nothing written', async () => {
    database = await createTestDatabase('postgres')
    const connection = connect(database.options)
    expect((await migrateToLatest(connection)).error).toBeUndefined()
    store = new Store(connection)
    let attempts = 0
    const outcome = store.transaction(async (repos) => {
      attempts++
      const head = await repos.chains.lockHead('contended', 'genesis')
      await repos.chains.append('contended', head, { entryHash: `attempt-${attempts}`, ticketId: null, trackerName: null, line: '{}' })
      // What PostgreSQL raises when it aborts a transaction to resolve a serialization conflict.
      throw Object.assign(new Error('could not serialize access due to concurrent update'), { code: '40001' })
    })
    const error = await outcome.then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(DatabaseUnavailable)
    expect(error).toMatchObject({ code: 'unavailable', message: 'Service Unavailable', reason: 'transaction aborted 3 times by lock contention (40001)' })
    expect(attempts).toBe(3)
    expect(await store.repos.chains.list({ chain: 'contended' })).toEqual([])
  }, 60_000)
})
