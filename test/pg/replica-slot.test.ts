/**
 * Replica slots (src/store/replica-slot.ts), on a real PostgreSQL: replicas of one deployment rank themselves
 * 0..n-1 of n; one gone (closed, or its backend terminated) is no longer counted and the others close ranks; a
 * replica whose slot connection was killed takes a slot again on its next refresh; another deployment (another
 * schema) in the same database counts its replicas apart; SQLite has no slot.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connection, connect } from '../../src/store/connect.js'
import { type ReplicaSlot, replicaSlot } from '../../src/store/replica-slot.js'
import { PG_URL, type Schema, announceSkip, createSchema, pgSuiteName } from './support.js'

announceSkip('test/pg/replica-slot.test.ts')

describe.skipIf(!PG_URL)(pgSuiteName('replica slots'), () => {
  let dataDir: string
  const schemas: Schema[] = []
  const connections: Connection[] = []
  const slots: ReplicaSlot[] = []

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-slots-'))
    schemas.push(await createSchema('rs'), await createSchema('rs'))
  })

  afterAll(async () => {
    await Promise.all(slots.map((slot) => slot.close()))
    await Promise.all(connections.map((c) => c.close()))
    await Promise.all(schemas.map((s) => s.drop()))
    rmSync(dataDir, { recursive: true, force: true })
  })

  /** A replica's slot on `schema` (its own pool, as a replica process has). */
  function replica(schema: Schema): ReplicaSlot {
    const connection = connect({ url: schema.url(), dataDir, poolSize: 1 })
    connections.push(connection)
    const slot = replicaSlot(connection)
    if (slot === null) throw new Error('no slot on PostgreSQL')
    slots.push(slot)
    return slot
  }

  it('ranks the replicas of one deployment, closes ranks when one goes, and takes a lost slot again', async () => {
    const [deployment, other] = schemas as [Schema, Schema]
    const [a, b, c] = [replica(deployment), replica(deployment), replica(deployment)]
    // One after the other, so that each takes the lowest free slot in turn.
    expect(await a.refresh()).toEqual({ rank: 0, replicas: 1 })
    expect(await b.refresh()).toEqual({ rank: 1, replicas: 2 })
    expect(await c.refresh()).toEqual({ rank: 2, replicas: 3 })
    expect(await a.refresh()).toEqual({ rank: 0, replicas: 3 })

    // Another deployment in the same database counts apart, and does not move this one's ranks.
    const elsewhere = replica(other)
    expect(await elsewhere.refresh()).toEqual({ rank: 0, replicas: 1 })
    expect(await c.refresh()).toEqual({ rank: 2, replicas: 3 })

    await b.close()
    expect(await a.refresh()).toEqual({ rank: 0, replicas: 2 })
    expect(await c.refresh()).toEqual({ rank: 1, replicas: 2 })

    // A's slot connection killed by the server: A is gone from the count at once, and takes a slot again (the lowest
    // free one, 0) on its next refresh.
    const killed = await deployment.query<{ killed: boolean }>(
      `select pg_terminate_backend(pid) as killed from pg_locks
        where locktype = 'advisory' and objsubid = 2 and granted and objid = 0
          and classid = (hashtext('bernstein-a2a replica ' || $1) & 2147483647)::oid`,
      [deployment.name],
    )
    expect(killed).toEqual([{ killed: true }])
    const counted = async () => (await c.refresh())?.replicas
    for (let i = 0; i < 50 && (await counted()) !== 1; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await c.refresh()).toEqual({ rank: 0, replicas: 1 })
    expect(await a.refresh()).toEqual({ rank: 0, replicas: 2 })
    expect(await c.refresh()).toEqual({ rank: 1, replicas: 2 })
  })

  it('SQLite has no replica slot: one process is the only writer', () => {
    const connection = connect({ url: null, dataDir, sqliteFile: ':memory:' })
    connections.push(connection)
    expect(replicaSlot(connection)).toBeNull()
  })
})
