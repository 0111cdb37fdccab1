/**
 * `bernstein-a2a lineage tracker-audit verify` and `lineage envelope wrap | inspect` (behaviour doc §7.1, §7.2).
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises'
import type { Command } from 'commander'
import { isPyObject, parsePythonJson, pythonJsonDecodeText } from '../../canonical/python-json.js'
import type { PyValue } from '../../canonical/python-json.js'
import {
  LINEAGE_ENVELOPE_FIELD,
  lineageEnvelopePayloadBytes,
  parseLineageEnvelope,
  parseLineageEnvelopeField,
  wrapLineageChain,
} from '../../lineage/envelope.js'
import type { LineageEnvelopeParseOptions } from '../../lineage/envelope.js'
import {
  AuditKeyError,
  parseTrackerLine,
  readAuditKey,
  readByteLines,
  sha256Prefixed,
  verifyTrackerAuditFile,
} from '../../lineage/tracker-audit.js'
import type { TrackerAuditEntry, TrackerAuditVerifyResult } from '../../lineage/tracker-audit.js'
import { fail, printJson, printLines, wantsJson } from '../output.js'

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function reportError(cmd: Command, message: string, code: number): void {
  if (wantsJson(cmd)) printJson({ ok: false, error: message })
  else printLines(`✗ ${message}`)
  fail(code)
}

// ---------------------------------------------------------------------------
// tracker-audit verify
// ---------------------------------------------------------------------------

/** Where to read the chain and the key from. */
export interface TrackerAuditVerifyOptions {
  file: string
  keyFile: string
}

/**
 * The core of `tracker-audit verify` for a JSONL file: reads the key file (its ASCII bytes are the key) and streams
 * the log. Throws {@link AuditKeyError} for an unusable key file.
 */
export async function runTrackerAuditVerify(options: TrackerAuditVerifyOptions): Promise<TrackerAuditVerifyResult> {
  const key = readAuditKey(options.keyFile)
  return verifyTrackerAuditFile(options.file, key)
}

/**
 * Prints a verify result in Bernstein's wording (`tracker-audit verify: OK (5 entry(ies))`, or `FAIL` and the
 * failure) or as `{ok, entries, failure}`, and sets exit code 1 on failure.
 */
export function reportTrackerAuditVerify(result: TrackerAuditVerifyResult, json: boolean): void {
  if (json) printJson(result)
  else if (result.ok) printLines(`tracker-audit verify: OK (${result.entries} entry(ies))`)
  else printLines('tracker-audit verify: FAIL', ...(result.failure === null ? [] : [`  - ${result.failure}`]))
  if (!result.ok) fail(1)
}

// ---------------------------------------------------------------------------
// envelope wrap / inspect
// ---------------------------------------------------------------------------

type EntriesRead = { ok: true; entries: TrackerAuditEntry[] } | { ok: false; error: string }

/** Reads every entry of a tracker-audit JSONL file (without verifying the chain, like Bernstein's `read()`). */
async function readTrackerEntries(path: string): Promise<EntriesRead> {
  const entries: TrackerAuditEntry[] = []
  let lineNo = 0
  for await (const raw of readByteLines(path)) {
    lineNo += 1
    const parsed = parseTrackerLine(raw, lineNo)
    if (parsed === null) continue
    if (!parsed.ok) return parsed
    entries.push(parsed.entry)
  }
  return { ok: true, entries }
}

