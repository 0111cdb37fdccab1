/**
 * `bernstein-a2a a2a verify`: checks an A2A response against its receipt, offline (behaviour doc §3.3, Bernstein's
 * `bernstein a2a verify`), with Bernstein's texts and exit codes. `--jwks-url` adds key pinning from a published JWKS.
 * Unlike Bernstein's, it fails closed: without a pinned key (`--trusted-jwk` or `--jwks-url`) the receipt only proves
 * its own embedded key, so it fails the `trusted_issuer` check unless `--trust-on-first-use` is given (src/cli/trust.ts).
 *
 * @module
 */
import { existsSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { type Command, Option } from 'commander'
import { isPyObject, parsePythonJson, pythonJsonDecodeText } from '../../canonical/python-json.js'
import type { PyObject, PyValue } from '../../canonical/python-json.js'
import { parseReceipt } from '../../receipts/receipt.js'
import type { A2ATaskReceipt } from '../../receipts/receipt.js'
import { verifyReceipt } from '../../receipts/receipt-verify.js'
import { ed25519Verifier, withoutReceipt } from '../../receipts/verify-a2a-receipt.js'
import { keyFingerprint } from '../../crypto/fingerprint.js'
import { decodeUtf8Strict } from '../../text/utf8.js'
import { CliFailure } from '../failure.js'
import { failedChecksLine, fail, printJson, printLines, uniqueChecks, wantsJson } from '../output.js'
import { type PinWording, TRUST_CHECK, notPinnedFailure, printPassedVerdict, trustOnFirstUseOption } from '../trust.js'

interface A2aVerifyOptions {
  receipt: string
  response: string
  trustedJwk?: string
  jwksUrl?: string
  trustOnFirstUse?: boolean
}

const PIN: PinWording = { subject: 'receipt', pinWith: '--trusted-jwk or --jwks-url' }

/** The receipt's embedded key, as `keys show` prints the node's receipt key: its kid and its fingerprint. */
function ownKey(receipt: A2ATaskReceipt): string {
  const jwk = receipt.head_signature['public_key_jwk']
  let fingerprint = 'unreadable key'
  try {
    if (isPyObject(jwk) && typeof jwk['x'] === 'string') fingerprint = keyFingerprint({ kty: 'OKP', crv: 'Ed25519', x: jwk['x'] })
  } catch {
    // An unusable key: the signature check names it.
  }
  return `kid ${receipt.kid}, fingerprint ${fingerprint}`
}

/** A failure of `a2a verify`: `✗ <message>` on stdout and exit 1, as Bernstein's CLI prints it. */
const failure = (message: string): CliFailure => new CliFailure(message, { stdout: true })

async function readJson(path: string, what: string): Promise<PyValue> {
  let text: string
  try {
    text = decodeUtf8Strict(await readFile(path))
  } catch (error) {
    const reason = error instanceof TypeError ? 'invalid UTF-8' : error instanceof Error ? error.message : String(error)
    throw failure(`could not parse ${what}: ${reason}`)
  }
  try {
    return parsePythonJson(text)
  } catch (error) {
    throw failure(`could not parse ${what}: ${pythonJsonDecodeText(error, text)}`)
  }
}

/** Fetches a JWKS and returns the key whose `kid` is the receipt's `kid`. */
async function pinnedFromJwks(url: string, kid: string): Promise<PyObject> {
  let body: string
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } })
    if (!response.ok) throw failure(`could not fetch JWKS from ${url}: HTTP ${response.status}`)
    body = await response.text()
  } catch (error) {
    if (error instanceof CliFailure) throw error
    throw failure(`could not fetch JWKS from ${url}: ${error instanceof Error ? error.message : String(error)}`)
  }
  let jwks: PyValue
  try {
    jwks = parsePythonJson(body)
  } catch (error) {
    throw failure(`could not parse JWKS from ${url}: ${pythonJsonDecodeText(error, body)}`)
  }
  const keys = isPyObject(jwks) ? jwks['keys'] : undefined
  if (!Array.isArray(keys)) throw failure(`could not parse JWKS from ${url}: no 'keys' list`)
  const match = keys.find((key): key is PyObject => isPyObject(key) && key['kid'] === kid)
  if (match === undefined) throw failure(`no key with kid '${kid}' in the JWKS at ${url}`)
  return match
}

