/**
 * Issue 27, partitioned chains, on each engine: appends spread over tenants and shards; every partition, exported
 * as Bernstein's file, verifies with Bernstein's verifiers; a signed checkpoint ties the heads together and
 * `verifyNode` detects a partition dropped, rolled back or rewritten after it; a chain written before partitioning
 * (before migration 013) is the legacy partition and verifies unchanged; SQLite's in-memory heads survive a rolled
 * back transaction and a commit by another connection; every write reports its lock hold time.
 */
import { randomBytes } from 'node:crypto'
import { Migrator, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { generateEd25519KeyPair } from '../../src/crypto/ed25519.js'
import { jwksEntry } from '../../src/crypto/jwks.js'
import { AuditTrail, TRACKER_AUDIT_CHAIN } from '../../src/lineage/audit-trail.js'
import { ChainCheckpoints } from '../../src/lineage/checkpoints.js'
import { LineageService } from '../../src/lineage/lineage.service.js'
import { partitionName, shardOf } from '../../src/lineage/partitions.js'
import { verifySpine } from '../../src/lineage/spine.js'
import { GENESIS_PREV_HASH, verifyTrackerAuditLines } from '../../src/lineage/tracker-audit.js'
import type { A2ATaskResponseBody } from '../../src/receipts/attestation.js'
import { RECEIPT_SPINE_CHAIN, ReceiptAttestor } from '../../src/receipts/receipt-attestor.js'
import { systemIds, systemClock } from '../../src/runtime.js'
import { connect, migrateToLatest } from '../../src/store/connect.js'
import { migrationProvider } from '../../src/store/migrations/index.js'
import { Store } from '../../src/store/store.js'
import { trackerInput } from '../helpers/tracker-input.js'
import { type TestEngine, createTestDatabase, migratedDatabasePerTest, testEngines } from '../helpers/engines.js'

const freshConnection = migratedDatabasePerTest()
const auditKey = Buffer.from(randomBytes(32).toString('hex'), 'ascii')
const receiptKey = { kid: 'a2a-server-lineage-test', ...generateEd25519KeyPair() }
const jwks = () => ({ keys: [jwksEntry(receiptKey.publicKey, receiptKey.kid)] })

const input = trackerInput

const response = (id: string): A2ATaskResponseBody =>
  ({ id, sender: 'peer', status: 'submitted', created_at: 1, updated_at: 1, artifacts: [] }) as unknown as A2ATaskResponseBody

function writers(shards: number) {
  return {
    audit: new AuditTrail({ key: auditKey, clock: systemClock, partitions: { shards } }),
    attestor: new ReceiptAttestor({ key: receiptKey, masterKey: auditKey, clock: systemClock, partitions: { shards } }),
  }
}

const checkpoints = (store: Store) =>
  new ChainCheckpoints({ store, issuer: 'test-issuer', clock: systemClock, ids: systemIds, key: receiptKey, jwks, auditKey })

/** One send's chain writes: the ticket's audit entry and its receipt row, in one transaction. */
async function send(store: Store, shards: number, tenant: string, ticket: string): Promise<void> {
  const { audit, attestor } = writers(shards)
  await store.transaction(async (repos) => {
    await audit.append(repos, tenant, input(ticket, 1))
    await attestor.attest(repos, response(ticket), 'acceptance', tenant)
  })
}

async function exported(store: Store, chain: string): Promise<string[]> {
  const lines: string[] = []
  for await (const line of new LineageService(store, null, 'test-issuer').exportJsonl(chain)) lines.push(line)
  return lines
}

describe.each(testEngines())('partitioned chains on %s', (engine: TestEngine) => {
  it('spreads tenants and shards over partitions, each a Bernstein chain of its own, and the checkpoint verifies', async () => {
    const store = new Store(await freshConnection(engine))
    const holds: number[] = []
    store.observeChainHold((seconds) => holds.push(seconds))
    await Promise.all(Array.from({ length: 24 }, (_, i) => send(store, 4, i % 3 === 0 ? 'acme' : 'default', `ticket-${i}`)))
    expect(holds.length).toBe(24)
    for (const seconds of holds) expect(seconds).toBeGreaterThanOrEqual(0)

    const lineage = new LineageService(store, auditKey, 'test-issuer')
    const partitions = await lineage.partitions()
    expect(partitions[0]?.chain).toBe(TRACKER_AUDIT_CHAIN)
    expect(partitions.some((p) => p.chain.startsWith(`${TRACKER_AUDIT_CHAIN}/acme/`))).toBe(true)
    expect(partitions.length).toBeGreaterThan(2)
    expect(partitions.reduce((sum, p) => sum + p.length, 0)).toBe(24)
    for (const { chain, length } of partitions) {
      const result = await verifyTrackerAuditLines(await exported(store, chain), auditKey)
      expect({ chain, result }).toEqual({ chain, result: { ok: true, value: { entries: length } } })
    }
    for (const { chain } of await store.repos.chains.heads(RECEIPT_SPINE_CHAIN)) {
      expect({ chain, status: verifySpine((await exported(store, chain)).join(''), auditKey).status }).toEqual({ chain, status: 'ok' })
    }
    expect(await lineage.verify()).toEqual({ ok: true, value: { entries: 24 } })
    // A ticket's entries are found in its partition.
    expect((await lineage.entries('ticket-3')).map((e) => e.ticket_id)).toEqual(['ticket-3'])
    expect((await lineage.page({ ticketId: 'ticket-3', limit: 10 })).lines.map((l) => l.ticketId)).toEqual(['ticket-3'])

    const node = checkpoints(store)
    const body = await node.write()
    expect(body.partitions.length).toBe(partitions.length + (await store.repos.chains.heads(RECEIPT_SPINE_CHAIN)).length)
    await send(store, 4, 'default', 'after-checkpoint')
    const verdict = await node.verifyNode()
    expect(verdict.checkpoints).toMatchObject({ count: 1, failures: [] })
    expect(verdict.partitions.every((p) => p.ok)).toBe(true)
    expect(verdict.ok).toBe(true)
  })

  it('detects a partition dropped, rolled back or rewritten after a checkpoint, and a tampered checkpoint', async () => {
    const connection = await freshConnection(engine)
    const store = new Store(connection)
    for (let i = 0; i < 12; i++) await send(store, 3, 'acme', `t-${i}`)
    const node = checkpoints(store)
    await node.write()
    expect((await node.verifyNode()).ok).toBe(true)
    const [first, second, third] = (await store.repos.chains.heads(`${TRACKER_AUDIT_CHAIN}/acme`)).map((h) => h)
    expect(third).toBeDefined()
    const db = connection.db

    // Rolled back: the last entry removed and the head moved back to the one before (the partition itself verifies).
    const rolled = first as { chain: string; length: number }
    await db.deleteFrom('chain_entries').where('chain', '=', rolled.chain).where('position', '=', rolled.length).execute()
    const before = await store.repos.chains.hashAt(rolled.chain, rolled.length - 1)
    await db
      .updateTable('chain_heads')
      .set({ length: rolled.length - 1, head_hash: before ?? GENESIS_PREV_HASH })
      .where('chain', '=', rolled.chain)
      .execute()
    // Dropped: the whole partition gone.
    const dropped = second as { chain: string }
    await db.deleteFrom('chain_entries').where('chain', '=', dropped.chain).execute()
    await db.deleteFrom('chain_heads').where('chain', '=', dropped.chain).execute()

    // Rewritten: the recorded head's entry replaced by another hash.
    const rewritten = third as { chain: string; length: number }
    await db
      .updateTable('chain_entries')
      .set({ entry_hash: 'sha256:forged' })
      .where('chain', '=', rewritten.chain)
      .where('position', '=', rewritten.length)
      .execute()

    const verdict = await node.verifyNode()
    expect(verdict.ok).toBe(false)
    expect(verdict.partitions.find((p) => p.chain === rolled.chain)?.ok).toBe(true)
    expect(verdict.partitions.find((p) => p.chain === rewritten.chain)?.ok).toBe(false)
    expect(verdict.checkpoints.failures).toEqual(
      expect.arrayContaining([
        expect.stringMatching(`partition ${rolled.chain} was rolled back`),
        expect.stringMatching(`partition ${dropped.chain} is missing`),
        expect.stringMatching(`partition ${rewritten.chain} was rewritten`),
      ]),
    )

    // A checkpoint whose body was edited no longer verifies.
    await db.updateTable('chain_checkpoints').set({ body: sql<string>`replace(body, '"length":', '"length":1')` }).execute()
    expect((await node.verifyNode()).checkpoints.failures).toEqual(expect.arrayContaining([expect.stringMatching('signature does not verify')]))
  })

  it('a chain written before partitioning (before migration 013) is the legacy partition and verifies as it was', async () => {
    const database = await createTestDatabase(engine)
    const connection = connect(database.options)
    try {
      const migrator = new Migrator({
        db: connection.db,
        provider: migrationProvider(engine),
        ...(database.options.schema !== undefined && { migrationTableSchema: database.options.schema }),
      })
      expect((await migrator.migrateTo('2026-12-02-010-a2a-v1')).error).toBeUndefined()
      // What the single-chain code wrote: the one chain under its name, through lockHead and append.
      const legacy = new Store(connection)
      const { audit } = writers(1)
      for (let i = 0; i < 5; i++) await send(legacy, 1, 'default', `old-${i}`)
      expect((await legacy.repos.chains.heads(TRACKER_AUDIT_CHAIN)).map((h) => h.chain)).toEqual([TRACKER_AUDIT_CHAIN])
      const before = await exported(legacy, TRACKER_AUDIT_CHAIN)

      expect((await migrateToLatest(connection)).error).toBeUndefined()
      const store = new Store(connection)
      expect(await exported(store, TRACKER_AUDIT_CHAIN)).toEqual(before)
      for (let i = 0; i < 8; i++) await send(store, 4, 'default', `new-${i}`)
      await store.transaction((repos) => audit.append(repos, 'default', input('old-0', 2)))
      const node = checkpoints(store)
      await node.write()
      const verdict = await node.verifyNode()
      expect(verdict.ok).toBe(true)
      expect((await exported(store, TRACKER_AUDIT_CHAIN)).slice(0, before.length)).toEqual(before)
      expect(verdict.partitions.find((p) => p.chain === TRACKER_AUDIT_CHAIN)?.entries).toBeGreaterThanOrEqual(before.length)
      // Eight new tasks over four shards: some went beside the legacy partition (shard 0).
      const shards = [1, 2, 3].map((shard) => partitionName(TRACKER_AUDIT_CHAIN, 'default', shard))
      expect(verdict.partitions.some((p) => shards.includes(p.chain))).toBe(true)
    } finally {
      await connection.close()
      await database.drop()
    }
  })

  it('heads kept in memory stay right across a rolled-back transaction and a commit by another connection', async () => {
    const database = await createTestDatabase(engine)
    const connection = connect(database.options)
    // Another connection to the same database (a CLI command beside the server).
    const otherConnection = connect(database.options)
    try {
      expect((await migrateToLatest(connection)).error).toBeUndefined()
      const store = new Store(connection)
      const other = new Store(otherConnection)
      const { audit } = writers(1)
      // In one group: one that fails after appending, between two that succeed.
      const results = await Promise.allSettled([
        store.transaction((repos) => audit.append(repos, 'default', input('a', 1))),
        store.transaction(async (repos) => {
          await audit.append(repos, 'default', input('b', 1))
          throw new Error('rolled back after its append')
        }),
        store.transaction((repos) => audit.append(repos, 'default', input('c', 1))),
      ])
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
      await other.transaction((repos) => audit.append(repos, 'default', input('d', 1)))
      await store.transaction((repos) => audit.append(repos, 'default', input('e', 1)))
      const lineage = new LineageService(store, auditKey, 'test-issuer')
      expect(await lineage.verify()).toEqual({ ok: true, value: { entries: 4 } })
      expect((await lineage.entries()).map((e) => e.ticket_id)).toEqual(['a', 'c', 'd', 'e'])
    } finally {
      await otherConnection.close()
      await connection.close()
      await database.drop()
    }
  })

  it('a ticket written before and after the shard count changed has its entries in both partitions, legacy first', async () => {
    const connection = await freshConnection(engine)
    const store = new Store(connection)
    let ticket = 'moved-0'
    for (let i = 1; shardOf(ticket, 4) === 0; i++) ticket = `moved-${i}`
    await store.transaction((repos) => writers(1).audit.append(repos, 'default', input(ticket, 1)))
    await store.transaction((repos) => writers(4).audit.append(repos, 'default', input(ticket, 2)))
    await store.transaction((repos) => writers(4).audit.append(repos, 'default', input(`${ticket}-other`, 1)))
    const lineage = new LineageService(store, auditKey, 'test-issuer')
    expect((await lineage.partitions()).map((p) => p.chain)).toEqual(
      [
        TRACKER_AUDIT_CHAIN,
        ...new Set([
          partitionName(TRACKER_AUDIT_CHAIN, 'default', shardOf(ticket, 4)),
          partitionName(TRACKER_AUDIT_CHAIN, 'default', shardOf(`${ticket}-other`, 4)),
        ]),
      ].sort(),
    )
    const entries = await lineage.entries(ticket)
    expect(entries.map((e) => e.idempotency_key)).toEqual([`${ticket}@1`, `${ticket}@2`])
    // Paged without a partition, a ticket is read from the first partition holding it: the legacy one.
    const page = await lineage.page({ ticketId: ticket, limit: 10 })
    expect(page.lines.map((l) => l.ticketId)).toEqual([ticket])
    const moved = await lineage.page({ ticketId: ticket, partition: partitionName(TRACKER_AUDIT_CHAIN, 'default', shardOf(ticket, 4)), limit: 10 })
    expect(moved.lines.map((l) => l.position)).toEqual([1])
  })

  it('the periodic checkpoint is skipped while no head moved; one written on demand always is', async () => {
    const store = new Store(await freshConnection(engine))
    const node = checkpoints(store)
    await send(store, 4, 'default', 'idle-0')
    const first = await node.writeIfMoved()
    expect(first?.partitions.length).toBe(2)
    expect(await node.writeIfMoved()).toBeNull()
    await send(store, 4, 'acme', 'idle-1')
    const moved = await node.writeIfMoved()
    expect(moved?.partitions.length).toBe(4)
    expect(await node.writeIfMoved()).toBeNull()
    const onDemand = await node.write()
    expect(onDemand.partitions).toEqual(moved?.partitions)
    const verdict = await node.verifyNode()
    expect(verdict.ok).toBe(true)
    expect(verdict.checkpoints.count).toBe(3)
  })
})
