/**
 * The systems under test, each started as its own process on loopback:
 * - bernstein-a2a itself (the build's `dist/bundle/bernstein-a2a.mjs serve` when the build is there, else the sources through tsx)
 *   with production settings: authentication on, response validation on, rate limits off, log level warn;
 * - bare Express 5 (the framework's ceiling) and the official A2A JS SDK (what users would pick instead), both from
 *   scripts/bench through tsx;
 * - for start-up only, a bare node:http server (how fast this machine starts any Node server).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { bundlePath } from '../bundle.js'
import { RESET_PATH } from './baseline-reset.js'
import { type RunningProcess, freePort, startProcess } from './proc.js'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const BENCH_TOKEN = 'bench-operator-token-0123456789abcdef'
export const AUTH_HEADERS: Readonly<Record<string, string>> = { authorization: `Bearer ${BENCH_TOKEN}` }

export interface ServerCommand {
  readonly command: string
  readonly args: readonly string[]
  readonly compiled: boolean
}

/** How bernstein-a2a is launched: the build when present (its single-file bundle, as `bin/` runs it), else TypeScript through tsx. */
export function bernsteinCommand(preferCompiled: boolean): ServerCommand {
  const compiled = [bundlePath(ROOT), join(ROOT, 'dist', 'cli', 'main.js')].find((entry) => existsSync(entry))
  if (preferCompiled && compiled !== undefined) return { command: process.execPath, args: [compiled, 'serve'], compiled: true }
  return { command: process.execPath, args: ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'serve'], compiled: false }
}

export interface BernsteinOptions {
  readonly name: string
  readonly command: ServerCommand
  readonly dataDir: string
  readonly databaseUrl?: string
  readonly sqliteSynchronous?: 'full' | 'normal'
  /** More environment for the node (the partition setting of the replica case, the v1 conformance agent's flag). */
  readonly env?: Readonly<Record<string, string>>
}

export async function startBernstein(options: BernsteinOptions): Promise<RunningProcess> {
  const port = await freePort()
  return startProcess({
    name: options.name,
    command: options.command.command,
    args: options.command.args,
    port,
    readyPath: '/health/ready',
    env: {
      NODE_ENV: 'production',
      BERNSTEIN_HOST: '127.0.0.1',
      BERNSTEIN_PORT: String(port),
      BERNSTEIN_DATA_DIR: options.dataDir,
      BERNSTEIN_AUTH_TOKEN: BENCH_TOKEN,
      BERNSTEIN_RATE_LIMIT_WRITE_PER_MIN: '0',
      BERNSTEIN_RATE_LIMIT_READ_PER_MIN: '0',
      BERNSTEIN_LOG_LEVEL: 'warn',
      BERNSTEIN_SQLITE_SYNCHRONOUS: options.sqliteSynchronous ?? 'full',
      ...(options.databaseUrl !== undefined && { DATABASE_URL: options.databaseUrl }),
      ...options.env,
    },
  })
}

async function startScript(name: string, script: string, env: Readonly<Record<string, string>> = {}): Promise<RunningProcess> {
  const port = await freePort()
  return startProcess({
    name,
    command: process.execPath,
    // --expose-gc: a reset collects the emptied store's garbage at once (baseline-reset.ts).
    args: ['--expose-gc', '--import', 'tsx', join(ROOT, 'scripts', 'bench', script)],
    port,
    readyPath: '/health/ready',
    env: { NODE_ENV: 'production', PORT: String(port), ...env },
  })
}

/**
 * The machine's own start-up speed, for reading the absolute start-up figure: a bare node:http server (no module
 * to load, no database) spawned and polled exactly as bernstein-a2a is. The same code drifts by a factor of two
 * or three between runs here, and this reference drifts with it.
 */
const BARE_NODE_SERVER = "require('node:http').createServer((_, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')"

export async function startBareNode(): Promise<RunningProcess> {
  const port = await freePort()
  return startProcess({
    name: 'bare node:http',
    command: process.execPath,
    args: ['-e', BARE_NODE_SERVER],
    port,
    readyPath: '/health/ready',
    env: { PORT: String(port) },
  })
}

export const startExpress = (): Promise<RunningProcess> => startScript('express', 'express-server.ts')
export const startSdk = (): Promise<RunningProcess> => startScript('a2a-sdk', 'sdk-server.ts')

/** The SDK's own migration tool (`a2a-db`, the package's bin), which creates the durable store's tables. */
const SDK_MIGRATE = join(ROOT, 'node_modules', '@a2a-js', 'sdk', 'dist', 'cli', 'a2a_db.js')

/**
 * The SDK with its durable `DatabaseTaskStore` on SQLite (WAL, synchronous=FULL) in `file`, migrated first with
 * the SDK's own `a2a-db upgrade`, as its documentation has an operator do.
 */
export async function startSdkDurable(file: string): Promise<RunningProcess> {
  execFileSync(process.execPath, [SDK_MIGRATE, 'upgrade', '--url', `sqlite:${file}`], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] })
  return startScript('a2a-sdk sqlite', 'sdk-server.ts', { SDK_SQLITE_FILE: file })
}

/**
 * Empties a baseline's in-memory store (bare Express or the SDK) and collects its garbage, so that every run of the
 * send case measures it from the same empty start. Kept growing, the SDK slowed from 2352 to 1227 sends/s over
 * three rounds (its heap at 300-370 MB), which made its ratios depend on how many rounds ran before. This server's
 * own store is not emptied: it keeps growing on disk, as a node's database does.
 */
export async function resetBaseline(proc: RunningProcess): Promise<void> {
  const response = await fetch(`${proc.url}${RESET_PATH}`, { method: 'POST' })
  if (response.status !== 204) throw new Error(`${proc.name}: reset answered ${response.status}`)
}

/** Temporary directories made by this run, removed by {@link cleanupDirs}. */
const dirs: string[] = []

export function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `bernstein-bench-${label}-`))
  dirs.push(dir)
  return dir
}

export function cleanupDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** A dedicated PostgreSQL database for one run (dropped by `drop`), on the server of TEST_DATABASE_URL. */
export interface BenchDatabase {
  readonly url: string
  drop(): Promise<void>
}

let databases = 0

export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `bernstein_bench_${process.pid}_${Date.now().toString(36)}_${++databases}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(adminUrl)
  url.pathname = '/' + name
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    },
  }
}
