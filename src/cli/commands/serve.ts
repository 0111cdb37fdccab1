import type { Command } from 'commander'
import pino from 'pino'
import { ConfigError } from '../../config.js'
import { StartupError } from '../../node.js'
import { type RunningServer, startServer } from '../../server.js'
import { DatabaseUnavailable } from '../../store/unavailable.js'
import type { CliContext } from '../context.js'
import { CliFailure, missingDatabaseHint } from '../failure.js'
import { boundHeapGrowth } from '../heap.js'
import { printJson } from '../output.js'

/** Problems an operator fixes are one line on stderr, `bernstein-a2a: …`, exit 1; anything else goes to `main`. */
function startupFailure(error: unknown, databaseUrl: string | null): unknown {
  const missing = missingDatabaseHint(error, databaseUrl)
  const message =
    missing ??
    (error instanceof StartupError || error instanceof ConfigError
      ? error.message
      : error instanceof DatabaseUnavailable
        ? `database unavailable (${error.reason}); check DATABASE_URL and that PostgreSQL is up`
        : null)
  return message === null ? error : new CliFailure(message, { prefix: 'bernstein-a2a: ' })
}

export function registerServe(program: Command, cli: CliContext): void {
  program
    .command('serve')
    .description('start the server (configuration from BERNSTEIN_* environment variables; see the README)')
    .option('--a2a-conformance-agent', 'answer A2A v1.0 messages with the built-in conformance agent (BERNSTEIN_A2A_CONFORMANCE_AGENT)')
    .action(async (flags: { a2aConformanceAgent?: boolean }) => {
      let server: RunningServer
      let logger: pino.Logger
      boundHeapGrowth()
      let databaseUrl: string | null = null
      try {
        const config = flags.a2aConformanceAgent === true ? Object.freeze({ ...cli.config, a2aConformanceAgent: true }) : cli.config
        databaseUrl = config.databaseUrl
        // With --json stdout carries the one object `{ok, url}`; the log lines go to stderr.
        const options = { level: config.logLevel, base: { service: 'bernstein-a2a' } }
        logger = cli.json ? pino(options, pino.destination({ dest: 2, sync: true })) : pino(options)
        server = await startServer(config, logger)
      } catch (error) {
        throw startupFailure(error, databaseUrl)
      }
      if (cli.json) printJson({ ok: true, url: server.url })
      else process.stdout.write(`bernstein-a2a listening on ${server.url}\n`)
      let stopping = false
      const stop = (signal: string): void => {
        if (stopping) return
        stopping = true
        logger.info({ signal }, 'shutting down: draining in-flight requests')
        server.close().then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ err: error }, 'shutdown failed')
            process.exit(1)
          },
        )
      }
      process.on('SIGTERM', () => stop('SIGTERM'))
      process.on('SIGINT', () => stop('SIGINT'))
    })
}
