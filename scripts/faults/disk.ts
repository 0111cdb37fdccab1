/**
 * Storage that cannot keep writes. Disk full (SQLite): the data directory lives on a small tmpfs mounted for the
 * scenario (root only; unmounted afterwards) and is filled up while the node runs. Read-only: PostgreSQL's role is
 * switched to read-only transactions while the node runs; SQLite's data directory is remounted read-only between
 * two runs (Linux refuses it while files are open for writing, so a running node cannot meet it). While the storage
 * refuses writes, each is answered `503` with `Retry-After` and a `detail` saying storage is unavailable (never a
 * 500), readiness is red, liveness green; once it takes writes again, readiness turns green and writes succeed
 * without a restart; after a restart nothing acknowledged is lost and the chains verify.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { ServerProcess } from '../../test/helpers/cli.js'
import {
  type Answer,
  type FaultEngine,
  PG_URL,
  type ScenarioOptions,
  type ScenarioReport,
  type Storage,
  call,
  check,
  createStorage,
  eventually,
  newReport,
  schemaUrl,
  serve,
} from './common.js'
import { checkInvariants, emptyAcknowledged } from './invariants.js'

/** Size of the tmpfs: room for the keys, the database and its WAL, and little more. */
const TMPFS_SIZE = '24m'

/** Why a tmpfs cannot be mounted here (not root, no mount), or null when it can. */
export function mountUnavailableReason(): string | null {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root'
  const dir = mkdtempSync(join(tmpdir(), 'bernstein-faults-probe-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' })
    execFileSync('umount', [dir], { stdio: 'pipe' })
    return null
  } catch (error) {
    return `mount -t tmpfs failed: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`
  } finally {
    rmdirSync(dir)
  }
}

interface Mounted {
  readonly dir: string
  remount(mode: 'ro' | 'rw'): void
  unmount(): void
}

function mountTmpfs(): Mounted {
  const dir = mkdtempSync(join(tmpdir(), 'bernstein-faults-tmpfs-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' })
  return {
    dir,
    remount: (mode) => execFileSync('mount', ['-o', `remount,${mode}`, dir], { stdio: 'pipe' }),
    unmount() {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' })
      } finally {
        rmdirSync(dir)
      }
    },
  }
}

/** Fills the file system of `dir` with one file until it is full; returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'filler')
  const fd = openSync(path, 'w')
  const chunk = Buffer.alloc(256 * 1024, 0x61)
  try {
    for (;;) {
      try {
        writeSync(fd, chunk)
      } catch {
        // The last bytes too, so that not even a page is left.
        try {
          for (;;) writeSync(fd, chunk, 0, 4096)
        } catch {
          return path
        }
      }
    }
  } finally {
    closeSync(fd)
  }
}

/**
 * A storage answer as the contract now promises it: 503, Retry-After, and a text naming storage: the `detail` of the
 * node's own shape, or the error's `message` of the A2A v1.0 bindings (HTTP+JSON and JSON-RPC alike).
 */
function isStorage503(a: Answer): boolean {
  const body = a.json as { detail?: unknown; error?: { message?: unknown } } | null
  const text = body?.detail ?? body?.error?.message
  return a.status === 503 && a.headers.get('retry-after') !== null && typeof text === 'string' && /storage/i.test(text)
}

/** What a storage fault scenario does around the common part: make the fault, undo it. */
interface FaultControl {
  begin(): Promise<void>
  end(): Promise<void>
}

/**
 * The common part: writes acknowledged before the fault; during it, writes until the storage has refused ten, each
 * answered 201 (it still fitted) or a storage 503, readiness red after a refusal, liveness green; after it, readiness
 * green and writes again without a restart; after a restart, nothing acknowledged lost.
 */
