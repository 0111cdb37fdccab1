import type { Command } from 'commander'
import { ConfigError, loadConfig } from '../../config.js'
import { type Connection, connect, databaseOptions, migrateToLatest, migrationStatus } from '../../store/connect.js'
import { DatabaseUnavailable } from '../../store/unavailable.js'
import { fail, printJson, printLines, wantsJson } from '../output.js'

/** Exit codes: 0 done / up to date, 1 migrations pending (`status`) or a migration failed, 2 cannot reach or configure the database. */
const EXIT_PENDING = 1
const EXIT_UNREACHABLE = 2

/**
 * Opens the configured database (honouring BERNSTEIN_DB_* pool and timeout settings), runs `work` and closes it.
 * A configuration error or an unreachable database is one line on stderr (or `{ok:false,error}` with --json) and
 * exit code 2.
 */
async function withConnection(cmd: Command, work: (connection: Connection) => Promise<void>): Promise<void> {
  let connection: Connection
  try {
    connection = connect(databaseOptions(loadConfig()))
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    return report(cmd, error.message)
  }
  try {
    await work(connection)
  } catch (error) {
    if (!(error instanceof DatabaseUnavailable)) throw error
    report(cmd, `database unavailable (${error.reason})`)
  } finally {
    await connection.close()
  }
}

function report(cmd: Command, message: string): void {
  if (wantsJson(cmd)) printJson({ ok: false, error: message })
  else process.stderr.write(`✗ ${message}\n`)
  fail(EXIT_UNREACHABLE)
}

export function registerDb(program: Command): void {
  const db = program.command('db').description('database maintenance (SQLite file in the data dir, or DATABASE_URL)')

  db.command('migrate')
    .description('apply pending migrations (safe to run from several replicas at once)')
    .action(async (_opts: unknown, cmd: Command) =>
      withConnection(cmd, async (connection) => {
        const result = await migrateToLatest(connection)
        if (result.error instanceof DatabaseUnavailable) throw result.error
        const applied = (result.results ?? []).map((r) => ({ name: r.migrationName, status: r.status }))
        const done = applied.filter((a) => a.status === 'Success').map((a) => a.name)
        if (wantsJson(cmd)) printJson({ ok: !result.error, engine: connection.engine, applied, error: result.error ? String(result.error) : null })
        else if (result.error) printLines(`✗ migration failed: ${String(result.error)}`)
        else printLines(done.length === 0 ? '✓ database is up to date' : `✓ applied ${done.join(', ')}`)
        if (result.error) fail(1)
      }),
    )

  db.command('status')
    .description('show applied and pending migrations (exit code 1 while any is pending)')
    .action(async (_opts: unknown, cmd: Command) =>
      withConnection(cmd, async (connection) => {
        const status = await migrationStatus(connection)
        const pending = status.filter((m) => m.executedAt === null).length
        if (wantsJson(cmd)) printJson({ engine: connection.engine, pending, migrations: status.map((m) => ({ name: m.name, executed_at: m.executedAt?.toISOString() ?? null })) })
        else printLines(`engine: ${connection.engine}`, ...status.map((m) => `${m.executedAt ? 'applied' : 'pending'}  ${m.name}`), pending === 0 ? '✓ up to date' : `${pending} pending`)
        if (pending > 0) fail(EXIT_PENDING)
      }),
    )
}
