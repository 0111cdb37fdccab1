#!/usr/bin/env node
import { Command } from 'commander'
import { ConfigError } from '../config.js'
import { AppError } from '../errors.js'
import { registerServe } from './commands/serve.js'
import { registerToken } from './commands/token.js'
import { registerDb } from './commands/db.js'
import { registerKeys } from './commands/keys.js'
import { registerFederation } from './commands/federation.js'
import { registerInterop } from './commands/interop.js'
import { registerLineage } from './commands/lineage.js'
import { registerA2aVerify } from './commands/a2a-verify.js'
import { registerDoctor } from './commands/doctor.js'

const program = new Command('bernstein-a2a')
  .description('A2A trust layer for agent orchestrators: task API, capability cards, lineage, receipts')
  .option('--json', 'machine-readable JSON output')
  .enablePositionalOptions(false)
  .showHelpAfterError()

registerServe(program)
registerToken(program)
registerDb(program)
registerKeys(program)
registerFederation(program)
registerInterop(program)
registerLineage(program)
registerA2aVerify(program)
registerDoctor(program)

/** File-system refusals an operator fixes (a data directory that is a file, unwritable, read-only or full). */
const OPERATOR_FS_ERRORS = new Set(['ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EEXIST', 'ELOOP', 'ENAMETOOLONG'])

function isOperatorFsError(error: unknown): error is NodeJS.ErrnoException & { path: string } {
  const e = error as Partial<NodeJS.ErrnoException> | null
  return typeof e === 'object' && e !== null && typeof e.code === 'string' && OPERATOR_FS_ERRORS.has(e.code) && typeof e.path === 'string'
}

try {
  await program.parseAsync(process.argv)
} catch (error) {
  // Expected failures (bad configuration, a refused request, a missing task, an unusable data directory) get one
  // clear line, not a stack.
  const fs = isOperatorFsError(error)
  const known = error instanceof AppError || error instanceof ConfigError || fs
  const text = error instanceof Error ? error.message : String(error)
  process.stderr.write(`error: ${text}${fs ? ' (check BERNSTEIN_DATA_DIR, BERNSTEIN_AUDIT_KEY_PATH and their permissions)' : ''}\n`)
  if (!known && process.env['BERNSTEIN_DEBUG']) process.stderr.write(`${(error as Error).stack ?? ''}\n`)
  process.exitCode = known ? 1 : 2
}