async function underStorageFault(
  report: ScenarioReport,
  storage: Storage,
  env: Record<string, string>,
  control: FaultControl,
  options: ScenarioOptions,
): Promise<void> {
  let server: ServerProcess | undefined
  const acked = emptyAcknowledged()
  try {
    server = await serve(storage, env)
    const url = server.url
    // A body that makes the WAL grow: a full disk cannot hide behind pages already allocated.
    const padding = 'x'.repeat(options.quick ? 20_000 : 60_000)
    let n = 0
    const write = async (): Promise<Answer> => {
      const r = await call(url, 'POST', '/tasks', { title: `storage ${n++}`, description: padding, role: 'fault' })
      if (r.status === 201) {
        const id = (r.json as { id: string }).id
        acked.tasks.set(id, { id, linked: false, ackedVersion: 1, sentVersion: 1 })
      }
      return r
    }
    for (let i = 0; i < 20; i++) check(report, (await write()).status === 201, 'a write before the fault failed')

    await control.begin()
    const during: Answer[] = []
    let refused = 0
    for (let i = 0; i < 400 && refused < 10; i++) {
      const r = await write()
      during.push(r)
      if (r.status !== 201) refused++
      if (r.status !== 201 && refused === 1) {
        const readiness = await call(url, 'GET', '/health/ready')
        check(report, readiness.status === 503, `readiness answered ${readiness.status} ${JSON.stringify(readiness.json)} right after storage refused a write`)
        report.figures.push(['readiness during the fault', `${readiness.status} ${JSON.stringify(readiness.json)}`])
      }
    }
    const storage503 = during.filter(isStorage503)
    const other = during.filter((a) => a.status !== 201 && !isStorage503(a))
    report.figures.push([
      'writes during the fault',
      `${during.length}: ${during.filter((a) => a.status === 201).length} acknowledged (still fitted), ${storage503.length} × 503 storage unavailable, ${other.length} other`,
    ])
    if (storage503[0]) report.figures.push(['answer', `503 Retry-After: ${storage503[0].headers.get('retry-after')} ${JSON.stringify(storage503[0].json)}`])
    check(report, refused > 0, 'the storage never refused a write (the fault did not take)')
    check(
      report,
      other.length === 0,
      `answers other than 201 or 503 + Retry-After + a storage detail: ${other
        .slice(0, 3)
        .map((a) => `${a.status} retry-after=${a.headers.get('retry-after')} ${a.error ?? JSON.stringify(a.json)}`)
        .join('; ')}`,
    )
    // The A2A v1.0 bindings meet the same fault in their own dialects: 503 + Retry-After, never INTERNAL.
    const v1 = { 'a2a-version': '1.0' }
    const v1Message = (i: number) => ({
      message: { messageId: `storage-${i}`, role: 'ROLE_USER', parts: [{ text: padding }] },
      configuration: { returnImmediately: true },
    })
    const v1Answers: Answer[] = []
    for (let i = 0; i < 3; i++) {
      v1Answers.push(await call(url, 'POST', '/a2a/v1/message:send', v1Message(i), { headers: v1 }))
      v1Answers.push(await call(url, 'POST', '/a2a/v1', { jsonrpc: '2.0', id: i, method: 'SendMessage', params: v1Message(10 + i) }, { headers: v1 }))
    }
    const v1Refused = v1Answers.filter((a) => a.status !== 200)
    report.figures.push(['A2A v1.0 writes during the fault', v1Answers.map((a) => a.status).join(', ')])
    check(report, v1Refused.length > 0, 'the storage refused no A2A v1.0 write')
    check(
      report,
      v1Refused.every(isStorage503),
      `A2A v1.0 answers other than 200 or 503 + Retry-After + a storage message: ${v1Refused
        .filter((a) => !isStorage503(a))
        .slice(0, 2)
        .map((a) => `${a.status} ${JSON.stringify(a.json)}`)
        .join('; ')}`,
    )

    const live = await call(url, 'GET', '/health/live')
    check(report, live.status === 200, `/health/live answered ${live.status} during the fault`)

    // The storage comes back; nobody restarts the node.
    await control.end()
    const back = performance.now()
    const green = await eventually(async () => (await call(url, 'GET', '/health/ready')).status === 200, 60_000, 200)
    check(report, green, 'readiness did not go green within 60 s of the storage coming back')
    const writes = await eventually(async () => (await write()).status === 201, 60_000, 200)
    check(report, writes, 'writes did not succeed within 60 s of the storage coming back')
    report.figures.push(['recovery', `ready and writing again ${Math.round(performance.now() - back)} ms after the storage came back`])
    check(report, server.alive(), 'the server process died')

    // A clean stop and a start on the same storage: everything acknowledged is there.
    await server.stop('SIGTERM')
    server = await serve(storage, env)
    const counts = await checkInvariants(server.url, storage, acked, report, 'after restart')
    report.figures.push(['acknowledged', `${counts.acknowledged} / found ${counts.found} / lost ${counts.lost}`])
  } finally {
    await server?.stop('SIGKILL')
  }
}

/** Disk full (SQLite): the tmpfs holding the data directory is filled up, then the filler is removed. */
export async function diskFull(options: ScenarioOptions): Promise<ScenarioReport> {
  const report = newReport('disk full: 503 + Retry-After + storage detail, readiness red then green, nothing lost', 'sqlite')
  const mounted = mountTmpfs()
  try {
    const storage = await createStorage('sqlite', mounted.dir)
    let filler: string | null = null
    await underStorageFault(
      report,
      storage,
      {},
      {
        begin: async () => void (filler = fill(mounted.dir)),
        end: async () => {
          if (filler !== null) rmSync(filler)
        },
      },
      options,
    )
  } finally {
    mounted.unmount()
  }
  return report
}

