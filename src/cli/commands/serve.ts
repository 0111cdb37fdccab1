import type { Command } from 'commander'

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('start the server (configuration from the environment)')
    .action(async () => {
      throw new Error('not yet wired')
    })
}
