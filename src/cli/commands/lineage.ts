/**
 * `bernstein-a2a lineage tracker-audit verify` and `lineage envelope wrap | inspect` (behaviour doc §7.1, §7.2).
 *
 * @module
 */
import { constants } from 'node:fs'
import { access, readFile, stat, writeFile } from 'node:fs/promises'
import type { Command } from 'commander'
import { isPyObject, parsePythonJson, pythonJsonDecodeText } from '../../canonical/python-json.js'
import type { PyValue } from '../../canonical/python-json.js'
import { sha256Prefixed } from '../../crypto/sha256-prefixed.js'
import {
  LINEAGE_ENVELOPE_FIELD,
  lineageEnvelopePayloadBytes,
  parseLineageEnvelope,
  parseLineageEnvelopeField,
  wrapLineageChain,
} from '../../lineage/envelope.js'
import type { LineageEnvelopeParseOptions } from '../../lineage/envelope.js'
import { AuditKeyError, chainVerificationBody, parseTrackerLine, readAuditKey, readByteLines, verifyTrackerAuditFile } from '../../lineage/tracker-audit.js'
import type { TrackerAuditEntry, TrackerAuditVerifyResult } from '../../lineage/tracker-audit.js'
import { LineageService } from '../../lineage/lineage.service.js'
import { registerLineageNode } from './lineage-node.js'
import { type Result, ok } from '../../result.js'
import { decodeUtf8Strict } from '../../text/utf8.js'
import type { CliContext } from '../context.js'
import { CliFailure, EXIT_UNUSABLE, fileErrorText } from '../failure.js'
import { fail, printJson, printLines, wantsJson } from '../output.js'

/**
 * A file named on the command line must exist: Bernstein's verifier reads a missing log as an empty, valid one,
 * which would let a mistyped path pass as a verified chain.
 */
