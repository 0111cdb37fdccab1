/**
 * How the CLI reports a failure, in one place: one line of text (on stderr, or on stdout for the verdicts of
 * commands that print like Bernstein's CLI), or with `--json` one object `{"ok": false, "error": …}` on stdout;
 * and the exit code. Commands throw a {@link CliFailure} (or let a known error through) and `main` reports it.
 *
 * Exit codes (README, "Command line"): 0 success; 1 the command did not succeed (a check failed, a refusal, a
 * missing or invalid option, bad configuration); 2 the input or the environment could not be used where Bernstein's
 * CLI says so (`a2a verify`'s missing files, an unusable audit key, `db` commands that cannot reach or configure the
 * database), or an unexpected internal error.
 *
 * @module
 */
import { CommanderError } from 'commander'
import { ConfigError } from '../config.js'
import { AppError } from '../errors.js'
import { StartupError } from '../node.js'
import { DatabaseUnavailable } from '../store/unavailable.js'
import { printJson } from './output.js'

export const EXIT_FAILED = 1
export const EXIT_UNUSABLE = 2

export interface FailureOptions {
  /** Default {@link EXIT_FAILED}. */
  readonly exitCode?: number
  /** Print the text line on stdout (a verdict, as Bernstein's CLI prints it) instead of stderr. */
  readonly stdout?: boolean
  /** What the text line starts with; default `✗ `. */
  readonly prefix?: string
  /** Fields of the JSON object beside `ok` and `error`. */
  readonly fields?: Readonly<Record<string, unknown>>
}

/** An expected failure of a command, with how to report it. */
export class CliFailure extends Error {
  override readonly name = 'CliFailure'
  readonly exitCode: number
  readonly stdout: boolean
  readonly prefix: string
  readonly fields: Readonly<Record<string, unknown>>

  constructor(message: string, options: FailureOptions = {}) {
    super(message)
    this.exitCode = options.exitCode ?? EXIT_FAILED
    this.stdout = options.stdout ?? false
    this.prefix = options.prefix ?? '✗ '
    this.fields = options.fields ?? {}
  }
}

/**
 * File-system errors in words (the caller names the file), and whether an operator fixes them by changing a path
 * or its permissions: a data directory that is a file, unwritable, read-only or full.
 */
const FILE_ERRORS: Readonly<Record<string, { readonly words: string; readonly operatorFix: boolean }>> = {
  ENOENT: { words: 'no such file', operatorFix: false },
  EACCES: { words: 'permission denied', operatorFix: true },
  EISDIR: { words: 'is a directory', operatorFix: true },
  ENOTDIR: { words: 'not a directory', operatorFix: true },
  EPERM: { words: 'operation not permitted', operatorFix: true },
  EROFS: { words: 'read-only file system', operatorFix: true },
  ENOSPC: { words: 'no space left on device', operatorFix: true },
  EEXIST: { words: 'already exists', operatorFix: true },
  ELOOP: { words: 'too many levels of symbolic links', operatorFix: true },
  ENAMETOOLONG: { words: 'file name too long', operatorFix: true },
}

