/**
 * Three real server processes on one PostgreSQL schema and one shared data directory (keys, audit key), started
 * at the same moment against an empty schema, then driven concurrently through all three: creates, claim-next,
 * progress and completion hopping between replicas, CAS races, and every v0 delivery sent to all three at once.
 * Afterwards the database must show each task claimed exactly once, every acknowledged write, no duplicate
 * delegation, and unbroken chains; and the replicas must publish byte-identical identity documents.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrationProvider } from '../../src/store/migrations/index.js'
import { TRACKER_AUDIT_CHAIN } from '../../src/lineage/audit-trail.js'
import { isPartitionOf } from '../../src/lineage/partitions.js'
import { RECEIPT_SPINE_CHAIN } from '../../src/receipts/receipt-attestor.js'
import { type ServerProcess, spawnServer } from '../helpers/cli.js'
import { OPERATOR, PG_URL, type Schema, announceSkip, createSchema, http, pgSuiteName } from './support.js'

announceSkip('test/pg/multi-replica.test.ts')

const ROLE = 'mr-worker'
const TASKS = 60
const WORKERS = 9
const CREATORS = 6
const V0_DELIVERIES = 15
const CAS_TASKS = 8
const WELL_KNOWN = ['/.well-known/agent.json', '/.well-known/agent-card.json', '/.well-known/a2a-capability-card.json', '/.well-known/agent.json/keys']

interface Claim {
  readonly id: string
  readonly worker: number
}

interface V0Result {
  readonly remoteId: string
  readonly answers: readonly { status: number; delivery: string | null; body: Record<string, unknown> }[]
}

describe.skipIf(!PG_URL)(pgSuiteName('three server replicas on one PostgreSQL'), () => {
  let schema: Schema
  let dataDir: string
  let replicas: ServerProcess[] = []
  const at = (i: number): string => (replicas[i % replicas.length] as ServerProcess).url

  // What the clients were told (acknowledged), filled by the workload test and checked by the others.
  const created: string[] = []
  const claims: Claim[] = []
  const completed = new Map<string, number>()
  const v0: V0Result[] = []
  const cas: { id: string; statuses: number[] }[] = []
  const failures: string[] = []

  beforeAll(async () => {
    schema = await createSchema('mr')
    dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-replicas-'))
    const env = {
      DATABASE_URL: schema.url({ applicationName: 'bernstein-mr' }),
      BERNSTEIN_DATA_DIR: dataDir,
      BERNSTEIN_AUTH_TOKEN: OPERATOR,
      BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN: '0',
      BERNSTEIN_RATE_LIMIT_READ_PER_MIN: '0',
      BERNSTEIN_PUBLIC_BASE_URL: 'http://bernstein.lb.test',
      BERNSTEIN_DB_POOL_SIZE: '6',
      // A busy CI machine must not turn pool waits into 503s here: this suite is about correctness, fault.test.ts about outages.
      BERNSTEIN_DB_CONNECT_TIMEOUT_MS: '30000',
      // Nor a slow answer into the request deadline's 503 (drain-and-shedding.test.ts tests that deadline).
      BERNSTEIN_REQUEST_DEADLINE_MS: '60000',
      BERNSTEIN_FEDERATION_POLL_MS: '0',
    }
    // All three at once, against an empty schema and an empty data directory: concurrent migrations, key
    // creation and capability-card issuance.
    const started = await Promise.allSettled([0, 1, 2].map(() => spawnServer(env)))
    replicas = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
    const failed = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []))
    expect(failed).toEqual([])
  }, 120_000)

  afterAll(async () => {
    const exits = await Promise.all(replicas.map((r) => r.stop('SIGTERM')))
    await schema?.drop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    // A graceful stop: every replica drained and exited 0.
    expect(exits.map((e) => e.code)).toEqual(replicas.map(() => 0))
  }, 60_000)

  it('started together on an empty schema: each migration applied once, one key set, one capability card', async () => {
    const names = Object.keys(await migrationProvider('postgres').getMigrations()).sort()
    const applied = await schema.query<{ name: string }>('select name from kysely_migration order by name')
    expect(applied.map((r) => r.name)).toEqual(names)
    for (const file of ['keys/agent-card.pem', 'keys/receipt.pem', 'keys/capability-card.pem', 'audit.key'])
      expect(existsSync(join(dataDir, file)), file).toBe(true)
  })

  it('serves byte-identical agent card, capability card and JWKS from every replica', async () => {
    for (const path of WELL_KNOWN) {
      const bodies = await Promise.all(replicas.map((r) => http(r.url, 'GET', path)))
      for (const b of bodies) expect(b.status, `${path} status`).toBe(200)
      expect(bodies[0]?.text.length, path).toBeGreaterThan(50)
      expect(new Set(bodies.map((b) => b.text)).size, `${path} differs between replicas`).toBe(1)
      expect(new Set(bodies.map((b) => b.headers.get('etag'))).size, `${path} etag`).toBe(1)
    }
    // Issued once, by whichever replica got there first, and shared through the database.
    const cards = await schema.query<{ n: string }>("select count(*) as n from node_documents where name = 'capability-card'")
    expect(cards[0]?.n).toBe('1')
  })

  it('a concurrent workload through all three replicas', async () => {
    const started = performance.now()
    // CAS targets exist before the race starts.
    const casIds: string[] = []
    for (let i = 0; i < CAS_TASKS; i++) {
      const r = await http(at(i), 'POST', '/tasks', { title: `cas ${i}`, role: 'mr-cas' })
      expect(r.status).toBe(201)
      casIds.push((r.json as { id: string }).id)
    }

    let nextIndex = 0
    let creatorsDone = false
    const creator = async (): Promise<void> => {
      for (let i = nextIndex++; i < TASKS; i = nextIndex++) {
        const r = await http(at(i), 'POST', '/tasks', { title: `replicated task ${i}`, role: ROLE, description: `made through replica ${i % 3}` })
        if (r.status === 201) created.push((r.json as { id: string }).id)
        else failures.push(`create ${i}: ${r.status} ${r.text}`)
      }
    }
    const worker = async (w: number): Promise<void> => {
      for (;;) {
        const finished = creatorsDone
        const next = await http(at(w), 'GET', `/tasks/next/${ROLE}?agent_id=worker-${w}`)
        if (next.status === 204) {
          if (finished) return
          await new Promise((r) => setTimeout(r, 15))
          continue
        }
        if (next.status !== 200) {
          failures.push(`next (worker ${w}): ${next.status} ${next.text}`)
          return
        }
        const id = (next.json as { id: string }).id
        claims.push({ id, worker: w })
        // Progress and completion go through the two other replicas.
        const progress = await http(at(w + 1), 'POST', `/tasks/${id}/progress`, { message: `worker ${w} on it`, percent: 50 })
        if (progress.status !== 200) failures.push(`progress ${id}: ${progress.status} ${progress.text}`)
        const done = await http(at(w + 2), 'POST', `/tasks/${id}/complete`, { result_summary: `done by worker ${w}` })
        if (done.status === 200) completed.set(id, w)
        else failures.push(`complete ${id}: ${done.status} ${done.text}`)
      }
    }
    const deliver = async (k: number): Promise<void> => {
      const remoteId = `remote-${k}`
      const body = JSON.stringify({
        sender: { name: 'peer-mr', description: 'a delegating peer', capabilities: ['code_review'], endpoint: 'http://peer.test' },
        task: { id: remoteId, message: `delegated work ${k}`, role: 'mr-v0' },
      })
      const answers = await Promise.all(
        replicas.map(async (r) => {
          const res = await http(r.url, 'POST', '/a2a/v0/tasks', undefined, { raw: body })
          return { status: res.status, delivery: res.headers.get('bernstein-delivery'), body: res.json as Record<string, unknown> }
        }),
      )
      v0.push({ remoteId, answers })
    }
    const race = async (id: string): Promise<void> => {
      const answers = await Promise.all(replicas.map((r) => http(r.url, 'POST', `/tasks/${id}/claim?expected_version=1`, {})))
      cas.push({ id, statuses: answers.map((a) => a.status).sort() })
    }

    const creators = Promise.all(Array.from({ length: CREATORS }, () => creator())).then(() => {
      creatorsDone = true
    })
    await Promise.all([
      creators,
      ...Array.from({ length: WORKERS }, (_, w) => worker(w)),
      ...Array.from({ length: V0_DELIVERIES }, (_, k) => deliver(k)),
      ...casIds.map((id) => race(id)),
    ])
    const seconds = (performance.now() - started) / 1000
    const requests = CAS_TASKS * 4 + TASKS * 4 + V0_DELIVERIES * 3
    console.log(`[multi-replica] ${requests}+ requests over 3 replicas in ${seconds.toFixed(1)} s (${(requests / seconds).toFixed(0)} req/s)`)
    expect(failures).toEqual([])
    expect(created).toHaveLength(TASKS)
  }, 180_000)

  it('claim-next handed every task to exactly one worker, and every acknowledged write is stored', async () => {
    expect(claims).toHaveLength(TASKS)
    expect(new Set(claims.map((c) => c.id)).size).toBe(TASKS)
    expect(new Set(claims.map((c) => c.id))).toEqual(new Set(created))
    // Work was spread: more than one worker and more than one replica handed out tasks.
    expect(new Set(claims.map((c) => c.worker % 3)).size).toBe(3)
    const rows = await schema.query<{ id: string; status: string; version: number; assigned_agent: string; result_summary: string; progress_log: string }>(
      'select id, status, version, assigned_agent, result_summary, progress_log from tasks where role = $1',
      [ROLE],
    )
    expect(rows).toHaveLength(TASKS)
    for (const row of rows) {
      const worker = completed.get(row.id)
      expect(worker, row.id).toBeDefined()
      expect(row).toMatchObject({ status: 'done', version: 4, assigned_agent: `worker-${worker}`, result_summary: `done by worker ${worker}` })
      expect(JSON.parse(row.progress_log)).toMatchObject([{ message: `worker ${worker} on it`, percent: 50 }])
    }
  })

  it('version checks hold across processes: one claim per expected version wins, the others get 409', async () => {
    expect(cas).toHaveLength(CAS_TASKS)
    for (const race of cas) expect(race.statuses, race.id).toEqual([200, 409, 409])
    const rows = await schema.query<{ status: string; version: number }>("select status, version from tasks where role = 'mr-cas'")
    expect(rows).toHaveLength(CAS_TASKS)
    for (const row of rows) expect(row).toEqual({ status: 'claimed', version: 2 })
  })

  it('v0 deliveries sent to all three replicas at once are accepted once each: one ledger row, one task', async () => {
    expect(v0).toHaveLength(V0_DELIVERIES)
    for (const { remoteId, answers } of v0) {
      expect(
        answers.map((a) => a.status),
        `${remoteId}: ${JSON.stringify(answers)}\n${replicas.map((r) => r.output()).join('\n')}`,
      ).toEqual([202, 202, 202])
      expect(answers.map((a) => a.delivery).sort(), remoteId).toEqual(['duplicate', 'duplicate', 'new'])
      const first = answers[0]?.body ?? {}
      for (const a of answers) expect(a.body, remoteId).toEqual(first)
      expect(first['remote_task_id']).toBe(remoteId)
    }
    const ledger = await schema.query<{ remote_task_id: string; n: string }>(
      'select remote_task_id, count(*) as n from federated_inbound group by remote_task_id',
    )
    expect(ledger).toHaveLength(V0_DELIVERIES)
    expect(ledger.every((r) => r.n === '1')).toBe(true)
    // The losing deliveries rolled back everything they had started: no orphan task or A2A task.
    const tasks = await schema.query<{ n: string }>("select count(*) as n from tasks where role = 'mr-v0'")
    const a2a = await schema.query<{ n: string }>("select count(*) as n from a2a_tasks where sender = 'peer-mr'")
    expect([tasks[0]?.n, a2a[0]?.n]).toEqual([String(V0_DELIVERIES), String(V0_DELIVERIES)])
  })

  it('the chains have no fork, gap or duplicate position, and tracker-audit verifies end to end on every replica', async () => {
    // One entry per acknowledged change: creates, claims, progress and completions, v0 acceptances, CAS winners.
    const expectedAudit = CAS_TASKS * 2 + TASKS * 4 + V0_DELIVERIES
    for (const r of replicas) {
      const verdict = await http(r.url, 'GET', '/lineage/tracker-audit/verify')
      expect(verdict.status).toBe(200)
      expect(verdict.json).toEqual({ ok: true, entries: expectedAudit, failure: null })
    }
    // Every partition of both chains (128 shards per tenant by default on PostgreSQL), each a chain of its own.
    const heads = await schema.query<{ chain: string; length: number; head_hash: string }>('select chain, length, head_hash from chain_heads order by chain')
    const kindOf = (chain: string) => [TRACKER_AUDIT_CHAIN, RECEIPT_SPINE_CHAIN].find((kind) => isPartitionOf(chain, kind)) ?? chain
    expect([...new Set(heads.map((h) => kindOf(h.chain)))].sort()).toEqual([RECEIPT_SPINE_CHAIN, TRACKER_AUDIT_CHAIN].sort())
    for (const head of heads) {
      const positions = await schema.query<{ position: number }>('select position from chain_entries where chain = $1 order by position', [head.chain])
      expect(
        positions.map((p) => p.position),
        head.chain,
      ).toEqual(Array.from({ length: head.length }, (_, i) => i + 1))
      const last = await schema.query<{ entry_hash: string }>('select entry_hash from chain_entries where chain = $1 and position = $2', [
        head.chain,
        head.length,
      ])
      expect(last[0]?.entry_hash, head.chain).toBe(head.head_hash)
    }
    const entriesOf = (kind: string) => heads.filter((h) => kindOf(h.chain) === kind).reduce((sum, h) => sum + Number(h.length), 0)
    expect(entriesOf(TRACKER_AUDIT_CHAIN)).toBe(expectedAudit)
    // One acceptance receipt per accepted delegation on the spine.
    expect(entriesOf(RECEIPT_SPINE_CHAIN)).toBe(V0_DELIVERIES)
  })

  it('the replicas are still the same three processes, and still agree on the published documents', async () => {
    for (const r of replicas) expect(r.alive(), r.output()).toBe(true)
    for (const path of WELL_KNOWN) {
      const bodies = await Promise.all(replicas.map((r) => http(r.url, 'GET', path)))
      expect(new Set(bodies.map((b) => b.text)).size, path).toBe(1)
    }
  })
})
