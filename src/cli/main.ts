#!/usr/bin/env node
import { Command } from 'commander'
import { packageVersion } from '../version.js'
import { registerServe } from './commands/serve.js'
import { registerToken } from './commands/token.js'
import { registerDb } from './commands/db.js'
import { registerKeys } from './commands/keys.js'
import { registerFederation } from './commands/federation.js'
import { registerInterop } from './commands/interop.js'
import { registerLineage } from './commands/lineage.js'
import { registerA2aVerify } from './commands/a2a-verify.js'
import { registerDoctor } from './commands/doctor.js'
import { CliContext } from './context.js'
import { reportFailure } from './failure.js'

const cli = new CliContext(process.argv)

// Set before the subcommands are made: they copy the program's output and exit settings when created.
const program = new Command('bernstein-a2a')
  .description('A2A trust layer for agent orchestrators: task API, capability cards, lineage, receipts')
  .version(packageVersion(), '-V, --version', 'print the version')
  .option('--json', 'machine-readable output: one JSON document on stdout, errors included')
  .enablePositionalOptions(false)
  .showHelpAfterError()
  // Usage errors are reported like every other failure (one JSON object with --json), not by exiting at once.
  .exitOverride()
  .configureOutput({
    // Help and the version: with --json they become the one object (`main` prints it when commander is done).
    writeOut: (text) => {
      if (cli.json) cli.keepOutput(text)
      else process.stdout.write(text)
    },
    writeErr: (text) => {
      if (!cli.json) process.stderr.write(text)
    },
  })
  .hook('preAction', (_program, action) => cli.prepare(action))

registerServe(program, cli)
registerToken(program, cli)
registerDb(program, cli)
registerKeys(program, cli)
registerFederation(program, cli)
registerInterop(program)
registerLineage(program, cli)
registerA2aVerify(program)
registerDoctor(program, cli)

try {
  await program.parseAsync(process.argv)
} catch (error) {
  reportFailure(error, cli.report)
}