const errorCode = (error: unknown): string | undefined => {
  const code = (error as Partial<NodeJS.ErrnoException> | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** A file-system error in words, without Node's `ENOENT: …, open '<path>'` prefix; other errors by their message. */
export function fileErrorText(error: unknown): string {
  const known = FILE_ERRORS[errorCode(error) ?? '']
  if (known !== undefined) return known.words
  return error instanceof Error ? error.message : String(error)
}

function isOperatorFileError(error: unknown): error is NodeJS.ErrnoException & { path: string } {
  return FILE_ERRORS[errorCode(error) ?? '']?.operatorFix === true && typeof (error as { path?: unknown }).path === 'string'
}

const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/**
 * `database "x" does not exist — create it with: createdb …` for PostgreSQL's invalid_catalog_name (3D000), with
 * the host, port and user of DATABASE_URL; null for any other error.
 */
export function missingDatabaseHint(error: unknown, databaseUrl: string | null): string | null {
  if (errorCode(error) !== '3D000' || !(error instanceof Error)) return null
  let command = 'createdb'
  let name = /database "(.*)" does not exist/.exec(error.message)?.[1] ?? ''
  try {
    const url = new URL(databaseUrl ?? '')
    if (url.hostname !== '') command += ` -h ${shellWord(decodeURIComponent(url.hostname.replace(/^\[(.*)\]$/, '$1')))}`
    if (url.port !== '') command += ` -p ${url.port}`
    if (url.username !== '') command += ` -U ${shellWord(decodeURIComponent(url.username))}`
    if (name === '') name = decodeURIComponent(url.pathname.replace(/^\//, ''))
  } catch {
    // No usable URL: the command without connection flags (PG* variables apply).
  }
  return `${error.message} — create it with: ${command} ${shellWord(name)}`
}

/** How the errors of a node an operator fixes read, with a stable code; null for anything else (a bug). */
export function describeKnownError(error: unknown, databaseUrl: string | null): { message: string; code: string } | null {
  const missing = missingDatabaseHint(error, databaseUrl)
  if (missing !== null) return { message: missing, code: 'database_missing' }
  if (error instanceof ConfigError) return { message: error.message, code: 'configuration' }
  if (error instanceof StartupError) return { message: error.message, code: 'startup' }
  if (error instanceof DatabaseUnavailable) return { message: `database unavailable (${error.reason})`, code: 'database_unavailable' }
  if (error instanceof AppError) return { message: error.message, code: error.code }
  if (isOperatorFileError(error)) {
    return { message: `${error.message} (check BERNSTEIN_DATA_DIR, BERNSTEIN_AUDIT_KEY_PATH and their permissions)`, code: 'file_system' }
  }
  return null
}

/** Commander's text for a usage error, without its `error: ` (or click's `Error: `) prefix. */
function usageText(error: CommanderError): string {
  if (error.code === 'commander.help') return 'a command is required (see --help)'
  return error.message.replace(/^error: /i, '')
}

export interface ReportContext {
  /** `--json` was given. */
  readonly json: boolean
  /** For the hint about a missing database; null when unset or unknown. */
  readonly databaseUrl: string | null
  /** With --json, what commander would have printed on stdout (help, the version). */
  readonly kept?: string
}

/** Reports what a command threw and sets the exit code. Never throws. */
export function reportFailure(error: unknown, context: ReportContext): void {
  if (error instanceof CommanderError) {
    // Help and --version end this way too (exit 0). Commander printed usage errors already, unless --json.
    if (context.json) {
      if (error.exitCode !== 0) printJson({ ok: false, error: usageText(error), code: 'usage' })
      else if (error.code === 'commander.version') printJson({ ok: true, version: (context.kept ?? '').trim() })
      else printJson({ ok: true, help: context.kept ?? '' })
    }
    process.exitCode = error.exitCode
    return
  }
  let failure: CliFailure
  let stack: string | null = null
  if (error instanceof CliFailure) {
    failure = error
  } else {
    const known = describeKnownError(error, context.databaseUrl)
    const message = known?.message ?? (error instanceof Error ? error.message : String(error))
    failure = new CliFailure(message, { prefix: 'error: ', exitCode: known ? EXIT_FAILED : EXIT_UNUSABLE, fields: { code: known?.code ?? 'internal' } })
    // Anything not expected keeps its stack for whoever debugs it.
    if (!known && process.env['BERNSTEIN_DEBUG']) stack = (error as Error).stack ?? ''
  }
  if (context.json) printJson({ ok: false, error: failure.message, ...failure.fields })
  else (failure.stdout ? process.stdout : process.stderr).write(`${failure.prefix}${failure.message}\n`)
  if (stack !== null) process.stderr.write(`${stack}\n`)
  process.exitCode = failure.exitCode
}
