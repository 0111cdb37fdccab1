/**
 * `npm run faults [-- --quick] [-- --engine sqlite|postgres|both] [-- --only crash,outage,disk,slow,overload]
 * [-- --seed N] [-- --soak [--soak-seconds S]]`
 *
 * The fault suite of docs/reliability.md against real `serve` processes: crash points (SIGKILL under mixed load,
 * restart, invariants), the database cut, blackholed and stalled (PostgreSQL through a TCP proxy), disk full and a
 * read-only data directory (SQLite on a small tmpfs; needs root to mount), slow clients, and overload. Prints a
 * report per scenario and exits 1 when an invariant failed. `--quick` is the scaled-down mode the test suite runs
 * (test/faults/); the default is the full mode; `--soak` runs only the soak (an hour at half the sustainable rate).
 * PostgreSQL needs TEST_DATABASE_URL; `--engine both` (the default when it is set) runs each scenario on both.
 */
import { ensureBuilt } from './ensure-built.mjs'
import { type FaultEngine, PG_URL, type ScenarioReport, formatReport } from './faults/common.js'
import { crashPoints } from './faults/crash.js'
import { databaseOutage } from './faults/database-outage.js'
import { diskFull, mountUnavailableReason, readOnlyStorage } from './faults/disk.js'
import { overload } from './faults/overload.js'
import { slowClients } from './faults/slow-clients.js'
import { soak } from './faults/soak.js'
import { repoRoot as ROOT } from '../test/helpers/vectors.js'

const ALL = ['crash', 'outage', 'disk', 'slow', 'overload'] as const
type ScenarioName = (typeof ALL)[number]

interface Options {
  readonly quick: boolean
  readonly soak: boolean
  readonly soakSeconds: number
  readonly engines: readonly FaultEngine[]
  readonly only: ReadonlySet<ScenarioName>
  readonly seed: number
}

function parseArgs(argv: readonly string[]): Options {
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name)
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(name + '='))?.slice(name.length + 1)
  }
  const engine = value('--engine') ?? (PG_URL ? 'both' : 'sqlite')
  if (!['sqlite', 'postgres', 'both'].includes(engine)) throw new Error(`--engine must be sqlite, postgres or both, got '${engine}'`)
  const engines: FaultEngine[] = engine === 'both' ? ['sqlite', 'postgres'] : [engine as FaultEngine]
  if (engines.includes('postgres') && !PG_URL) throw new Error('--engine postgres needs TEST_DATABASE_URL=postgres://user@host:port/db')
  const only = (value('--only')?.split(',') ?? [...ALL]).map((s) => s.trim())
  for (const name of only) if (!(ALL as readonly string[]).includes(name)) throw new Error(`--only: unknown scenario '${name}' (${ALL.join(', ')})`)
  const seedText = value('--seed')
  const seed = seedText === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(seedText)
  if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got '${seedText}'`)
  const soakSeconds = Number(value('--soak-seconds') ?? 3600)
  if (!(soakSeconds > 0)) throw new Error('--soak-seconds must be positive')
  return { quick: argv.includes('--quick'), soak: argv.includes('--soak'), soakSeconds, engines, only: new Set(only as ScenarioName[]), seed }
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2))
  ensureBuilt(ROOT, { reason: 'npm run faults' })
  const log = (line: string): void => console.log(`  · ${line}`)
  const mode = options.soak ? `soak (${options.soakSeconds} s)` : options.quick ? 'quick' : 'full'
  console.log(`bernstein-a2a fault suite: ${mode}, engines ${options.engines.join(', ')}, seed ${options.seed}`)
  const reports: ScenarioReport[] = []
  const run = async (name: string, scenario: () => Promise<ScenarioReport>): Promise<void> => {
    console.log(`\n▶ ${name}`)
    const started = performance.now()
    let report: ScenarioReport
    try {
      report = await scenario()
    } catch (error) {
      report = { scenario: name, engine: 'sqlite', figures: [], failures: [`the scenario itself failed: ${(error as Error).stack ?? error}`] }
    }
    report.figures.push(['wall time', `${((performance.now() - started) / 1000).toFixed(1)} s`])
    reports.push(report)
    console.log(formatReport(report))
  }
  const base = { quick: options.quick, log }
  if (options.soak) {
    for (const engine of options.engines) await run(`soak (${engine})`, () => soak(engine, { ...base, seconds: options.soakSeconds }))
  } else {
    for (const engine of options.engines) {
      if (options.only.has('crash')) await run(`crash points (${engine})`, () => crashPoints(engine, { ...base, seed: options.seed }))
      if (options.only.has('outage') && engine === 'postgres') await run('database cut, blackholed and stalled (postgres)', () => databaseOutage(base))
      if (options.only.has('disk') && engine === 'postgres') await run('read-only database (postgres)', () => readOnlyStorage('postgres', base))
      if (options.only.has('overload')) await run(`overload (${engine})`, () => overload(engine, base))
    }
    if (options.only.has('disk')) {
      const unavailable = mountUnavailableReason()
      if (unavailable === null) {
        await run('disk full (sqlite)', () => diskFull(base))
        await run('read-only data directory (sqlite)', () => readOnlyStorage('sqlite', base))
      } else if (process.env['CI'] === 'true') {
        reports.push({
          scenario: 'disk full and read-only storage',
          engine: 'sqlite',
          figures: [],
          failures: [`cannot mount a tmpfs under CI: ${unavailable}`],
        })
      } else console.log(`\n– disk full and read-only storage skipped: ${unavailable}`)
    }
    if (options.only.has('slow')) await run('slow clients (sqlite)', () => slowClients(base))
  }
  const failed = reports.filter((r) => r.failures.length > 0)
  console.log(
    `\n${reports.length - failed.length} of ${reports.length} scenarios held${failed.length > 0 ? `; failed: ${failed.map((r) => `${r.scenario} (${r.engine})`).join(', ')}` : ''}`,
  )
  return failed.length === 0 ? 0 : 1
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error((error as Error).message ?? error)
    process.exit(2)
  },
)
