/**
 * Issue 27, partitioned chains: three real server processes on one PostgreSQL schema with BERNSTEIN_CHAIN_SHARDS=4,
 * sends spread over all three at once. No partition forks (each is one unbroken Bernstein chain, its positions
 * 1..n), every acknowledged send has its tracker-audit entry and its receipt row, the signed checkpoint verifies
 * with `lineage verify-node`, and every replica's /metrics has the lock hold-time histogram. Ranked among each
 * other (replica slots), the three draw the ids of the tasks they create in disjoint home shards.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { shardOf } from '../../src/lineage/partitions.js'
import { type ServerProcess, runCli, spawnServer } from '../helpers/cli.js'
import { OPERATOR, PG_URL, type Schema, announceSkip, createSchema, http, pgSuiteName, waitUntil } from './support.js'

announceSkip('test/pg/partitioned-replicas.test.ts')

const SENDS = 48
const SHARDS = 4

describe.skipIf(!PG_URL)(pgSuiteName('partitioned chains written by three replicas'), () => {
  let schema: Schema
  let dataDir: string
  let env: Record<string, string>
  const replicas: ServerProcess[] = []

  beforeAll(async () => {
    schema = await createSchema('pr')
    dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-partitions-'))
    env = {
      DATABASE_URL: schema.url({ applicationName: 'bernstein-pr' }),
      BERNSTEIN_DATA_DIR: dataDir,
      BERNSTEIN_AUTH_TOKEN: OPERATOR,
      BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN: '0',
      BERNSTEIN_RATE_LIMIT_READ_PER_MIN: '0',
      BERNSTEIN_DB_POOL_SIZE: '6',
      BERNSTEIN_DB_CONNECT_TIMEOUT_MS: '30000',
      BERNSTEIN_REQUEST_DEADLINE_MS: '60000',
      BERNSTEIN_CHAIN_SHARDS: String(SHARDS),
      BERNSTEIN_CHECKPOINT_INTERVAL_MS: '0',
    }
    // One first, so the others find the schema migrated and the keys made (multi-replica.test.ts races those).
    replicas.push(await spawnServer(env))
    replicas.push(...(await Promise.all([spawnServer(env), spawnServer(env)])))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop('SIGTERM')))
    await schema?.drop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  }, 60_000)

  it('concurrent sends through three replicas never fork a partition, and the node verifies', async () => {
    const answers = await Promise.all(
      Array.from({ length: SENDS }, (_, i) =>
        http((replicas[i % replicas.length] as ServerProcess).url, 'POST', '/a2a/tasks/send', { sender: 'peer', message: `partitioned ${i}` }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201))

    const rows = await schema.query<{ chain: string; n: string; min: number; max: number }>(
      'select chain, count(*) as n, min(position) as min, max(position) as max from chain_entries group by chain order by chain',
    )
    // Every partition is positions 1..n without a gap (the primary key forbids two entries at one position).
    for (const r of rows) expect({ chain: r.chain, min: r.min, max: r.max }).toEqual({ chain: r.chain, min: 1, max: Number(r.n) })
    const total = (prefix: string) => rows.filter((r) => r.chain.startsWith(prefix)).reduce((sum, r) => sum + Number(r.n), 0)
    expect(total('tracker-audit')).toBe(SENDS)
    expect(total('spine:')).toBe(SENDS)
    // The sends spread over more than one partition of each chain.
    expect(rows.filter((r) => r.chain.startsWith('tracker-audit')).length).toBeGreaterThan(1)
    expect(rows.filter((r) => r.chain.startsWith('spine:')).length).toBeGreaterThan(1)

    const checkpoint = await runCli(['--json', 'lineage', 'checkpoint'], env)
    expect(checkpoint.code, checkpoint.stdout + checkpoint.stderr).toBe(0)
    const verified = await runCli(['--json', 'lineage', 'verify-node'], env)
    expect(verified.code, verified.stdout + verified.stderr).toBe(0)
    const verdict = JSON.parse(verified.stdout) as { ok: boolean; partitions: { ok: boolean; entries: number; kind: string }[]; checkpoints: { count: number } }
    expect(verdict.ok).toBe(true)
    expect(verdict.partitions.length).toBe(rows.length)
    expect(verdict.partitions.filter((p) => p.kind === 'tracker-audit').reduce((sum, p) => sum + p.entries, 0)).toBe(SENDS)
    expect(verdict.checkpoints.count).toBe(1)
  }, 180_000)

  it('every replica reports how long writes held a partition head', async () => {
    for (const replica of replicas) {
      const metrics = await http(replica.url, 'GET', '/metrics')
      expect(metrics.status).toBe(200)
      const count = /^bernstein_chain_lock_hold_seconds_count (\d+)/m.exec(metrics.text)
      expect(Number(count?.[1])).toBeGreaterThan(0)
    }
  })

  it('ranked among each other, the replicas create tasks in disjoint home shards that together cover all', async () => {
    const gauge = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1])
    // Each replica ranks itself every 2 s; the first ones started before the others counted fewer.
    await waitUntil('every replica counts three', async () => {
      const texts = await Promise.all(replicas.map(async (r) => (await http(r.url, 'GET', '/metrics')).text))
      return texts.every((text) => gauge(text, 'bernstein_replicas') === 3)
    })
    const homes = await Promise.all(replicas.map(async (r) => gauge((await http(r.url, 'GET', '/metrics')).text, 'bernstein_home_shards')))
    expect(homes.reduce((a, b) => a + b, 0)).toBe(SHARDS)

    const shardsOf = await Promise.all(
      replicas.map(async (replica) => {
        const shards = new Set<number>()
        for (let i = 0; i < 12; i++) {
          const sent = await http(replica.url, 'POST', '/a2a/tasks/send', { sender: 'peer', message: `home ${i}` })
          expect(sent.status).toBe(201)
          const body = sent.json as { id: string; bernstein_task_id: string }
          shards.add(shardOf(body.bernstein_task_id, SHARDS))
          shards.add(shardOf(body.id, SHARDS))
        }
        return shards
      }),
    )
    for (const [i, mine] of shardsOf.entries()) {
      expect(mine.size).toBe(homes[i])
      for (const [j, theirs] of shardsOf.entries()) if (i !== j) expect([...mine].filter((shard) => theirs.has(shard))).toEqual([])
    }
  }, 120_000)
})
