/**
 * `npm run bench [-- --quick] [-- --only send,get,lifecycle,replicas,v1,scale,micro,startup] [-- --rounds N
 * --duration S --connections C --no-build --partitions P --partition-env NAME --v1-agent-env NAME=VALUE]`
 *
 * Measures bernstein-a2a side by side with what users would pick instead (the official A2A JS SDK) and with the
 * framework's ceiling (bare Express 5), every system in its own process on loopback, driven by autocannon with the
 * same connections and duration, interleaved round by round; sends on 1 and 3 replicas sharing one PostgreSQL, on one
 * partition and on the default partitioning; the A2A v1.0 binding beside the SDK (each v1 case only where the node supports it);
 * then the in-process micro-benchmarks against the raw node:crypto primitives. Prints a table with ratios and PASS/MISS targets, and writes bench/results.json and
 * bench/results.md (bench/results-<cases>.* for a run limited by --only). It fails (exit 1) only when the harness
 * itself fails: a system that does not start, or answers errors; never because a figure is low.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import {
  type CaseSummary,
  JsonRpc,
  type Settings,
  type Subject,
  TASK_CREATE,
  createMany,
  getRequests,
  idField,
  lifecycleRequests,
  runCase,
  sdkTaskId,
  sendMessageBody,
  sendRequests,
  SEND_BODY,
} from './bench/cases.js'
import { type MicroResult, cardVerification, chainVerification, peerSignatures } from './bench/micro.js'
import type { RunningProcess } from './bench/proc.js'
import { type LockHold, LOCK_HOLD_METRIC, lockHold, nodeReads, partitionSettings, replicaSubjects } from './bench/replicas.js'
import { type Report, markdown, ratiosAndTargets } from './bench/report.js'
import { POSTGRES_CHAIN_SHARDS } from '../src/config.js'
import { seedTasks } from './bench/seed.js'
import { median } from './bench/stats.js'
import {
  AUTH_HEADERS,
  type BenchDatabase,
  ROOT,
  type ServerCommand,
  bernsteinCommand,
  cleanupDirs,
  createBenchDatabase,
  resetBaseline,
  startBareNode,
  startBernstein,
  startExpress,
  startSdk,
  startSdkDurable,
  tempDir,
} from './bench/systems.js'
import { COMPLETE_PREFIX, type FanOutResult, V1_PATH, completedTask, conformanceAgentAbsent, fanOut } from './bench/v1.js'

interface Options {
  readonly quick: boolean
  readonly only: ReadonlySet<string>
  readonly build: boolean
  readonly settings: Settings
  readonly sizes: readonly number[]
  readonly chainEntries: number
  readonly cardIterations: number
  readonly microRounds: number
  readonly startups: number
  readonly seedBudgetSeconds: number
  /** Partitions of the partitioned replica setting, and the node's variable that sets them. */
  readonly partitions: number
  readonly partitionEnv: string
  /** The node's environment that enables the in-process conformance agent (NAME=VALUE). */
  readonly v1AgentEnv: Readonly<Record<string, string>>
  readonly fanOutSubscribers: number
  readonly fanOutSeconds: number
  /**
   * Seconds of warm-up per process in the replica case: each of three replicas serves a third of the rounds' sends,
   * and with the 2 s of the other cases their CPU per send was still falling by 40 % over the following minute
   * (bench/HISTORY.md, 2026-12-04).
   */
  readonly replicaWarmup: number
}

const ALL_CASES = ['startup', 'send', 'get', 'lifecycle', 'replicas', 'v1', 'scale', 'micro']

