/**
 * Issue 27, what a write sends to PostgreSQL, recorded at the driver (every text a pooled client is asked to run),
 * on a real server and schema:
 *
 * - a transaction's new-row INSERTs travel with its next chain statement, so a send's transaction is four statements
 *   (BEGIN, the task with the spine append, the A2A row with the audit append, COMMIT), in three round trips, and in
 *   one once this process's guesses of the chains' heads have been right eight times in a row (the appends at
 *   COMMIT then go with it, and a stale guess fails the attempt, which runs again); a read after such an INSERT
 *   sees the row, a ROLLBACK drops it unsent, and one that fails fails the statement that carried it;
 * - the fixed-shape statements are prepared under a name once per connection (unless turned off), and a named
 *   statement a schema change has outdated costs a 503 and a new connection, not a broken node;
 * - a chain append built on the head another transaction of this process has made but not committed waits for that
 *   commit and is stored in the same statement; built on a stale head (another replica), it is built again on the
 *   head the statement found;
 * - counting tasks (migration 016) locks nothing two writers share, and the counts stay exact across folds.
 */
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import type { A2ATaskRecord } from '../../src/a2a/a2a-task.js'
import type { ChainHead } from '../../src/store/chain.repository.js'
import { type Connection, connect, migrateToLatest } from '../../src/store/connect.js'
import type { Database } from '../../src/store/database.js'
import { guardedPool } from '../../src/store/pg-pool.js'
import { Store } from '../../src/store/store.js'
import { DatabaseUnavailable } from '../../src/store/unavailable.js'
import type { Task } from '../../src/tasks/task.js'
import { taskFixture } from '../helpers/task-fixture.js'
import { PG_URL, type Schema, announceSkip, createSchema, pgSuiteName } from './support.js'

announceSkip('test/pg/write-statements.test.ts')

const opened: Array<{ close(): Promise<unknown> }> = []
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close()
})

/** A migrated schema of its own. */
async function migrated(): Promise<Schema> {
  const schema = await createSchema('stmts')
  opened.push({ close: () => schema.drop() })
  const migrating = connect({ url: PG_URL ?? '', dataDir: '/nonexistent', schema: schema.name, poolSize: 1 })
  const result = await migrateToLatest(migrating)
  await migrating.close()
  if (result.error) throw result.error
  return schema
}

/**
 * A store on `schema` whose pooled clients (pipelined, as connect.ts makes them) record every text they are asked to
 * run, in `sent`, and which of them were written together, in `trips`: a statement written while none is waiting
 * for its answer starts a round trip.
 */
function recordedStore(schema: Schema, options: { prepare?: boolean; max?: number; lockTimeoutMs?: number } = {}) {
  const sent: string[] = []
  const trips: string[][] = []
  const pool = new pg.Pool({
    connectionString: PG_URL ?? '',
    max: options.max ?? 1,
    pipeline: true,
    options: `-c search_path=${schema.name}${options.lockTimeoutMs ? ` -c lock_timeout=${options.lockTimeoutMs}` : ''}`,
  })
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (config: unknown, values?: unknown) => Promise<unknown>
    let waiting = 0
    client.query = ((config: string | { text: string }, values?: unknown) => {
      const text = typeof config === 'string' ? config : config.text
      sent.push(text)
      if (waiting === 0) trips.push([])
      trips.at(-1)?.push(text)
      waiting++
      const answer = query(config, values)
      const answered = () => {
        waiting--
      }
      answer.then(answered, answered)
      return answer
    }) as typeof client.query
  })
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool, { prepare: options.prepare ?? true }) }) })
  const connection: Connection = { db, engine: 'postgres', schema: schema.name, sharedPool: pool, close: () => db.destroy() }
  opened.push(connection)
  return { store: new Store(connection), sent, trips, pool, connection }
}

let serial = 0
function newTask(id = `t${++serial}`): Task {
  return taskFixture(id, 1_800_000_000 + serial, { description: id, estimatedMinutes: 45 })
}

