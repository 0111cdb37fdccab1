import type { Command } from 'commander'
import pino from 'pino'
import { loadConfig } from '../../config.js'
import { startServer } from '../../server.js'

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('start the server (configuration from BERNSTEIN_* environment variables; see the README)')
    .action(async () => {
      const config = loadConfig()
      const logger = pino({ level: config.logLevel, base: { service: 'bernstein-a2a' } })
      const server = await startServer(config, logger)
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