function usageError(cmd: Command, option: string, path: string): void {
  // click's wording and exit code for a path option that must exist.
  cmd.error(`Error: Invalid value for '${option}': File '${path}' does not exist.`, { exitCode: 2, code: 'bernstein.usage' })
}

async function verifyAction(opts: A2aVerifyOptions, cmd: Command): Promise<void> {
  for (const [option, path] of [
    ['--receipt', opts.receipt],
    ['--response', opts.response],
    ['--trusted-jwk', opts.trustedJwk],
  ] as const) {
    if (path !== undefined && (!existsSync(path) || statSync(path).isDirectory())) return usageError(cmd, option, path)
  }
  const json = wantsJson(cmd)
  const receiptValue = await readJson(opts.receipt, 'receipt')
  const parsed = parseReceipt(receiptValue)
  if (!parsed.ok) throw failure(`could not parse receipt: ${parsed.detail}`)
  const receipt: A2ATaskReceipt = parsed.value

  // A receipt cannot attest its own bytes: drop it so the raw wire body can be passed as is.
  const response = withoutReceipt(await readJson(opts.response, 'response'))

  let trustedJwk: PyObject | undefined
  if (opts.trustedJwk !== undefined) {
    const jwk = await readJson(opts.trustedJwk, 'trusted JWK')
    if (!isPyObject(jwk)) throw failure('could not parse trusted JWK: a JWK must be a JSON object')
    trustedJwk = jwk
  } else if (opts.jwksUrl !== undefined) {
    trustedJwk = await pinnedFromJwks(opts.jwksUrl, receipt.kid)
  }

  const verifyOptions: Parameters<typeof verifyReceipt>[2] = { verifyEd25519: ed25519Verifier }
  if (trustedJwk !== undefined) verifyOptions.trustedJwk = trustedJwk
  const result = await verifyReceipt(receipt, response, verifyOptions)
  const pinned = trustedJwk !== undefined
  // Fails closed (src/cli/trust.ts): a signature under the receipt's own key proves nothing about who signed it.
  const unpinned = !pinned && opts.trustOnFirstUse !== true ? { check: TRUST_CHECK, text: notPinnedFailure(PIN, ownKey(receipt)) } : null

  if (!result.ok || unpinned !== null) {
    const failures = [...(result.ok ? [] : result.failures), ...(unpinned === null ? [] : [unpinned.text])]
    const checks = uniqueChecks([...(result.ok ? [] : result.failedChecks), ...(unpinned === null ? [] : [unpinned.check])])
    if (json) printJson({ ok: false, entry_hash: receipt.entry_hash, failures, failed_checks: checks })
    else printLines(`✗ A2A receipt ${opts.receipt} is NOT valid:`, ...failures.map((reason) => `  - ${reason}`), failedChecksLine(checks))
    return fail(1)
  }
  printPassedVerdict(json, pinned, PIN, {
    fields: {
      task_id: receipt.task_id,
      entry_hash: receipt.entry_hash,
      content_hash: receipt.content_hash,
      kid: receipt.kid,
      verified_key_id: result.value.verifiedKeyId,
    },
    headline: `✓ A2A receipt ${opts.receipt} is valid`,
    details: [`  task: ${receipt.task_id}  kid: ${receipt.kid}`, `  entry: ${receipt.entry_hash}`],
  })
}

/** Registers `a2a verify`. */
export function registerA2aVerify(program: Command): void {
  // Reuse an `a2a` group another module may have created.
  const a2a = program.commands.find((command) => command.name() === 'a2a') ?? program.command('a2a').description('A2A node surface: verify receipts')
  a2a
    .command('verify')
    .description('verify an A2A response against its lineage receipt, offline; exits 1 unless it is valid and its key pinned (or --trust-on-first-use)')
    .requiredOption('--receipt <file>', 'the receipt JSON returned with the A2A response')
    .requiredOption('--response <file>', 'the A2A response JSON (a top-level "receipt" key is ignored)')
    .addOption(new Option('--trusted-jwk <file>', "pin the signing key: the receipt's embedded JWK must match it").conflicts('jwksUrl'))
    .option('--jwks-url <url>', "pin the key whose kid is the receipt's kid in the JWKS at this URL")
    .addOption(trustOnFirstUseOption('receipt', ['trustedJwk', 'jwksUrl']))
    .action(verifyAction)
}