/**
 * Read-only storage. PostgreSQL: the server's own role is switched to read-only transactions
 * (`default_transaction_read_only`, SQLSTATE 25006 on every write) and its sessions ended so that the pool reconnects
 * into it, then switched back. SQLite: Linux refuses to remount a file system read-only while a process holds files
 * on it open for writing, so a running node cannot meet it; a node started on a read-only data directory must refuse
 * to start with a message naming the problem (no stack trace), and start with everything once it is writable again.
 */
export async function readOnlyStorage(engine: FaultEngine, options: ScenarioOptions): Promise<ScenarioReport> {
  const report = newReport(
    engine === 'postgres'
      ? 'read-only database: 503 + Retry-After + storage detail, readiness red then green, nothing lost'
      : 'read-only data directory: refused at start with the reason, nothing lost',
    engine,
  )
  if (engine === 'postgres') {
    if (!PG_URL) {
      report.failures.push('needs TEST_DATABASE_URL')
      return report
    }
    const storage = await createStorage('postgres')
    const role = `faults_ro_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: PG_URL })
    await admin.connect()
    try {
      await admin.query(`create role ${role} login`)
      await admin.query(`grant usage, create on schema ${storage.schema} to ${role}`)
      await admin.query(`grant all on all tables in schema ${storage.schema} to ${role}`)
      await admin.query(`grant all on all sequences in schema ${storage.schema} to ${role}`)
      const url = new URL(schemaUrl(PG_URL, storage.schema as string))
      url.username = role
      url.password = ''
      // pg_terminate_backend only signals: on a loaded machine a backend may still take a query before it exits (the
      // query then fails as "terminating connection", not as the read-only storage the scenario is about), so the
      // fault begins once no session of the role is left.
      const endSessions = async (): Promise<void> => {
        await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}'`)
        for (;;) {
          const left = await admin.query(`select count(*)::int as n from pg_stat_activity where usename = '${role}'`)
          if ((left.rows[0] as { n: number }).n === 0) return
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      }
      await underStorageFault(
        report,
        storage,
        { DATABASE_URL: url.toString() },
        {
          begin: async () => {
            await admin.query(`alter role ${role} set default_transaction_read_only = on`)
            await endSessions()
          },
          end: async () => {
            await admin.query(`alter role ${role} reset default_transaction_read_only`)
            await endSessions()
          },
        },
        options,
      )
    } finally {
      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}'`).catch(() => {})
      await admin.query(`drop owned by ${role}`).catch(() => {})
      await admin.query(`drop role if exists ${role}`).catch(() => {})
      await admin.end()
      await storage.cleanup()
    }
    return report
  }

  const mounted = mountTmpfs()
  let server: ServerProcess | undefined
  let readOnly = false
  try {
    const storage = await createStorage('sqlite', mounted.dir)
    const acked = emptyAcknowledged()
    server = await serve(storage)
    for (let i = 0; i < 10; i++) {
      const r = await call(server.url, 'POST', '/tasks', { title: `before read-only ${i}`, role: 'fault' })
      if (check(report, r.status === 201, `a write before the fault answered ${r.status}`)) {
        const id = (r.json as { id: string }).id
        acked.tasks.set(id, { id, linked: false, ackedVersion: 1, sentVersion: 1 })
      }
    }
    await server.stop('SIGTERM')
    server = undefined
    mounted.remount('ro')
    readOnly = true
    let came: ServerProcess | null = null
    const refusal = await serve(storage).then(
      (started) => {
        came = started
        return null
      },
      (error: Error) => error.message,
    )
    check(report, refusal !== null, 'a node started on a read-only data directory came up (and cannot keep any write)')
    if (refusal !== null) {
      const said = refusal.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('server exited'))
      report.figures.push(['start on a read-only data directory', said.join(' | ').slice(0, 300)])
      check(report, /read-only|EROFS/i.test(refusal), `the refusal does not say the storage is read-only: ${refusal.slice(0, 300)}`)
      check(report, !/\n\s+at /.test(refusal), 'the refusal prints a stack trace')
    }
    await (came as ServerProcess | null)?.stop('SIGKILL')
    mounted.remount('rw')
    readOnly = false
    server = await serve(storage)
    const counts = await checkInvariants(server.url, storage, acked, report, 'writable again')
    report.figures.push(['acknowledged', `${counts.acknowledged} / found ${counts.found} / lost ${counts.lost}`])
  } finally {
    await server?.stop('SIGKILL')
    if (readOnly) mounted.remount('rw')
    mounted.unmount()
  }
  return report
}
