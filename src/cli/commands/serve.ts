import type { Command } from 'commander'
import pino from 'pino'
import { ConfigError, loadConfig } from '../../config.js'
import { type RunningServer, StartupError, startServer } from '../../server.js'
import { DatabaseUnavailable } from '../../store/unavailable.js'
import { boundHeapGrowth } from '../heap.js'

/** Problems an operator fixes get one clear line on stderr and exit code 1; anything else keeps its stack. */
function reportStartupFailure(error: unknown): void {
  if (error instanceof StartupError || error instanceof ConfigError) process.stderr.write(`bernstein-a2a: ${error.message}\n`)
  else if (error instanceof DatabaseUnavailable) process.stderr.write(`bernstein-a2a: database unavailable (${error.reason}); check DATABASE_URL and that PostgreSQL is up\n`)
  else throw error
  process.exitCode = 1
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('start the server (configuration from BERNSTEIN_* environment variables; see the README)')
    .action(async () => {
      let server: RunningServer
      let logger: pino.Logger
      boundHeapGrowth()
      try {
        const config = loadConfig()
        logger = pino({ level: config.logLevel, base: { service: 'bernstein-a2a' } })
        server = await startServer(config, logger)
      } catch (error) {
        reportStartupFailure(error)
        return
      }
      process.stdout.write(`bernstein-a2a listening on ${server.url}\n`)
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