interface WrapOptions {
  file: string
  issuer: string
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

async function wrapAction(opts: WrapOptions, cmd: Command): Promise<void> {
  let read: EntriesRead
  try {
    read = await readTrackerEntries(opts.file)
  } catch (error) {
    return reportError(cmd, `could not read ${opts.file}: ${errorText(error)}`, 1)
  }
  if (!read.ok) return reportError(cmd, `could not read ${opts.file}: ${read.error}`, 1)
  const wrapOptions: { sourceIssuer: string; ticketId?: string; trackerName?: string } = { sourceIssuer: opts.issuer }
  if (opts.ticketId !== undefined) wrapOptions.ticketId = opts.ticketId
  if (opts.trackerName !== undefined) wrapOptions.trackerName = opts.trackerName
  const envelope = wrapLineageChain(read.entries, wrapOptions)
  const bytes = lineageEnvelopePayloadBytes(envelope)
  if (opts.output === undefined) {
    // The payload is JSON either way; these are the exact canonical bytes, plus a newline for the terminal.
    process.stdout.write(Buffer.concat([bytes, Buffer.from('\n')]))
    return
  }
  await writeFile(opts.output, bytes)
  const summary = {
    ok: true,
    output: opts.output,
    source_issuer: envelope.source_issuer,
    chain_digest: envelope.chain_digest,
    entries: envelope.entries.length,
    payload_sha256: sha256Prefixed(bytes),
  }
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
    text = STRICT_UTF8.decode(await readFile(opts.file))
  } catch (error) {
    return reportError(cmd, `could not read envelope: ${errorText(error)}`, 1)
  }
  let value: PyValue
  try {
    value = parsePythonJson(text)
  } catch (error) {
    return reportError(cmd, `could not parse envelope: ${pythonJsonDecodeText(error, text)}`, 1)
  }
  const parseOptions: LineageEnvelopeParseOptions = {}
  if (opts.checkLinks) parseOptions.checkLinks = true
  if (opts.requireGenesis) parseOptions.requireGenesis = true
  if (opts.checkEntryHashes) parseOptions.checkEntryHashes = true
  if (opts.expectedIssuer !== undefined) parseOptions.expectedIssuer = opts.expectedIssuer
  // A bare payload has the envelope's own keys; anything else is read as an A2A message carrying the field.
  const carried =
    isPyObject(value) &&
    (Object.prototype.hasOwnProperty.call(value, LINEAGE_ENVELOPE_FIELD) ||
      !['source_issuer', 'chain_digest', 'entries'].some((key) => Object.prototype.hasOwnProperty.call(value, key)))
  const result = carried ? parseLineageEnvelopeField(value, parseOptions) : parseLineageEnvelope(value, parseOptions)
  const json = wantsJson(cmd)
  if (!result.ok) {
    if (json) printJson({ ok: false, code: result.error.code, error: result.error.message })
    else printLines(`✗ lineage envelope ${opts.file} is NOT valid:`, `  - ${result.error.message}`)
    return fail(1)
  }
  const envelope = result.envelope
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
    ...envelope.entries.map(
      (entry, index) =>
        `    ${index + 1}. ${entry.tracker_name} ${entry.ticket_id} ${entry.action} ${entry.entry_hash.slice(0, 23)}…`,
    ),
  )
}

/** Registers `lineage tracker-audit verify` and `lineage envelope wrap | inspect`. */
export function registerLineage(program: Command): void {
  const lineage = program.command('lineage').description('tracker-audit chains and lineage_v2 envelopes')

  const trackerAudit = lineage.command('tracker-audit').description('the signed tracker-audit log (HMAC chain)')
  trackerAudit
    .command('verify')
    .description('check chain integrity and HMACs; exits 1 at the first offending line')
    .requiredOption('--file <path>', 'tracker-audit JSONL file (a missing file is an empty, valid log)')
    .requiredOption('--key-file <path>', 'audit key file: 64 hex characters whose ASCII bytes are the key (mode 0600)')
    .action(async (opts: TrackerAuditVerifyOptions, cmd: Command) => {
      let result: TrackerAuditVerifyResult
      try {
        result = await runTrackerAuditVerify(opts)
      } catch (error) {
        // A key problem is an operator error, not tampering: exit 2 as Bernstein does without its secret.
        if (error instanceof AuditKeyError) return reportError(cmd, error.message, 2)
        return reportError(cmd, `could not read ${opts.file}: ${errorText(error)}`, 1)
      }
      reportTrackerAuditVerify(result, wantsJson(cmd))
    })

  const envelope = lineage.command('envelope').description(`the ${LINEAGE_ENVELOPE_FIELD} envelope`)
  envelope
    .command('wrap')
    .description('wrap a tracker-audit JSONL log into an envelope payload (canonical JSON)')
    .requiredOption('--file <path>', 'tracker-audit JSONL file')
    .requiredOption('--issuer <issuer>', "source_issuer: the issuer id of the sender's capability card")
    .option('--ticket-id <id>', 'only entries of this ticket')
    .option('--tracker-name <name>', 'only entries of this tracker')
    .option('--output <path>', 'write the payload bytes here instead of stdout')
    .action(wrapAction)

  envelope
    .command('inspect')
    .description('parse and check an envelope payload, or an A2A message carrying one')
    .requiredOption('--file <path>', 'envelope payload or A2A message (JSON)')
    .option('--check-links', 'require carried entries to chain to each other')
    .option('--require-genesis', 'require the first carried entry to start at the genesis hash')
    .option('--check-entry-hashes', 'require every carried entry_hash to recompute')
    .option('--expected-issuer <issuer>', 'require source_issuer to equal this (verified) issuer')
    .action(inspectAction)
}
