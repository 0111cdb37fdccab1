import type { Command } from 'commander'
import { loadConfig } from '../../config.js'
import { connect, migrateToLatest, migrationStatus } from '../../store/connect.js'
import { fail, printJson, printLines, wantsJson } from '../output.js'

export function registerDb(program: Command): void {
  const db = program.command('db').description('database maintenance (SQLite file in the data dir, or DATABASE_URL)')

  db.command('migrate')
    .description('apply pending migrations')
    .action(async (_opts: unknown, cmd: Command) => {
      const config = loadConfig()
      const connection = connect({ url: config.databaseUrl, dataDir: config.dataDir })
      try {
        const result = await migrateToLatest(connection)
        const applied = (result.results ?? []).map((r) => ({ name: r.migrationName, status: r.status }))
        if (wantsJson(cmd)) printJson({ ok: !result.error, engine: connection.engine, applied, error: result.error ? String(result.error) : null })
        else if (result.error) printLines(`✗ migration failed: ${String(result.error)}`)
        else printLines(applied.length === 0 ? '✓ database is up to date' : `✓ applied ${applied.map((a) => a.name).join(', ')}`)
        if (result.error) fail(1)
      } finally {
        await connection.close()
      }
    })

  db.command('status')
    .description('show applied and pending migrations')
    .action(async (_opts: unknown, cmd: Command) => {
      const config = loadConfig()
      const connection = connect({ url: config.databaseUrl, dataDir: config.dataDir })
      try {
        const status = await migrationStatus(connection)
        const pending = status.filter((m) => m.executedAt === null).length
        if (wantsJson(cmd)) printJson({ engine: connection.engine, pending, migrations: status.map((m) => ({ name: m.name, executed_at: m.executedAt?.toISOString() ?? null })) })
        else printLines(`engine: ${connection.engine}`, ...status.map((m) => `${m.executedAt ? 'applied' : 'pending'}  ${m.name}`), pending === 0 ? '✓ up to date' : `${pending} pending`)
        if (pending > 0) fail(1)
      } finally {
        await connection.close()
      }
    })
}
