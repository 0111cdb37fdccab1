/**
 * ChainRepository on each engine: an append stores the entry at the next position and moves that chain's head to
 * it (on PostgreSQL in one statement), leaves other chains alone, and an append that cannot be stored moves nothing.
 * ChainHeadCache: when a chain's appends may travel with their COMMIT, and what a settled transaction leaves.
 */
import { describe, expect, it } from 'vitest'
import { LOOP_SLICE_MS } from '../../../src/store/loop-slices.js'
import { ChainHeadCache, chainTransaction } from '../../../src/store/chain.repository.js'
import { Store } from '../../../src/store/store.js'
import { type TestEngine, migratedDatabasePerTest, testEngines } from '../../helpers/engines.js'

const freshConnection = migratedDatabasePerTest()
const freshStore = async (engine: TestEngine): Promise<Store> => new Store(await freshConnection(engine))

const entry = (hash: string, ticketId: string | null = null) => ({
  entryHash: hash,
  ticketId,
  trackerName: ticketId === null ? null : 'bernstein',
  line: `{"h":"${hash}"}`,
})

describe.each(testEngines())('ChainRepository on %s', (engine) => {
  it('gives the event loop back every few milliseconds of its reader’s work, within a page too (a long verification does not stop the node)', async () => {
    const store = await freshStore(engine)
    await store.transaction(async (repos) => {
      let head = await repos.chains.lockHead('long', 'genesis')
      for (let i = 1; i <= 50; i++) {
        await repos.chains.append('long', head, entry(`h${i}`))
        head = { headHash: `h${i}`, length: i }
      }
    })
    // Turns of the event loop while the stream is read: a callback that re-arms itself on every turn.
    let turns = 0
    let reading = true
    const turn = (): void => {
      turns++
      if (reading) setImmediate(turn)
    }
    setImmediate(turn)
    const positions: number[] = []
    // One page (the default size), and a reader that works at least 1 ms per line, as a verification does on
    // long lines: 50 ms of work in all.
    for await (const line of store.repos.chains.stream('long')) {
      positions.push(line.position)
      const started = performance.now()
      while (performance.now() - started < 1) {
        // busy: the reader's synchronous work
      }
    }
    reading = false
    expect(positions).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    // A turn at least every LOOP_SLICE_MS (5 ms) of the 50 ms, though all of it was one page.
    expect(turns).toBeGreaterThanOrEqual(50 / LOOP_SLICE_MS - 1)
  })

  it('appends at the next position and moves only that chain’s head', async () => {
    const store = await freshStore(engine)
    await store.transaction(async (repos) => {
      await repos.chains.lockHead('other', 'genesis-other')
    })
    const positions = await store.transaction(async (repos) => {
      const first = await repos.chains.lockHead('main', 'genesis')
      expect(first).toEqual({ headHash: 'genesis', length: 0 })
      const p1 = await repos.chains.append('main', first, entry('h1', 't1'))
      const p2 = await repos.chains.append('main', { headHash: 'h1', length: p1 }, entry('h2'))
      return [p1, p2]
    })
    expect(positions).toEqual([1, 2])
    expect(await store.repos.chains.head('main')).toEqual({ headHash: 'h2', length: 2 })
    expect(await store.repos.chains.head('other')).toEqual({ headHash: 'genesis-other', length: 0 })
    expect(await store.repos.chains.list({ chain: 'main' })).toEqual([
      { position: 1, entryHash: 'h1', ticketId: 't1', trackerName: 'bernstein', line: '{"h":"h1"}' },
      { position: 2, entryHash: 'h2', ticketId: null, trackerName: null, line: '{"h":"h2"}' },
    ])
    expect(await store.repos.chains.list({ chain: 'other' })).toEqual([])
  })

  it('an append from a stale head (its position is taken) fails and moves neither the entries nor the head', async () => {
    const store = await freshStore(engine)
    const stale = await store.transaction(async (repos) => {
      const head = await repos.chains.lockHead('main', 'genesis')
      await repos.chains.append('main', head, entry('h1'))
      return head
    })
    await expect(store.transaction((repos) => repos.chains.append('main', stale, entry('forked')))).rejects.toThrow(
      /UNIQUE constraint failed|duplicate key value violates unique constraint/,
    )
    expect(await store.repos.chains.head('main')).toEqual({ headHash: 'h1', length: 1 })
    expect((await store.repos.chains.list({ chain: 'main' })).map((l) => l.entryHash)).toEqual(['h1'])
  })
})

describe('ChainHeadCache: the guesses of appends that travel with their COMMIT (PostgreSQL)', () => {
  const head = (n: number) => ({ headHash: `h${n}`, length: n })
  const guess = (chain: string, n: number, endTurn = () => {}) => ({ chain, head: head(n), endTurn })

  it('a chain is calm after eight right guesses in a row; a wrong one, or a failed transaction, starts the count again', () => {
    const cache = new ChainHeadCache()
    for (let i = 0; i < 7; i++) cache.guessed('c', true)
    expect(cache.calm('c')).toBe(false)
    cache.guessed('c', true)
    expect(cache.calm('c')).toBe(true)
    cache.guessed('c', false)
    expect(cache.calm('c')).toBe(false)
    for (let i = 0; i < 8; i++) cache.guessed('c', true)
    const failed = chainTransaction(true)
    failed.guesses.push(guess('c', 9))
    cache.set('c', head(9))
    cache.settle(failed, false)
    expect(cache.calm('c')).toBe(false)
    // The head it left as a guess never came to be.
    expect(cache.get('c')).toBeUndefined()
  })

  it('a failed transaction forgets only the guesses that are still its own', () => {
    const cache = new ChainHeadCache()
    const failed = chainTransaction(true)
    failed.guesses.push(guess('c', 4))
    cache.set('c', head(5)) // a later append of this process built on it already
    cache.settle(failed, false)
    expect(cache.get('c')).toEqual(head(5))
  })

  it('the next appender of a chain takes its turn once the transaction whose append travels with its COMMIT has settled', async () => {
    const cache = new ChainHeadCache()
    const endFirst = await cache.turn('c')
    const travelling = chainTransaction(true)
    travelling.guesses.push(guess('c', 1, endFirst))
    let second = false
    // A bound far beyond the test, so that only the settling can end the wait.
    const next = cache.turn('c', 600_000).then((end) => {
      second = true
      return end
    })
    await new Promise((resolve) => setImmediate(resolve))
    expect(second).toBe(false)
    cache.settle(travelling, true)
    ;(await next)()
    expect(second).toBe(true)
    expect(cache.get('c')).toBeUndefined()
    expect(cache.calm('c')).toBe(false)
  })
})