async function assertReadable(path: string): Promise<void> {
  await access(path, constants.R_OK)
  if ((await stat(path)).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' })
}

/** A failure of these commands: `✗ <message>` on stdout as Bernstein prints it (`{ok: false, error}` with --json). */
function failure(message: string, exitCode = 1): CliFailure {
  return new CliFailure(message, { exitCode, stdout: true })
}

// ---------------------------------------------------------------------------
// tracker-audit verify
// ---------------------------------------------------------------------------

/** Where to read the chain and the key from. */
export interface TrackerAuditVerifyOptions {
  file: string
  keyFile: string
}

/** Verifies the chain in the node's database (SQLite in the data dir, or DATABASE_URL) under its audit key. */
async function verifyStoredChain(cli: CliContext, keyFile: string | undefined): Promise<TrackerAuditVerifyResult> {
  return cli.withStore(async (store, config) => {
    const key = readAuditKey(keyFile ?? config.auditKeyPath)
    return new LineageService(store, key, config.issuer).verify()
  })
}

/**
 * The core of `tracker-audit verify` for a JSONL file: reads the key file (its ASCII bytes are the key) and streams
 * the log. Throws {@link AuditKeyError} for an unusable key file, and a file-system error when the log is missing.
 */
export async function runTrackerAuditVerify(options: TrackerAuditVerifyOptions): Promise<TrackerAuditVerifyResult> {
  const key = readAuditKey(options.keyFile)
  await assertReadable(options.file)
  return verifyTrackerAuditFile(options.file, key)
}

/**
 * Prints a verify result in Bernstein's wording (`tracker-audit verify: OK (5 entry(ies))`, or `FAIL` and the
 * failure) or as `{ok, entries, failure}`, and sets exit code 1 on failure.
 */
export function reportTrackerAuditVerify(result: TrackerAuditVerifyResult, json: boolean): void {
  if (json) printJson(chainVerificationBody(result))
  else if (result.ok) printLines(`tracker-audit verify: OK (${result.value.entries} entry(ies))`)
  else printLines('tracker-audit verify: FAIL', `  - ${result.detail}`)
  if (!result.ok) fail(1)
}

// ---------------------------------------------------------------------------
// envelope wrap / inspect
// ---------------------------------------------------------------------------

type EntriesRead = Result<TrackerAuditEntry[], 'invalid_json' | 'invalid_entry'>

/** Reads every entry of a tracker-audit JSONL file (without verifying the chain, like Bernstein's `read()`). */
async function readTrackerEntries(path: string): Promise<EntriesRead> {
  const entries: TrackerAuditEntry[] = []
  let lineNo = 0
  for await (const raw of readByteLines(path)) {
    lineNo += 1
    const parsed = parseTrackerLine(raw, lineNo)
    if (parsed === null) continue
    if (!parsed.ok) return parsed
    entries.push(parsed.value)
  }
  return ok(entries)
}

interface WrapOptions {
  file?: string
  issuer?: string
  ticketId?: string
  trackerName?: string
  output?: string
}

interface InspectOptions {
  file: string
  checkLinks?: boolean
  requireGenesis?: boolean
  checkEntryHashes?: boolean
  expectedIssuer?: string
}

async function wrapAction(cli: CliContext, opts: WrapOptions, cmd: Command): Promise<void> {
  let read: EntriesRead
  let issuer = opts.issuer
  try {
    if (opts.file === undefined) {
      read = await cli.withStore(async (store, config) => {
        issuer ??= config.issuer
        return ok(await new LineageService(store, null, config.issuer).entries(opts.ticketId))
      })
    } else {
      read = await readTrackerEntries(opts.file)
    }
  } catch (error) {
    throw failure(`could not read ${opts.file ?? 'the database'}: ${fileErrorText(error)}`)
  }
  if (!read.ok) throw failure(`could not read ${opts.file}: ${read.detail}`)
  if (issuer === undefined) throw failure('--issuer is required with --file', EXIT_UNUSABLE)
  const wrapOptions: { sourceIssuer: string; ticketId?: string; trackerName?: string } = { sourceIssuer: issuer }
  if (opts.ticketId !== undefined) wrapOptions.ticketId = opts.ticketId
  if (opts.trackerName !== undefined) wrapOptions.trackerName = opts.trackerName
  const envelope = wrapLineageChain(read.value, wrapOptions)
  const bytes = lineageEnvelopePayloadBytes(envelope)
  const summary = {
    ok: true,
    output: opts.output ?? null,
    source_issuer: envelope.source_issuer,
    chain_digest: envelope.chain_digest,
    entries: envelope.entries.length,
    payload_sha256: sha256Prefixed(bytes),
  }
  if (opts.output === undefined) {
    // With --json the payload is a field of the one object: its exact canonical bytes as a string (parsing and
    // printing it again could change them, and `payload_sha256` is over these).
    if (wantsJson(cmd)) return printJson({ ...summary, payload: bytes.toString('utf8') })
    // Without: the exact canonical bytes, plus a newline for the terminal.
    process.stdout.write(Buffer.concat([bytes, Buffer.from('\n')]))
    return
  }
  await writeFile(opts.output, bytes)
  if (wantsJson(cmd)) return printJson(summary)
  printLines(
    `✓ lineage envelope written to ${opts.output}`,
    `  source_issuer: ${envelope.source_issuer}  entries: ${envelope.entries.length}`,
    `  chain_digest: ${envelope.chain_digest}`,
  )
}

async function inspectAction(opts: InspectOptions, cmd: Command): Promise<void> {
  let text: string
  try {
    text = decodeUtf8Strict(await readFile(opts.file))
  } catch (error) {
    throw failure(`could not read envelope: ${fileErrorText(error)}`)
  }
  let value: PyValue
  try {
    value = parsePythonJson(text)
  } catch (error) {
    throw failure(`could not parse envelope: ${pythonJsonDecodeText(error, text)}`)
  }
  const parseOptions: LineageEnvelopeParseOptions = {}
  // As a strict receiver checks: a per-ticket envelope (what `wrap --ticket-id` and a delegation carry) skips the
  // other tickets' entries.
  if (opts.checkLinks) Object.assign(parseOptions, { checkLinks: true, allowTicketGaps: true })
  if (opts.requireGenesis) parseOptions.requireGenesis = true
  if (opts.checkEntryHashes) parseOptions.checkEntryHashes = true
  if (opts.expectedIssuer !== undefined) parseOptions.expectedIssuer = opts.expectedIssuer
  // A bare payload has the envelope's own keys; anything else is read as an A2A message carrying the field.
  const carried =
    isPyObject(value) &&
    (Object.hasOwn(value, LINEAGE_ENVELOPE_FIELD) || !['source_issuer', 'chain_digest', 'entries'].some((key) => Object.hasOwn(value, key)))
  const result = carried ? parseLineageEnvelopeField(value, parseOptions) : parseLineageEnvelope(value, parseOptions)
  const json = wantsJson(cmd)
  if (!result.ok) {
    if (json) printJson({ ok: false, code: result.code, error: result.detail })
    else printLines(`✗ lineage envelope ${opts.file} is NOT valid:`, `  - ${result.detail}`)
    return fail(1)
  }
  const envelope = result.value
  const payloadSha256 = sha256Prefixed(lineageEnvelopePayloadBytes(envelope))
  if (json) {
    return printJson({
      ok: true,
      source_issuer: envelope.source_issuer,
      schema_version: envelope.schema_version,
      chain_digest: envelope.chain_digest,
      entries: envelope.entries.length,
      payload_sha256: payloadSha256,
    })
  }
  printLines(
    `✓ lineage envelope ${opts.file} is valid`,
    `  source_issuer: ${envelope.source_issuer}  schema_version: ${envelope.schema_version}`,
    `  chain_digest: ${envelope.chain_digest}`,
    `  payload: ${payloadSha256}`,
    `  entries: ${envelope.entries.length}`,
    ...envelope.entries.map((entry, index) => `    ${index + 1}. ${entry.tracker_name} ${entry.ticket_id} ${entry.action} ${entry.entry_hash.slice(0, 23)}…`),
  )
}

/** Registers `lineage tracker-audit verify` and `lineage envelope wrap | inspect`. */
export function registerLineage(program: Command, cli: CliContext): void {
  const lineage = program.command('lineage').description('tracker-audit chains and lineage_v2 envelopes')

  const trackerAudit = lineage.command('tracker-audit').description('the signed tracker-audit log (HMAC chain)')
  trackerAudit
    .command('verify')
    .description('check chain integrity and HMACs; exits 1 at the first offending line')
    .option('--file <path>', 'tracker-audit JSONL file (must exist); default: the server database')
    .option('--key-file <path>', 'audit key file: 64 hex characters whose ASCII bytes are the key (mode 0600); default: the node audit key')
    .action(async (opts: Partial<TrackerAuditVerifyOptions>, cmd: Command) => {
      if (opts.file !== undefined && opts.keyFile === undefined) throw failure('--key-file is required with --file', EXIT_UNUSABLE)
      let result: TrackerAuditVerifyResult
      try {
        if (opts.file === undefined) result = await verifyStoredChain(cli, opts.keyFile)
        else result = await runTrackerAuditVerify({ file: opts.file, keyFile: opts.keyFile as string })
      } catch (error) {
        // A key problem is an operator error, not tampering: exit 2 as Bernstein does without its secret.
        if (error instanceof AuditKeyError) throw failure(error.message, EXIT_UNUSABLE)
        throw failure(`could not read ${opts.file ?? 'the database'}: ${fileErrorText(error)}`)
      }
      reportTrackerAuditVerify(result, wantsJson(cmd))
    })

  trackerAudit
    .command('export')
    .description("write the server's chain as Bernstein's JSONL file (byte-identical lines)")
    .requiredOption('--output <path>', 'the JSONL file to write')
    .option('--partition <chain>', 'the partition to write (`lineage verify-node` lists them); default: the legacy one, `tracker-audit`')
    .action(async (opts: { output: string; partition?: string }, cmd: Command) => {
      const lines = await cli.withStore(async (store, config) => {
        const out: string[] = []
        for await (const line of new LineageService(store, null, config.issuer).exportJsonl(opts.partition)) out.push(line)
        return out
      })
      await writeFile(opts.output, lines.join(''), { mode: 0o600 })
      if (wantsJson(cmd)) return printJson({ ok: true, output: opts.output, entries: lines.length })
      printLines(`✓ ${lines.length} entr${lines.length === 1 ? 'y' : 'ies'} written to ${opts.output}`)
    })

  trackerAudit
    .command('import')
    .description("append a Bernstein JSONL log to the server's chain: it must verify under the node key and continue its head")
    .requiredOption('--file <path>', 'tracker-audit JSONL file')
    .action(async (opts: { file: string }, cmd: Command) => {
      try {
        await assertReadable(opts.file)
      } catch (error) {
        throw failure(`could not read ${opts.file}: ${fileErrorText(error)}`)
      }
      const outcome = await cli.withStore(async (store, config) =>
        new LineageService(store, readAuditKey(config.auditKeyPath), config.issuer).importJsonl(readByteLines(opts.file)),
      )
      if (!outcome.ok) throw failure(`not imported: ${outcome.detail}`)
      const { imported } = outcome.value
      if (wantsJson(cmd)) return printJson({ ok: true, imported })
      printLines(`✓ imported ${imported} entr${imported === 1 ? 'y' : 'ies'}`)
    })

  registerLineageNode(lineage, cli)

  const envelope = lineage.command('envelope').description(`the ${LINEAGE_ENVELOPE_FIELD} envelope`)
  envelope
    .command('wrap')
    .description('wrap a tracker-audit JSONL log into an envelope payload (canonical JSON)')
    .option('--file <path>', 'tracker-audit JSONL file (default: the server database)')
    .option('--issuer <issuer>', "source_issuer: the issuer id of the sender's capability card (default: BERNSTEIN_A2A_ISSUER)")
    .option('--ticket-id <id>', 'only entries of this ticket')
    .option('--tracker-name <name>', 'only entries of this tracker')
    .option('--output <path>', 'write the payload bytes here instead of stdout')
    .action((opts: WrapOptions, cmd: Command) => wrapAction(cli, opts, cmd))

  envelope
    .command('inspect')
    .description('parse and check an envelope payload, or an A2A message carrying one')
    .requiredOption('--file <path>', 'envelope payload or A2A message (JSON)')
    .option('--check-links', "require carried entries to chain to each other (one ticket's entries may skip other tickets')")
    .option('--require-genesis', 'require the first carried entry to start at the genesis hash')
    .option('--check-entry-hashes', 'require every carried entry_hash to recompute')
    .option('--expected-issuer <issuer>', 'require source_issuer to equal this (verified) issuer')
    .action(inspectAction)
}
