/**
 * With PostgreSQL the rate limiters keep their counters in the database, so a client has one budget however a
 * load balancer spreads its requests: two app instances on one schema, each with its own connection pool and its
 * own limiters built by the server's `rateLimiters`, must refuse the client once the budget is spent on either.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { RATE_LIMIT_TABLE, rateLimiters } from '../../src/server.js'
import { type Connection, connect } from '../../src/store/connect.js'
import { type TestDatabase, createTestDatabase } from '../helpers/engines.js'
import { type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'
import { PG_URL, announceSkip, pgSuiteName } from './support.js'

announceSkip('test/pg/rate-limit-shared.test.ts')

const WRITES_PER_MIN = 5
const READS_PER_MIN = 8

describe.skipIf(!PG_URL)(pgSuiteName('rate limits shared by replicas through PostgreSQL'), () => {
  let database: TestDatabase | undefined
  const apps: TestApp[] = []
  const connections: Connection[] = []

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close()
    for (const c of connections.splice(0)) await c.close()
    await database?.drop()
    database = undefined
  })

  /** One more replica on the shared schema: its own pool for the limiters, its own app and store. */
  const replica = async (): Promise<TestApp> => {
    if (!database) throw new Error('no database')
    const connection = connect(database.options)
    connections.push(connection)
    const limiters = await rateLimiters({ rateLimitWritePerMin: WRITES_PER_MIN, rateLimitReadPerMin: READS_PER_MIN }, connection)
    const app = await startTestApp({ engine: 'postgres', database, rateLimiters: limiters, rateLimitLoopback: true })
    apps.push(app)
    return app
  }

  const write = (app: TestApp, n: number) => rawRequest(app.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: `limited ${n}` }) })
  const read = (app: TestApp) => rawRequest(app.url, { method: 'GET', path: '/tasks?limit=1' })

  it('a client’s write budget is spent across both instances, and a third instance joining later sees it spent', async () => {
    database = await createTestDatabase('postgres')
    const [a, b] = [await replica(), await replica()]
    const statuses: number[] = []
    for (let n = 0; n < WRITES_PER_MIN; n++) statuses.push((await write(n % 2 === 0 ? a : b, n)).status)
    expect(statuses).toEqual(Array(WRITES_PER_MIN).fill(201))

    for (const app of [a, b]) {
      const refused = await write(app, 99)
      expect(refused.status).toBe(429)
      expect(refused.json).toEqual({ detail: "Rate limit exceeded for bucket 'default_write'", bucket: 'default_write' })
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    }
    const c = await replica()
    expect((await write(c, 100)).status).toBe(429)
    // Only the five admitted writes happened, and the counter lives in the shared table.
    const stored = await a.store.repos.tasks.list({ tenantId: 'default', limit: 50 })
    expect(stored).toHaveLength(WRITES_PER_MIN)
    const rows = await rawCounters(database)
    expect(rows.find((r) => r.key === 'default_write:ip:127.0.0.1')?.points).toBeGreaterThanOrEqual(WRITES_PER_MIN)
  })

  it('reads have their own shared budget: spending it on one instance refuses reads on the other, writes still pass', async () => {
    database = await createTestDatabase('postgres')
    const [a, b] = [await replica(), await replica()]
    for (let n = 0; n < READS_PER_MIN; n++) expect((await read(n < 3 ? a : b)).status).toBe(200)
    const refused = await read(a)
    expect(refused.status).toBe(429)
    expect(refused.json).toEqual({ detail: "Rate limit exceeded for bucket 'default_read'", bucket: 'default_read' })
    expect((await write(b, 1)).status).toBe(201)
  })

  it('control: per-process memory limiters (the SQLite choice) would give each instance its own budget', async () => {
    // The same sequence against limiters built without a shared pool: the second instance still admits writes.
    // This is what the shared store prevents, and shows the first test can tell the difference.
    database = await createTestDatabase('postgres')
    const memory = async (): Promise<TestApp> => {
      const limiters = await rateLimiters({ rateLimitWritePerMin: WRITES_PER_MIN, rateLimitReadPerMin: READS_PER_MIN }, { sharedPool: null })
      const app = await startTestApp({ engine: 'postgres', database, rateLimiters: limiters, rateLimitLoopback: true })
      apps.push(app)
      return app
    }
    const [a, b] = [await memory(), await memory()]
    for (let n = 0; n < WRITES_PER_MIN; n++) expect((await write(a, n)).status).toBe(201)
    expect((await write(a, 98)).status).toBe(429)
    expect((await write(b, 99)).status).toBe(201)
  })
})

/** The limiter table as stored (its layout belongs to rate-limiter-flexible: key, points, expire). */
async function rawCounters(database: TestDatabase): Promise<{ key: string; points: number }[]> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: PG_URL ?? '' })
  await client.connect()
  try {
    const schema = database.options.schema ?? 'public'
    const result = await client.query<{ key: string; points: number }>(`select key, points from "${schema}"."${RATE_LIMIT_TABLE}"`)
    return result.rows
  } finally {
    await client.end()
  }
}