function parseArgs(argv: readonly string[]): Options {
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name)
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(name + '='))?.slice(name.length + 1)
  }
  const number = (name: string, fallback: number): number => {
    const raw = value(name)
    if (raw === undefined) return fallback
    const n = Number(raw)
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got '${raw}'`)
    return n
  }
  const quick = argv.includes('--quick')
  const agentEnv = value('--v1-agent-env') ?? 'BERNSTEIN_A2A_CONFORMANCE_AGENT=true'
  const eq = agentEnv.indexOf('=')
  if (eq <= 0) throw new Error(`--v1-agent-env must be NAME=VALUE, got '${agentEnv}'`)
  const only = value('--only')
  const unknown = only?.split(',').filter((c) => !ALL_CASES.includes(c)) ?? []
  if (unknown.length > 0) throw new Error(`--only: unknown case(s) ${unknown.join(', ')}; known: ${ALL_CASES.join(', ')}`)
  return {
    quick,
    only: new Set(only ? only.split(',') : ALL_CASES),
    build: !argv.includes('--no-build'),
    settings: {
      connections: number('--connections', 10),
      duration: number('--duration', quick ? 2 : 10),
      warmup: quick ? 1 : 2,
      rounds: Math.floor(number('--rounds', quick ? 1 : 3)),
    },
    sizes: quick ? [1_000, 10_000] : [1_000, 100_000, 1_000_000],
    chainEntries: 100_000,
    cardIterations: quick ? 2_000 : 10_000,
    microRounds: quick ? 3 : 7,
    startups: quick ? 2 : 5,
    seedBudgetSeconds: quick ? 30 : 240,
    // The partitioned setting is the node's default on PostgreSQL unless told otherwise: the one the targets judge.
    partitions: Math.floor(number('--partitions', POSTGRES_CHAIN_SHARDS)),
    partitionEnv: value('--partition-env') ?? 'BERNSTEIN_CHAIN_SHARDS',
    v1AgentEnv: { [agentEnv.slice(0, eq)]: agentEnv.slice(eq + 1) },
    fanOutSubscribers: 100,
    fanOutSeconds: quick ? 2 : 10,
    replicaWarmup: quick ? 1 : 12,
  }
}

const log = (line: string): void => {
  process.stdout.write(line + '\n')
}

/** The PostgreSQL database of this run, if any (dropped at the end, or on interrupt). */
let db: BenchDatabase | null = null
/** The replica case's databases, one per partition setting (dropped at the end, or on interrupt). */
const replicaDbs: BenchDatabase[] = []

async function dropAll(): Promise<void> {
  const all = [...(db ? [db] : []), ...replicaDbs.splice(0)]
  db = null
  for (const d of all) await d.drop().catch((error: unknown) => log(`could not drop a benchmark database: ${String(error)}`))
}

/** Every process started by this run, so that a failure anywhere still stops them all. */
const running = new Set<RunningProcess>()

async function started(p: Promise<RunningProcess>): Promise<RunningProcess> {
  const proc = await p
  running.add(proc)
  log(`  started ${proc.name.padEnd(28)} pid ${proc.pid}, ready in ${proc.readyMs.toFixed(0)} ms (${proc.readyCpuMs.toFixed(0)} ms of CPU)`)
  return proc
}

async function stopAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()))
  running.clear()
}

function build(): boolean {
  log('building (npm run build) so that bernstein-a2a runs compiled, as in production ...')
  try {
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
    return true
  } catch {
    log('  the build failed: bernstein-a2a runs from its TypeScript sources through tsx instead')
    return false
  }
}

/** Start-up times: bernstein-a2a on a fresh data directory, each start paired with a bare node:http reference. */
interface StartupTimes {
  readonly wall: number[]
  readonly cpu: number[]
  readonly reference: number[]
}

async function startupCase(command: ServerCommand, count: number): Promise<StartupTimes> {
  log('\n## Ready to serve after start (fresh SQLite data directory; each start paired with a bare node:http server)')
  const times: StartupTimes = { wall: [], cpu: [], reference: [] }
  for (let i = 0; i < count; i++) {
    const reference = await started(startBareNode())
    times.reference.push(reference.readyMs)
    await reference.stop()
    running.delete(reference)
    const proc = await started(startBernstein({ name: 'bernstein-a2a sqlite', command, dataDir: tempDir('startup') }))
    times.wall.push(proc.readyMs)
    times.cpu.push(proc.readyCpuMs)
    await proc.stop()
    running.delete(proc)
  }
  return times
}

interface Bernsteins {
  readonly sqlite: RunningProcess
  readonly normal?: RunningProcess
  readonly postgres?: RunningProcess
}

async function startBernsteins(command: ServerCommand, db: BenchDatabase | null, withNormal: boolean): Promise<Bernsteins> {
  const sqlite = await started(startBernstein({ name: 'bernstein-a2a sqlite', command, dataDir: tempDir('sqlite') }))
  const normal = withNormal
    ? await started(startBernstein({ name: 'bernstein-a2a sqlite NORMAL', command, dataDir: tempDir('normal'), sqliteSynchronous: 'normal' }))
    : undefined
  const postgres = db ? await started(startBernstein({ name: 'bernstein-a2a postgres', command, dataDir: tempDir('pg'), databaseUrl: db.url })) : undefined
  return { sqlite, ...(normal && { normal }), ...(postgres && { postgres }) }
}

async function sendCase(command: ServerCommand, db: BenchDatabase | null, settings: Settings): Promise<CaseSummary> {
  log('\n# starting systems for: send')
  const b = await startBernsteins(command, db, true)
  const express = await started(startExpress())
  const sdk = await started(startSdk())
  const sdkDurable = await started(startSdkDurable(join(tempDir('sdk-sqlite'), 'a2a.sqlite')))
  const rpc = new JsonRpc()
  const durableRpc = new JsonRpc()
  const subjects: Subject[] = [
    { label: 'bernstein-a2a sqlite', proc: b.sqlite, requests: sendRequests(true) },
    ...(b.normal ? [{ label: 'bernstein-a2a sqlite NORMAL', proc: b.normal, requests: sendRequests(true) }] : []),
    ...(b.postgres ? [{ label: 'bernstein-a2a postgres', proc: b.postgres, requests: sendRequests(true) }] : []),
    { label: 'a2a-sdk SendMessage', proc: sdk, requests: rpc.sendMessage(), failures: rpc.failures, prepare: () => resetBaseline(sdk) },
    // Its database keeps growing, as this server's does; the reset only collects garbage.
    {
      label: 'a2a-sdk SendMessage sqlite',
      proc: sdkDurable,
      requests: durableRpc.sendMessage(),
      failures: durableRpc.failures,
      prepare: () => resetBaseline(sdkDurable),
    },
    { label: 'express', proc: express, requests: sendRequests(false), prepare: () => resetBaseline(express) },
  ]
  try {
    return await runCase('send', 'POST /a2a/tasks/send (SDK: SendMessage)', subjects, settings, log)
  } finally {
    await stopAll()
  }
}

const SEND_REQUEST = { method: 'POST', path: '/a2a/tasks/send', headers: { ...AUTH_HEADERS, 'content-type': 'application/json' }, body: SEND_BODY }

async function getCase(command: ServerCommand, db: BenchDatabase | null, settings: Settings, precreate: number): Promise<CaseSummary> {
  log('\n# starting systems for: get')
  const b = await startBernsteins(command, db, false)
  const express = await started(startExpress())
  const sdk = await started(startSdk())
  try {
    const c = settings.connections
    const sqliteIds = await createMany(b.sqlite.url, precreate, SEND_REQUEST, idField, c)
    const pgIds = b.postgres ? await createMany(b.postgres.url, precreate, SEND_REQUEST, idField, c) : []
    const expressIds = await createMany(express.url, precreate, { ...SEND_REQUEST, headers: { 'content-type': 'application/json' } }, idField, c)
    let seq = 0
    const sdkIds = await createMany(
      sdk.url,
      precreate,
      {
        method: 'POST',
        path: '/',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        setupRequest: (r) => ({ ...r, body: sendMessageBody(`pre-${++seq}`) }),
      },
      sdkTaskId,
      c,
    )
    log(`  pre-created ${precreate} tasks on each system`)
    const rpc = new JsonRpc()
    const v1 = new JsonRpc({ path: V1_PATH, headers: AUTH_HEADERS })
    const subjects: Subject[] = [
      { label: 'bernstein-a2a sqlite', proc: b.sqlite, requests: getRequests(sqliteIds, true) },
      { label: 'bernstein-a2a v1 GetTask', proc: b.sqlite, requests: v1.getTask(sqliteIds), failures: v1.failures },
      ...(b.postgres ? [{ label: 'bernstein-a2a postgres', proc: b.postgres, requests: getRequests(pgIds, true) }] : []),
      { label: 'a2a-sdk GetTask', proc: sdk, requests: rpc.getTask(sdkIds), failures: rpc.failures },
      { label: 'express', proc: express, requests: getRequests(expressIds, false) },
    ]
    return await runCase('get', 'GET /a2a/tasks/{id} (SDK: GetTask)', subjects, settings, log)
  } finally {
    await stopAll()
  }
}

async function lifecycleCase(command: ServerCommand, db: BenchDatabase | null, settings: Settings, tasksPerRun: number): Promise<CaseSummary> {
  log('\n# starting systems for: lifecycle')
  const b = await startBernsteins(command, db, true)
  // Each connection alternates claim and complete; a multiple of the connection count keeps every pipeline whole.
  const count = Math.ceil(tasksPerRun / settings.connections) * settings.connections
  const subject = (label: string, proc: RunningProcess): Subject => ({
    label,
    proc,
    requests: lifecycleRequests('bench'),
    amount: count * 2,
    requestsPerOp: 2,
    prepare: async () => {
      await createMany(proc.url, count, TASK_CREATE('bench'), idField, settings.connections)
    },
  })
  const subjects: Subject[] = [
    subject('bernstein-a2a sqlite', b.sqlite),
    ...(b.normal ? [subject('bernstein-a2a sqlite NORMAL', b.normal)] : []),
    ...(b.postgres ? [subject('bernstein-a2a postgres', b.postgres)] : []),
  ]
  try {
    return await runCase('lifecycle', `claim-next + complete (${count} tasks per run; ops = lifecycles)`, subjects, settings, log)
  } finally {
    await stopAll()
  }
}

/** The replica case's figures beyond the load table. */
interface ReplicaOutcome {
  readonly summary: CaseSummary
  readonly lockHold: LockHold[]
  readonly partitionNote: string
}

async function replicaCase(command: ServerCommand, adminUrl: string, options: Options): Promise<ReplicaOutcome> {
  log('\n# starting systems for: replicas (PostgreSQL, one database per partition setting)')
  const settings = partitionSettings(options.partitionEnv, options.partitions)
  const read = nodeReads(options.partitionEnv)
  const howPartitioned = read
    ? `Replicas: partitioned means ${options.partitionEnv}=${options.partitions}, not partitioned ${options.partitionEnv}=1, passed to every replica.`
    : `Replicas: the partition setting is passed as ${options.partitionEnv}=1 or =${options.partitions}, which this node's configuration does not read yet (src/config.ts), so "partitioned" and "not partitioned" ran the same code.`
  const partitionNote = `${howPartitioned} Each replica is warmed alone with all the connections for ${options.replicaWarmup} s before the rounds.`
  log(`  ${partitionNote}`)
  const sets: { setting: (typeof settings)[number]; replicas: RunningProcess[] }[] = []
  for (const setting of settings) {
    const database = await createBenchDatabase(adminUrl)
    replicaDbs.push(database)
    // One data directory for the three, as a shared volume: the same keys on every replica (docs/postgresql.md).
    const dataDir = tempDir(`replicas-${setting.partitions}`)
    const replicas: RunningProcess[] = []
    // The first one migrates the database alone; the others start on it.
    for (let i = 0; i < 3; i++)
      replicas.push(
        await started(startBernstein({ name: `bernstein-a2a pg r${i + 1} ${setting.label}`, command, dataDir, databaseUrl: database.url, env: setting.env })),
      )
    sets.push({ setting, replicas })
  }
  const subjects = sets.flatMap(({ setting, replicas }) => replicaSubjects(setting, replicas, sendRequests(true)))
  try {
    const summary = await runCase(
      'replicas',
      'POST /a2a/tasks/send on replicas sharing one PostgreSQL (connections split between the replicas)',
      subjects,
      { ...options.settings, warmup: options.replicaWarmup },
      log,
    )
    const holds: LockHold[] = []
    for (const { setting, replicas } of sets) holds.push(await lockHold(setting, replicas))
    for (const h of holds)
      log(
        h.meanMs === null
          ? `  lock hold (${h.setting}): n/a: metric ${LOCK_HOLD_METRIC} not present`
          : `  lock hold (${h.setting}): mean ${h.meanMs.toFixed(3)} ms over ${h.samples} writes; derived ceiling ${h.ceiling?.toFixed(0) ?? 'n/a'} writes/s`,
      )
    return { summary, lockHold: holds, partitionNote }
  } finally {
    await stopAll()
  }
}

