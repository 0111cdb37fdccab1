import { type Stats, existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Command } from 'commander'
import type { Config } from '../../config.js'
import { privateKeyFromPem } from '../../crypto/ed25519.js'
import { type KeyName, keyFilePath, keysDirectory } from '../../crypto/key-files.js'
import { readAuditKey } from '../../lineage/audit-key.js'
import { connect, migrationStatus } from '../../store/connect.js'
import type { CliContext } from '../context.js'
import { fail, printJson, printLines, wantsJson } from '../output.js'

export interface DoctorCheck {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
  /** What to do about a failure (a command where there is one). */
  readonly fix: string | null
}

const KEY_NAMES: readonly KeyName[] = ['agent-card', 'receipt', 'capability-card']
/** Where the embedded database lives (src/store/connect.ts). */
const SQLITE_FILE = 'bernstein-a2a.sqlite'

const octal = (mode: number): string => '0' + (mode & 0o777).toString(8).padStart(3, '0')
const pass = (name: string, detail: string): DoctorCheck => ({ name, ok: true, detail, fix: null })
const problem = (name: string, detail: string, fix: string): DoctorCheck => ({ name, ok: false, detail, fix })

/** A private file or directory: exists, owned by this user, no group/other permission bits. */
function privatePath(name: string, path: string, kind: 'file' | 'directory', wanted: number, missingFix: string): DoctorCheck {
  let info: Stats
  try {
    info = statSync(path)
  } catch {
    return problem(name, `${path} does not exist`, missingFix)
  }
  if (kind === 'directory' ? !info.isDirectory() : !info.isFile()) return problem(name, `${path} is not a ${kind}`, `move it aside; ${missingFix}`)
  const uid = process.getuid?.()
  if (uid !== undefined && info.uid !== uid) return problem(name, `${path} is owned by uid ${info.uid}, not by this user (uid ${uid})`, `chown ${uid} ${path}`)
  if ((info.mode & 0o077) !== 0)
    return problem(name, `${path} has mode ${octal(info.mode)}; expected ${octal(wanted)}`, `chmod ${(wanted & 0o777).toString(8)} ${path}`)
  return pass(name, `${path} (${octal(info.mode)})`)
}

function keyChecks(config: Config): DoctorCheck[] {
  const startFix = 'start the server once (it creates missing keys), or run: bernstein-a2a keys rotate'
  const dir = privatePath('keys directory', keysDirectory(config.dataDir), 'directory', 0o700, startFix)
  if (!dir.ok) return [dir]
  return [
    dir,
    ...KEY_NAMES.map((key) => {
      const path = keyFilePath(config.dataDir, key)
      const file = privatePath(`${key} key`, path, 'file', 0o600, startFix)
      if (!file.ok) return file
      try {
        privateKeyFromPem(readFileSync(path, 'utf8'))
      } catch (error) {
        return problem(
          `${key} key`,
          `${path} is not an Ed25519 private key: ${(error as Error).message}`,
          `restore it from a backup, or make a new one: bernstein-a2a keys rotate --key ${key}`,
        )
      }
      return file
    }),
  ]
}

function auditKeyCheck(config: Config): DoctorCheck {
  const path = config.auditKeyPath
  const file = privatePath('audit key', path, 'file', 0o600, 'start the server once (it creates the audit key)')
  if (!file.ok) return file
  try {
    const key = readAuditKey(path).toString('ascii')
    if (!/^[0-9a-f]{64}$/i.test(key))
      return problem('audit key', `${path} is not 64 hex characters`, 'restore it from a backup: without it the tracker-audit chain cannot be verified')
  } catch (error) {
    return problem('audit key', (error as Error).message, `chmod 600 ${path}`)
  }
  return file
}

function operatorTokenCheck(config: Config): DoctorCheck {
  if (config.authDisabled)
    return problem(
      'operator token',
      'authentication is disabled (BERNSTEIN_AUTH_DISABLED): every request passes as the operator',
      'unset BERNSTEIN_AUTH_DISABLED',
    )
  if (config.authToken !== null) return pass('operator token', 'from BERNSTEIN_AUTH_TOKEN')
  return privatePath(
    'operator token',
    join(config.dataDir, 'auth.token'),
    'file',
    0o600,
    'start the server once (it generates the token), or set BERNSTEIN_AUTH_TOKEN',
  )
}

async function databaseChecks(config: Config): Promise<DoctorCheck[]> {
  const where = config.databaseUrl === null ? `SQLite ${join(config.dataDir, SQLITE_FILE)}` : 'PostgreSQL (DATABASE_URL)'
  // Opening a missing SQLite file would create it: the doctor only looks.
  if (config.databaseUrl === null && !existsSync(join(config.dataDir, SQLITE_FILE))) {
    return [problem('database', `${where} does not exist yet`, 'start the server once, or run: bernstein-a2a db migrate')]
  }
  const connection = connect({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    sqliteSynchronous: config.sqliteSynchronous,
    connectTimeoutMs: 3_000,
    poolSize: 1,
  })
  try {
    let status: { name: string; executedAt: Date | null }[]
    try {
      status = await migrationStatus(connection)
    } catch (error) {
      const fix =
        config.databaseUrl === null
          ? `check that ${join(config.dataDir, SQLITE_FILE)} is a readable SQLite database`
          : 'check DATABASE_URL and that PostgreSQL is running and accepts this user'
      return [problem('database', `${where} is not reachable: ${(error as Error).message}`, fix)]
    }
    const pending = status.filter((m) => m.executedAt === null).map((m) => m.name)
    return [
      pass('database', `${where} answers`),
      pending.length === 0
        ? pass('migrations', `all ${status.length} applied`)
        : problem('migrations', `${pending.length} pending: ${pending.join(', ')}`, 'run: bernstein-a2a db migrate (the server also migrates at start)'),
    ]
  } finally {
    await connection.close()
  }
}

/**
 * Every check, in order; later checks are skipped when the configuration cannot be read (`readConfig` throws what
 * reading it threw).
 */
export async function runDoctor(readConfig: () => Config): Promise<DoctorCheck[]> {
  let config: Config
  try {
    config = readConfig()
  } catch (error) {
    return [problem('configuration', (error as Error).message, 'fix or unset that environment variable (see the README, Configuration)')]
  }
  const checks: DoctorCheck[] = [pass('configuration', `loaded; data dir ${config.dataDir}`)]
  const dataDir = privatePath('data directory', config.dataDir, 'directory', 0o700, `start the server once, or: mkdir -m 700 ${config.dataDir}`)
  checks.push(dataDir)
  if (dataDir.ok || existsSync(config.dataDir)) checks.push(...keyChecks(config))
  checks.push(auditKeyCheck(config), operatorTokenCheck(config), ...(await databaseChecks(config)))
  return checks
}

export function registerDoctor(program: Command, cli: CliContext): void {
  program
    .command('doctor')
    .description('check configuration, data dir and key file permissions, the audit key, the operator token, the database and migrations')
    .action(async (_opts: unknown, cmd: Command) => {
      const checks = await runDoctor(() => cli.config)
      const failed = checks.filter((c) => !c.ok)
      if (wantsJson(cmd)) {
        printJson({ ok: failed.length === 0, checks })
      } else {
        printLines(
          ...checks.flatMap((c) => (c.ok ? [`✓ ${c.name}: ${c.detail}`] : [`✗ ${c.name}: ${c.detail}`, `    fix: ${c.fix}`])),
          failed.length === 0 ? 'all checks passed' : `${failed.length} problem${failed.length === 1 ? '' : 's'} found`,
        )
      }
      if (failed.length > 0) fail(1)
    })
}
