import type { Command } from 'commander'
import { ConfigError } from '../../config.js'
import { type Connection, connect, databaseOptions, migrateToLatest, migrationStatus } from '../../store/connect.js'
import { DatabaseUnavailable } from '../../store/unavailable.js'
import type { CliContext } from '../context.js'
import { CliFailure, EXIT_UNUSABLE, missingDatabaseHint } from '../failure.js'
import { fail, printJson, printLines, wantsJson } from '../output.js'

/** Exit codes: 0 done / up to date, 1 migrations pending (`status`) or a migration failed, 2 cannot reach or configure the database. */
const EXIT_PENDING = 1

/**
 * Opens the configured database (honouring BERNSTEIN_DB_* pool and timeout settings), runs `work` and closes it.
 * A configuration error, an unreachable or a missing database is one line on stderr (or `{ok:false,error}` with
 * --json) and exit code 2.
 */
async function withConnection(cli: CliContext, work: (connection: Connection) => Promise<void>): Promise<void> {
  let connection: Connection
  let databaseUrl: string | null
  try {
    const config = cli.config
    databaseUrl = config.databaseUrl
    connection = connect(databaseOptions(config))
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    throw new CliFailure(error.message, { exitCode: EXIT_UNUSABLE })
  }
  try {
    await work(connection)
  } catch (error) {
    const missing = missingDatabaseHint(error, databaseUrl)
    if (missing !== null) throw new CliFailure(missing, { exitCode: EXIT_UNUSABLE })
    if (!(error instanceof DatabaseUnavailable)) throw error
    throw new CliFailure(`database unavailable (${error.reason})`, { exitCode: EXIT_UNUSABLE })
  } finally {
    await connection.close()
  }
}

export function registerDb(program: Command, cli: CliContext): void {
  const db = program.command('db').description('database maintenance (SQLite file in the data dir, or DATABASE_URL)')

  db.command('migrate')
    .description('apply pending migrations (safe to run from several replicas at once)')
    .action(async (_opts: unknown, cmd: Command) =>
      withConnection(cli, async (connection) => {
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
      withConnection(cli, async (connection) => {
        const status = await migrationStatus(connection)
        const pending = status.filter((m) => m.executedAt === null).length
        if (wantsJson(cmd))
          printJson({
            ok: pending === 0,
            ...(pending > 0 && { error: `${pending} migration(s) pending` }),
            engine: connection.engine,
            pending,
            migrations: status.map((m) => ({ name: m.name, executed_at: m.executedAt?.toISOString() ?? null })),
          })
        else
          printLines(
            `engine: ${connection.engine}`,
            ...status.map((m) => `${m.executedAt ? 'applied' : 'pending'}  ${m.name}`),
            pending === 0 ? '✓ up to date' : `${pending} pending`,
          )
        if (pending > 0) fail(EXIT_PENDING)
      }),
    )
}