/** The A2A v1.0 figures beyond the load table: what was skipped and why, and the stream fan-out. */
interface V1Outcome {
  readonly summary: CaseSummary | null
  readonly fanOut: FanOutResult | null
  readonly skipped: string[]
}

async function v1Case(command: ServerCommand, options: Options): Promise<V1Outcome> {
  log('\n# starting systems for: v1 (A2A v1.0 SendMessage with the conformance agent, stream fan-out)')
  const node = await started(
    startBernstein({
      name: 'bernstein-a2a sqlite v1',
      command,
      dataDir: tempDir('v1'),
      // A blocking SendMessage answers at the latest after this, completed or not: the probe's bound.
      env: { ...options.v1AgentEnv, BERNSTEIN_A2A_BLOCKING_TIMEOUT_MS: '3000' },
    }),
  )
  const skipped: string[] = []
  let summary: CaseSummary | null = null
  let fan: FanOutResult | null = null
  try {
    const agentEnv = Object.entries(options.v1AgentEnv)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')
    const absent = await conformanceAgentAbsent(node, 10_000)
    if (absent !== null) {
      skipped.push(`v1 SendMessage: ${absent}; the node ran with ${agentEnv}`)
      log(`  ${skipped[skipped.length - 1]}`)
    } else {
      const sdk = await started(startSdk())
      const ours = new JsonRpc({ path: V1_PATH, headers: AUTH_HEADERS, messagePrefix: COMPLETE_PREFIX, accept: completedTask })
      const theirs = new JsonRpc({ accept: completedTask })
      summary = await runCase(
        'v1',
        'A2A v1.0 SendMessage, blocking, completed in process (bernstein-a2a: the conformance agent)',
        [
          { label: 'bernstein-a2a v1 SendMessage', proc: node, requests: ours.sendMessage(), failures: ours.failures },
          { label: 'a2a-sdk SendMessage', proc: sdk, requests: theirs.sendMessage(), failures: theirs.failures, prepare: () => resetBaseline(sdk) },
        ],
        options.settings,
        log,
      )
    }
    await stopAll()
    // The fan-out's task is moved by a worker through the lifecycle API: on a node without the in-process agent,
    // which would otherwise answer it first.
    const plain = await started(startBernstein({ name: 'bernstein-a2a sqlite v1 streams', command, dataDir: tempDir('v1-streams') }))
    log(
      `\n## stream fan-out: ${options.fanOutSubscribers} subscribers (SubscribeToTask) on one task, artifacts attached to it for up to ${options.fanOutSeconds} s`,
    )
    const result = await fanOut(plain, options.fanOutSubscribers, options.fanOutSeconds)
    if (typeof result === 'string') {
      skipped.push(`stream fan-out: ${result}`)
      log(`  ${result}`)
    } else {
      fan = result
      log(
        `  ${result.produced} artifact events, ${result.deliveredPerSecond.toFixed(0)} events/s delivered to ${result.subscribers} subscribers; ${(result.completeness * 100).toFixed(0)} % of the expected deliveries arrived`,
      )
    }
    return { summary, fanOut: fan, skipped }
  } finally {
    await stopAll()
  }
}