const a2aRow = (task: Task): A2ATaskRecord => ({
  id: `a-${task.id}`,
  tenantId: task.tenantId,
  bernsteinTaskId: task.id,
  sender: 'peer',
  message: task.description,
  createdAt: task.createdAt,
  updatedAt: task.createdAt,
  receipt: null,
  receiptKind: null,
})

/** An entry whose hash names the head it was built on (so a test can tell what each append was built on). */
const builtOn = (label: string, seen: ChainHead[]) => (head: ChainHead) => {
  seen.push(head)
  const entryHash = `${label}@${head.length + 1}<${head.headHash}`
  return { entry: { entryHash, ticketId: label, trackerName: 'test', line: `{"h":"${entryHash}"}` }, value: entryHash }
}

const APPEND_ON_GUESS = /locked as \((?![\s\S]*bernstein_chain_moved)/
const APPEND_BEFORE_COMMIT = /locked as \([\s\S]*bernstein_chain_moved/
const AFTER_WRONG_GUESS = /^with "appended" as \(insert into "chain_entries"/

describe.skipIf(!PG_URL)(pgSuiteName('what a write sends to PostgreSQL'), () => {
  it('a send-shaped transaction is four statements; once its chains are calm, all four go in one round trip', async () => {
    const schema = await migrated()
    const { store, sent, trips } = recordedStore(schema)
    // As A2AService.send: the audit entry queued by the new task, the receipt's spine row queued ahead of it, and the
    // A2A row, which carries the receipt, inserted once the spine row is built.
    const send = (task: Task) =>
      store.transaction(async (repos) => {
        await repos.tasks.insert(task)
        repos.chains.appendAtCommit('audit', 'genesis', builtOn(task.id, []))
        repos.chains.appendAtCommit('spine', 'genesis', builtOn(task.id, []), { first: true, afterAppend: () => repos.a2a.insert(a2aRow(task)) })
      })
    await send(newTask()) // creates both chains' heads
    sent.length = 0
    trips.length = 0
    const second = newTask()
    await send(second)
    // Each append waits for its answer (its guess is not trusted yet), so: BEGIN with the spine append, the audit
    // append, the COMMIT.
    expect(sent).toHaveLength(4)
    expect(trips).toHaveLength(3)
    expect(trips[0]?.[0]).toBe('begin')
    expect(trips[0]?.[1]).toMatch(/^with held_1 as \(insert into "tasks" .*\), locked as \(/s)
    expect(trips[1]?.[0]).toMatch(/^with held_1 as \(insert into "a2a_tasks" .*\), locked as \(/s)
    expect(trips[2]).toEqual(['commit'])
    expect(sent.filter((s) => APPEND_ON_GUESS.test(s))).toHaveLength(2)
    // All of it is there, the chains at their second entries.
    expect((await store.repos.tasks.get('default', second.id))?.id).toBe(second.id)
    expect((await store.repos.a2a.get('default', `a-${second.id}`))?.bernsteinTaskId).toBe(second.id)
    expect((await store.repos.chains.head('spine'))?.length).toBe(2)
    expect((await store.repos.chains.head('audit'))?.length).toBe(2)

    // Eight right guesses in a row make a chain calm: its appends at COMMIT then travel with it, and the whole
    // transaction is one round trip.
    for (let i = 0; i < 7; i++) await send(newTask())
    sent.length = 0
    trips.length = 0
    const calm = newTask()
    await send(calm)
    expect(trips).toHaveLength(1)
    expect(trips[0]).toHaveLength(4)
    expect(trips[0]?.[0]).toBe('begin')
    expect(trips[0]?.[1]).toMatch(/^with held_1 as \(insert into "tasks" .*\), locked as \([\s\S]*bernstein_chain_moved/s)
    expect(trips[0]?.[2]).toMatch(/^with held_1 as \(insert into "a2a_tasks" .*\), locked as \([\s\S]*bernstein_chain_moved/s)
    expect(trips[0]?.[3]).toBe('commit')
    expect((await store.repos.a2a.get('default', `a-${calm.id}`))?.bernsteinTaskId).toBe(calm.id)
    for (const chain of ['spine', 'audit']) {
      const lines = await store.repos.chains.list({ chain })
      expect(lines.map((line) => line.position)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1))
      // Every entry built on the one before it.
      expect(lines.every((line, i) => line.entryHash.endsWith(`<${i === 0 ? 'genesis' : lines[i - 1]?.entryHash}`))).toBe(true)
      expect(lines.at(-1)?.entryHash).toBe(`${calm.id}@10<${lines.at(-2)?.entryHash}`)
    }
  })

  it('a transaction that sends nothing sends no BEGIN or COMMIT either', async () => {
    const schema = await migrated()
    const { store, sent } = recordedStore(schema)
    expect(await store.transaction(async () => 'nothing to write')).toBe('nothing to write')
    expect(sent).toEqual([])
  })

  it('a guess gone stale while it travels with the COMMIT fails the attempt; the transaction runs again on the head as it is', async () => {
    const schema = await migrated()
    const replicaA = recordedStore(schema)
    const replicaB = recordedStore(schema)
    const append = (replica: typeof replicaA, label: string, saw: ChainHead[] = []) =>
      replica.store.transaction(async (repos) => {
        await repos.tasks.insert(newTask(`task-${label}`))
        let appended: unknown
        repos.chains.appendAtCommit('chain', 'genesis', (head) => {
          const built = builtOn(label, saw)(head)
          appended = built.value
          return built
        })
        return () => appended
      })
    for (let i = 1; i <= 9; i++) await append(replicaA, `a${i}`)
    await append(replicaB, 'b10')
    replicaA.sent.length = 0
    replicaA.trips.length = 0
    const saw: ChainHead[] = []
    const value = (await append(replicaA, 'a11', saw))()
    // Built on A's own last entry and sent with the COMMIT, which B's entry made stale: the attempt failed there
    // (the COMMIT then rolled it back), and the second attempt read the head and appended in a round trip of its own.
    expect(saw.map((head) => head.length)).toEqual([9, 10])
    expect(replicaA.trips[0]?.at(-1)).toBe('commit')
    expect(replicaA.trips[0]?.filter((s) => APPEND_BEFORE_COMMIT.test(s))).toHaveLength(1)
    expect(replicaA.sent.filter((s) => APPEND_BEFORE_COMMIT.test(s))).toHaveLength(1)
    expect(replicaA.sent.filter((s) => APPEND_ON_GUESS.test(s))).toHaveLength(1)
    const lines = await replicaA.store.repos.chains.list({ chain: 'chain' })
    expect(lines.map((line) => line.ticketId)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'b10', 'a11'])
    expect(lines.at(-1)?.entryHash).toBe(value)
    expect(value).toBe(`a11@11<${lines[9]?.entryHash}`)
    // The failed attempt left nothing: one task per append, the first attempt's INSERT rolled back with it.
    expect((await replicaA.store.repos.tasks.countByStatus()).get('open')).toBe(11)
    // And the chain is no longer trusted: the next append waits for its own answer again.
    replicaA.sent.length = 0
    await append(replicaA, 'a12')
    expect(replicaA.sent.filter((s) => APPEND_BEFORE_COMMIT.test(s))).toHaveLength(0)
    expect(replicaA.sent.filter((s) => APPEND_ON_GUESS.test(s))).toHaveLength(1)
  })

  it('a read after a held INSERT sees the row; a ROLLBACK drops it unsent; outside a transaction it is sent at once', async () => {
    const schema = await migrated()
    const { store, sent } = recordedStore(schema)
    const read = newTask()
    const seen = await store.transaction(async (repos) => {
      await repos.tasks.insert(read)
      return repos.tasks.get('default', read.id)
    })
    expect(seen?.id).toBe(read.id)
    expect(sent.filter((s) => s.startsWith('insert into "tasks"'))).toHaveLength(1)

    sent.length = 0
    const dropped = newTask()
    await expect(
      store.transaction(async (repos) => {
        await repos.tasks.insert(dropped)
        throw new Error('changed my mind')
      }),
    ).rejects.toThrow('changed my mind')
    // Nothing had been sent: not even the BEGIN.
    expect(sent).toEqual([])
    expect(await store.repos.tasks.get('default', dropped.id)).toBeUndefined()

    sent.length = 0
    const alone = newTask()
    await store.repos.tasks.insert(alone)
    expect(sent).toEqual([expect.stringMatching(/^insert into "tasks"/)])
    expect((await store.repos.tasks.get('default', alone.id))?.id).toBe(alone.id)
  })

  it('a held INSERT that fails fails the statement that carries it, and nothing of the transaction stays', async () => {
    const schema = await migrated()
    const { store } = recordedStore(schema)
    const existing = newTask()
    await store.transaction(async (repos) => {
      await repos.tasks.insert(existing)
      await repos.chains.appendNext('spine', 'genesis', builtOn('first', []))
    })
    const error = await store
      .transaction(async (repos) => {
        await repos.tasks.insert(existing) // the same id again: a unique violation, once it is sent
        await repos.chains.appendNext('spine', 'genesis', builtOn('second', []))
      })
      .then(
        () => null,
        (e: unknown) => e,
      )
    expect((error as { code?: string } | null)?.code).toBe('23505')
    expect((await store.repos.chains.head('spine'))?.length).toBe(1)
    expect((await store.repos.tasks.countByStatus()).get('open')).toBe(1)
  })

  it('prepares the fixed shapes once per connection under a name, and not at all when told not to', async () => {
    const schema = await migrated()
    // The session's prepared statements (one pooled connection: the one that ran the statements before).
    const prepared = async (connection: Connection): Promise<string[]> =>
      (await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(connection.db)).rows.map((r) => r.name)
    const named = recordedStore(schema)
    const task = newTask()
    await named.store.repos.tasks.insert(task)
    await named.store.repos.tasks.get('default', task.id)
    const names = await prepared(named.connection)
    expect(names).toHaveLength(2)
    expect(names.every((name) => name.startsWith('bernstein_'))).toBe(true)
    // Prepared once: reading again binds the statement the first read prepared.
    await named.store.repos.tasks.get('default', task.id)
    expect(await prepared(named.connection)).toEqual(names)

    const unnamed = recordedStore(schema, { prepare: false })
    await unnamed.store.repos.tasks.get('default', task.id)
    expect(await prepared(unnamed.connection)).toEqual([])
  })

  it('a named statement outdated by a schema change answers unavailable once, then works on a new connection', async () => {
    const schema = await migrated()
    const { store, pool } = recordedStore(schema)
    const task = newTask()
    await store.repos.tasks.insert(task)
    expect((await store.repos.tasks.get('default', task.id))?.id).toBe(task.id)
    // Another replica's migration changes the columns `select *` returns.
    await schema.query('alter table tasks add column added_later text')
    const error = await store.repos.tasks.get('default', task.id).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(DatabaseUnavailable)
    expect(pool.totalCount).toBe(0)
    expect((await store.repos.tasks.get('default', task.id))?.id).toBe(task.id)
  })

  it('an append built on a head not committed yet waits for its commit and is stored in one statement', async () => {
    const schema = await migrated()
    const { store, sent } = recordedStore(schema, { max: 2 })
    await store.transaction((repos) => repos.chains.appendNext('chain', 'genesis', builtOn('first', [])))
    const commitFirst = signal()
    const firstAppended = signal()
    const first = store.transaction(async (repos) => {
      await repos.chains.appendNext('chain', 'genesis', builtOn('one', []))
      firstAppended.fire()
      await commitFirst.fired
    })
    await firstAppended.fired
    sent.length = 0
    const secondSaw: ChainHead[] = []
    const second = store.transaction((repos) => repos.chains.appendNext('chain', 'genesis', builtOn('two', secondSaw)))
    // The second append is waiting for the first transaction's lock: PostgreSQL says so.
    await until(async () => (await schema.query("select 1 from pg_locks where not granted and locktype = 'transactionid'")).length > 0)
    commitFirst.fire()
    await first
    const { position, value } = await second
    expect(position).toBe(3)
    // Built once, on the first transaction's entry before it committed; no second build, no head read.
    expect(secondSaw).toEqual([{ headHash: 'one@2<first@1<genesis', length: 2 }])
    expect(sent.filter((s) => APPEND_ON_GUESS.test(s))).toHaveLength(1)
    expect(sent.filter((s) => AFTER_WRONG_GUESS.test(s) || s.includes('from "chain_heads"'))).toEqual([])
    expect(value).toBe('two@3<one@2<first@1<genesis')
    expect((await store.repos.chains.head('chain'))?.headHash).toBe(value)
  })

  it('an append built on a head another replica has moved since is built again on the head as it is, under the lock', async () => {
    const schema = await migrated()
    const replicaA = recordedStore(schema)
    const replicaB = recordedStore(schema)
    await replicaA.store.transaction((repos) => repos.chains.appendNext('chain', 'genesis', builtOn('a1', [])))
    await replicaB.store.transaction((repos) => repos.chains.appendNext('chain', 'genesis', builtOn('b2', [])))
    replicaA.sent.length = 0
    const saw: ChainHead[] = []
    const { position, value } = await replicaA.store.transaction((repos) => repos.chains.appendNext('chain', 'genesis', builtOn('a3', saw)))
    // A's guess was its own last entry; the statement found B's, and the entry was built again on it.
    expect(saw.map((head) => head.length)).toEqual([1, 2])
    expect(position).toBe(3)
    expect(value).toBe('a3@3<b2@2<a1@1<genesis')
    expect(replicaA.sent.filter((s) => AFTER_WRONG_GUESS.test(s))).toHaveLength(1)
    const lines = await replicaA.store.repos.chains.list({ chain: 'chain' })
    expect(lines.map((line) => line.entryHash)).toEqual(['a1@1<genesis', 'b2@2<a1@1<genesis', value])
  })

  it('two writers counting new tasks do not wait for each other, and the counts stay exact across folds', async () => {
    const schema = await migrated()
    const one = recordedStore(schema)
    // The other gives up on any lock wait after 3 s: with a shared counter row it would wait for the first.
    const other = recordedStore(schema, { lockTimeoutMs: 3000 })
    const release = signal()
    const inserted = signal()
    const first = one.store.transaction(async (repos) => {
      const task = newTask()
      await repos.tasks.insert(task)
      await repos.tasks.get('default', task.id) // sends the INSERT: its counting has run, its transaction stays open
      inserted.fire()
      await release.fired
    })
    await inserted.fired
    await other.store.transaction((repos) => repos.tasks.insert(newTask()))
    release.fire()
    await first

    // Many more from both, folded by both at once while they write.
    const writes = Array.from({ length: 40 }, (_, i) => (i % 2 ? one : other).store.transaction((repos) => repos.tasks.insert(newTask())))
    const folds = [one.store.foldCounts(), other.store.foldCounts()]
    await Promise.all([...writes, ...folds])
    const claimed = await one.store.transaction(async (repos) => {
      const task = await repos.tasks.nextOpenForRole('default', 'backend')
      if (!task) throw new Error('no open task')
      await repos.tasks.replace({ ...task, status: 'claimed', assignedAgent: 'worker', version: task.version + 1 }, task.version)
      return task.id
    })
    expect(claimed).toBeTruthy()
    const scan = await one.store.repos.tasks.countByStatus()
    expect(Object.fromEntries(scan)).toEqual({ open: 41, claimed: 1 })
    expect(Object.fromEntries(await one.store.repos.tasks.countedByStatus())).toEqual(Object.fromEntries(scan))
    expect(await one.store.foldCounts()).toBeGreaterThan(0)
    expect(await schema.query('select * from row_count_deltas')).toEqual([])
    expect(Object.fromEntries(await other.store.repos.tasks.countedByStatus())).toEqual(Object.fromEntries(scan))
  })
})

/** A promise (`fired`) that one side awaits and the other resolves (`fire`). */
function signal(): { readonly fired: Promise<void>; fire(): void } {
  let fire = (): void => {}
  const fired = new Promise<void>((resolve) => {
    fire = resolve
  })
  return { fired, fire }
}

/** Polls `condition` until it holds (no fixed sleep: each check is a round trip to the database). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await condition()) return
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error('condition never held')
}