async function scaleCase(
  command: ServerCommand,
  settings: Settings,
  sizes: readonly number[],
  budget: number,
): Promise<{ summary: CaseSummary; seeded: Record<string, number> }> {
  log('\n# seeding stores for: GET latency by store size')
  const seeded: Record<string, number> = {}
  const prepared: { label: string; dataDir: string; ids: string[] }[] = []
  for (const size of sizes) {
    const dataDir = tempDir(`scale-${size}`)
    // Run the server once to migrate and to write one real task pair (the template), then stop it and seed.
    const first = await started(startBernstein({ name: 'bernstein-a2a sqlite', command, dataDir }))
    const [template] = await createMany(first.url, 1, SEND_REQUEST, idField, 1)
    await first.stop()
    running.delete(first)
    const result = seedTasks(join(dataDir, 'bernstein-a2a.sqlite'), template as string, size, budget, 10_000)
    const label = `${size.toExponential(0)} tasks`
    seeded[label] = result.seeded + 1
    log(`  seeded ${result.seeded} task pairs for ${label} in ${result.seconds.toFixed(1)} s${result.seeded < size ? ' (time budget reached)' : ''}`)
    prepared.push({ label, dataDir, ids: result.sampleIds })
  }
  const subjects: Subject[] = []
  for (const p of prepared) {
    const proc = await started(startBernstein({ name: `bernstein-a2a sqlite ${p.label}`, command, dataDir: p.dataDir }))
    subjects.push({ label: p.label, proc, requests: getRequests(p.ids, true) })
  }
  try {
    const summary = await runCase('scale', 'GET /a2a/tasks/{id} by store size (SQLite, ids spread over the table)', subjects, settings, log)
    return { summary, seeded }
  } finally {
    await stopAll()
  }
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2))
  const { settings } = options
  const startedAt = new Date()
  const load = loadavg()
  log(
    `bernstein-a2a benchmark (${options.quick ? 'quick' : 'full'}): ${settings.connections} connections, ${settings.duration} s per run, ${settings.rounds} round(s), warm-up ${settings.warmup} s`,
  )
  const compiled = options.build ? build() : true
  const command = bernsteinCommand(compiled)
  log(`bernstein-a2a runs as: node ${command.args.map((a) => a.replace(ROOT + '/', '')).join(' ')}`)

  const adminUrl = process.env['TEST_DATABASE_URL']?.trim() || null
  const notes: string[] = []
  if (adminUrl) {
    db = await createBenchDatabase(adminUrl)
    log(`PostgreSQL: a dedicated database for this run (dropped at the end)`)
  } else {
    notes.push('PostgreSQL figures are absent: TEST_DATABASE_URL was not set.')
    log('PostgreSQL: skipped (TEST_DATABASE_URL is not set)')
  }

  const cases: CaseSummary[] = []
  const micro: MicroResult[] = []
  let ready: StartupTimes = { wall: [], cpu: [], reference: [] }
  let seeded: Record<string, number> = {}
  let holds: LockHold[] = []
  let fan: FanOutResult | null = null
  const skipped: string[] = []
  try {
    if (options.only.has('startup')) ready = await startupCase(command, options.startups)
    if (options.only.has('send')) cases.push(await sendCase(command, db, settings))
    if (options.only.has('get')) cases.push(await getCase(command, db, settings, options.quick ? 200 : 1000))
    if (options.only.has('lifecycle')) cases.push(await lifecycleCase(command, db, settings, options.quick ? 200 : 600))
    if (options.only.has('replicas')) {
      if (adminUrl === null) skipped.push('replicas: skipped: TEST_DATABASE_URL is not set')
      else {
        const replicas = await replicaCase(command, adminUrl, options)
        cases.push(replicas.summary)
        holds = replicas.lockHold
        notes.push(replicas.partitionNote)
      }
    }
    if (options.only.has('v1')) {
      const v1 = await v1Case(command, options)
      if (v1.summary) cases.push(v1.summary)
      fan = v1.fanOut
      skipped.push(...v1.skipped)
    }
    if (options.only.has('scale')) {
      const scale = await scaleCase(command, settings, options.sizes, options.seedBudgetSeconds)
      cases.push(scale.summary)
      seeded = scale.seeded
    }
    if (options.only.has('micro')) {
      log('\n## micro-benchmarks (in process, interleaved with the raw primitive)')
      micro.push(await cardVerification(options.cardIterations, options.microRounds))
      micro.push(await chainVerification(options.chainEntries, Math.max(3, Math.floor(options.microRounds / 2))))
      micro.push(await peerSignatures(Math.max(200, Math.floor(options.cardIterations / 5)), options.microRounds))
      for (const m of micro) log(`  ${m.name.padEnd(34)} ${m.subjectOps.toFixed(0)}/s vs raw ${m.baselineOps.toFixed(0)}/s`)
    }
  } finally {
    await stopAll()
    await dropAll()
    cleanupDirs()
  }

  if (!command.compiled) notes.push('bernstein-a2a ran from its TypeScript sources through tsx (the build failed or was skipped).')
  notes.push('Express and the A2A SDK run from scripts/bench through tsx (same code after loading; their RSS includes the loader).')
  notes.push('autocannon runs in the harness process on the same machine, so every system shares the cores with its load generator.')
  for (const [label, n] of Object.entries(seeded)) notes.push(`GET by store size: ${n} task pairs stored for "${label}".`)
  const readyMedian = median(ready.wall)
  const startup = {
    readyMs: ready.wall,
    medianMs: readyMedian,
    cpuMs: ready.cpu,
    medianCpuMs: median(ready.cpu),
    referenceMs: ready.reference,
    referenceMedianMs: median(ready.reference),
  }
  const { ratios, targets } = ratiosAndTargets(cases, micro, startup, options.only.has('scale') ? options.sizes : [], {
    lockHold: holds,
    lockHoldMeasured: options.only.has('replicas') && adminUrl !== null,
  })
  const report: Report = {
    generatedAt: startedAt.toISOString(),
    mode: options.quick ? 'quick' : 'full',
    machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown', loadAverage: load },
    settings: { ...settings },
    cases,
    micro,
    startup,
    ratios,
    targets,
    lockHold: holds,
    fanOut: fan,
    skipped,
    notes,
  }
  const dir = join(ROOT, 'bench')
  mkdirSync(dir, { recursive: true })
  // A run of some cases only (--only) must not overwrite the files of the last run of them all.
  const stem = options.only.size === ALL_CASES.length ? 'results' : `results-${[...options.only].sort().join('+')}`
  writeFileSync(join(dir, `${stem}.json`), JSON.stringify(report, null, 2) + '\n')
  const md = markdown(report)
  writeFileSync(join(dir, `${stem}.md`), md)
  log('\n' + md)
  log(`written: bench/${stem}.json, bench/${stem}.md`)
}

const interrupted = (): void => {
  void stopAll()
    .then(() => dropAll())
    .catch(() => {})
    .finally(() => {
      cleanupDirs()
      process.exit(130)
    })
}
process.once('SIGINT', interrupted)
process.once('SIGTERM', interrupted)

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    process.stderr.write(`benchmark harness failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    await stopAll()
    cleanupDirs()
    process.exit(1)
  },
)
