/**
 * `bernstein-a2a interop a2a card | verify | conformance` (Bernstein `bernstein interop a2a …`, §5.5).
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises'
import type { KeyObject } from 'node:crypto'
import { type Command, InvalidArgumentError } from 'commander'
import { PyFloat, pythonRepr } from '../../canonical/python-json.js'
import { checkAgentCardConformance } from '../../agent-card/agent-card-conformance.js'
import { checkCardConformance } from '../../cards/card-conformance.js'
import { decodeCardFile, parseCardFile, serializeCardFile } from '../../cards/card-file.js'
import type { SignedCapabilityCard } from '../../cards/capability-card.js'
import { issueCapabilityCard } from '../../cards/issue-capability-card.js'
import { OPEN_REQUIREMENTS, policiesMeetRequirements } from '../../cards/policy-gate.js'
import { type CardVerifyFailure, verifyCapabilityCard } from '../../cards/verify-capability-card.js'
import { generateEd25519KeyPair, privateKeyFromPem } from '../../crypto/ed25519.js'
import { keyFingerprint } from '../../crypto/fingerprint.js'
import { writePrivateKeyFile } from '../../crypto/key-files.js'
import { KeyRejected } from '../../crypto/key-rejected.js'
import { CliFailure } from '../failure.js'
import { failedChecksLine, fail, printJson, printLines, uniqueChecks, wantsJson } from '../output.js'
import { type PinWording, TRUST_CHECK, notPinnedFailure, printPassedVerdict, trustOnFirstUseOption } from '../trust.js'

const PIN: PinWording = { subject: 'card', pinWith: '--trusted-fingerprint' }

/** Bernstein's defaults for `interop a2a card` (§5.5). */
const CARD_DEFAULTS = {
  name: 'bernstein-orchestrator',
  description: 'Bernstein, a deterministic orchestrator for CLI coding agents',
  tools: ['task_orchestration', 'code_review'],
  costCapUsd: 10,
  redactionTier: 'standard',
  sandboxProfile: 'container',
  ttlSeconds: 86_400,
  output: 'card.json',
} as const

interface CardOptions {
  issuer: string
  name: string
  description: string
  kid?: string
  tool?: string[]
  costCapUsd: number
  redactionTier: string
  sandboxProfile: string
  ttlSeconds: number
  privateKey?: string
  output: string
}

interface VerifyOptions {
  card: string
  trustedFingerprint?: string[]
  trustOnFirstUse?: boolean
  requireCostCapUsd?: number
  requireRedactionTier?: string
  requireSandboxProfile?: string
}

interface ConformanceOptions {
  card?: string
  agentCard?: string
  jwks?: string
  now?: number
  trustedFingerprint?: string[]
}

export function registerInterop(program: Command): void {
  const a2a = program
    .command('interop')
    .description('cross-organisation interop surfaces')
    .command('a2a')
    .description('signed A2A capability cards and v1.0 agent cards')

  a2a
    .command('card')
    .description('issue a signed capability card (detached Ed25519 JWS over the JCS body)')
    .requiredOption('--issuer <id>', 'issuer identity written into the card')
    .option('--name <name>', 'display name', CARD_DEFAULTS.name)
    .option('--description <text>', 'description', CARD_DEFAULTS.description)
    .option('--kid <kid>', 'key id (default: a2a-<issuer>)')
    .option('--tool <name>', `advertised tool, repeatable (default: ${CARD_DEFAULTS.tools.join(', ')})`, collect)
    .option('--cost-cap-usd <usd>', 'advertised cost cap in USD', nonNegativeNumber, CARD_DEFAULTS.costCapUsd)
    .option('--redaction-tier <tier>', 'advertised redaction tier', CARD_DEFAULTS.redactionTier)
    .option('--sandbox-profile <profile>', 'advertised sandbox profile', CARD_DEFAULTS.sandboxProfile)
    .option('--ttl-seconds <seconds>', 'lifetime in seconds, 0 = never expires', nonNegativeInteger, CARD_DEFAULTS.ttlSeconds)
    .option('--private-key <pem>', 'PKCS#8 PEM signing key (default: mint one and write <output>.key.pem)')
    .option('--output <file>', 'where to write the card', CARD_DEFAULTS.output)
    .action(async (opts: CardOptions, cmd: Command) => issueCard(opts, wantsJson(cmd)))

  a2a
    .command('verify')
    .description('verify a capability card: signature, expiry, pinned fingerprint, optionally policies; exits 1 unless every check passes')
    .requiredOption('--card <file>', 'card file to verify')
    .option('--trusted-fingerprint <fp>', 'trusted issuer key fingerprint (sha256:…), repeatable; at least one, unless --trust-on-first-use', collect)
    .addOption(trustOnFirstUseOption('card', ['trustedFingerprint']))
    .option('--require-cost-cap-usd <usd>', 'highest acceptable advertised cost cap', nonNegativeNumber)
    .option('--require-redaction-tier <tier>', 'weakest acceptable redaction tier')
    .option('--require-sandbox-profile <profile>', 'weakest acceptable sandbox profile')
    .action(async (opts: VerifyOptions, cmd: Command) => verifyCard(opts, wantsJson(cmd)))

  a2a
    .command('conformance')
    .description('per-check conformance report for a capability card (--card) or a v1.0 agent card (--agent-card, --jwks)')
    .option('--card <file>', 'capability card file')
    .option('--agent-card <file>', "Bernstein's v1.0 agent card (the JCS bytes served at /.well-known/agent.json)")
    .option('--jwks <file>', 'JWKS that should hold the agent card key')
    .option('--now <seconds>', 'evaluate at this Unix time (default: now)', finiteNumber)
    .option('--trusted-fingerprint <fp>', 'trusted agent card key fingerprint, repeatable; adds a trust check', collect)
    .action(async (opts: ConformanceOptions, cmd: Command) => {
      const json = wantsJson(cmd)
      if ((opts.card === undefined) === (opts.agentCard === undefined)) {
        cmd.error('error: give exactly one of --card or --agent-card')
      }
      if (opts.agentCard !== undefined) {
        if (opts.jwks === undefined) cmd.error('error: --agent-card needs --jwks')
        return agentCardConformance(opts.agentCard, opts.jwks as string, opts, json)
      }
      return cardConformance(opts.card as string, opts.now ?? Date.now() / 1000, json)
    })
}

async function issueCard(opts: CardOptions, json: boolean): Promise<void> {
  let privateKey: KeyObject
  let keyPath: string | null = null
  try {
    if (opts.privateKey !== undefined) {
      privateKey = privateKeyFromPem(await readFile(opts.privateKey, 'utf8'))
    } else {
      privateKey = generateEd25519KeyPair().privateKey
      keyPath = `${opts.output}.key.pem`
      // Exclusive: silently replacing an existing key would throw away an identity peers may have pinned.
      await writePrivateKeyFile(keyPath, privateKey, { exclusive: true })
    }
    const signed = await issueCapabilityCard({
      issuer: opts.issuer,
      name: opts.name,
      description: opts.description,
      tools: opts.tool ?? CARD_DEFAULTS.tools,
      policies: { cost_cap_usd: opts.costCapUsd, redaction_tier: opts.redactionTier, sandbox_profile: opts.sandboxProfile },
      ttlSeconds: opts.ttlSeconds,
      privateKey,
      ...(opts.kid === undefined ? {} : { kid: opts.kid }),
    })
    await writeFile(opts.output, serializeCardFile(signed))
    const fingerprint = keyFingerprint(signed.card.public_key_pem)
    if (json) {
      printJson({
        ok: true,
        output: opts.output,
        issuer: signed.card.issuer,
        kid: signed.card.kid,
        fingerprint,
        expires_at: signed.card.expires_at,
        private_key: keyPath,
      })
      return
    }
    printLines(
      `✓ Capability card written to ${opts.output}`,
      `  issuer: ${signed.card.issuer}  kid: ${signed.card.kid}`,
      `  fingerprint: ${fingerprint}`,
      ...(keyPath === null ? [] : [`  private key (keep safe, 0600): ${keyPath}`]),
    )
  } catch (error) {
    const message =
      (error as NodeJS.ErrnoException).code === 'EEXIST' && keyPath !== null
        ? `private key file ${keyPath} already exists; pass --private-key ${keyPath} to re-issue with it, or move it away`
        : (error as Error).message
    throw new CliFailure(`could not issue capability card: ${message}`)
  }
}

async function verifyCard(opts: VerifyOptions, json: boolean): Promise<void> {
  let signed: SignedCapabilityCard
  try {
    signed = parseCardFile(await readFile(opts.card, 'utf8'))
  } catch (error) {
    throw new CliFailure(`could not parse capability card: ${(error as Error).message}`)
  }
  // Every failed check: its name (`failed_checks` with --json) and its text.
  const failures: { check: string; text: string }[] = []
  const verified = await verifyCapabilityCard(signed, { now: Date.now() / 1000 })
  if (!verified.ok) {
    const detail = verified.code === 'expired' ? `expires_at=${pythonRepr(new PyFloat(signed.card.expires_at))}` : verified.detail
    failures.push({ check: CARD_CHECK[verified.code], text: `${CARD_FAILURE_TEXT[verified.code]} (${detail})` })
  }
  const fingerprint = fingerprintOrNull(signed.card.public_key_pem)
  const trusted = opts.trustedFingerprint ?? []
  // Fails closed (src/cli/trust.ts): a card vouches for whoever holds its key, so without a pin it proves nothing about the issuer.
  if (trusted.length === 0 && opts.trustOnFirstUse !== true) {
    failures.push({ check: TRUST_CHECK, text: notPinnedFailure(PIN, fingerprint ?? 'unreadable key') })
  } else if (trusted.length > 0 && (fingerprint === null || !trusted.includes(fingerprint))) {
    failures.push({ check: TRUST_CHECK, text: `key fingerprint ${fingerprint ?? '(unreadable key)'} is not in the trusted-issuer set` })
  }
  const policyRequested = opts.requireCostCapUsd !== undefined || opts.requireRedactionTier !== undefined || opts.requireSandboxProfile !== undefined
  if (policyRequested) {
    const gate = policiesMeetRequirements(signed.card.policies, {
      maxCostCapUsd: opts.requireCostCapUsd ?? OPEN_REQUIREMENTS.maxCostCapUsd,
      minRedactionTier: opts.requireRedactionTier ?? OPEN_REQUIREMENTS.minRedactionTier,
      minSandboxProfile: opts.requireSandboxProfile ?? OPEN_REQUIREMENTS.minSandboxProfile,
    })
    if (!gate.ok) failures.push(...gate.failures.map((text) => ({ check: 'policy', text })))
  }
  if (failures.length > 0) {
    fail(1)
    const texts = failures.map((f) => f.text)
    const checks = uniqueChecks(failures.map((f) => f.check))
    if (json) return printJson({ ok: false, fingerprint, failures: texts, failed_checks: checks })
    return printLines(`✗ Capability card ${opts.card} is NOT valid:`, ...texts.map((reason) => `  - ${reason}`), failedChecksLine(checks))
  }
  const { card } = signed
  const pinned = trusted.length > 0
  printPassedVerdict(json, pinned, PIN, {
    fields: { issuer: card.issuer, kid: card.kid, fingerprint, expires_at: card.expires_at },
    headline: `✓ Capability card ${opts.card} is valid`,
    details: [`  issuer: ${card.issuer}  kid: ${card.kid}`, `  fingerprint: ${fingerprint}`],
  })
}

/**
 * The name of the check a card failed (`--json`'s `failed_checks`), beside `trusted_issuer` and `policy`; the names of
 * the conformance reports where they are the same check.
 */
const CARD_CHECK: Readonly<Record<CardVerifyFailure, string>> = {
  malformed: 'format',
  alg: 'jws_header',
  typ: 'jws_header',
  kid_mismatch: 'kid',
  key: 'key',
  signature: 'signature',
  invalid_lifetime: 'expiry',
  not_yet_valid: 'expiry',
  expired: 'expiry',
}

/** Which check of the card failed, in words (the detail follows in parentheses). */
const CARD_FAILURE_TEXT: Readonly<Record<CardVerifyFailure, string>> = {
  malformed: 'card is malformed',
  alg: 'signature algorithm is not EdDSA',
  typ: 'signature header has the wrong typ',
  kid_mismatch: 'key id of the signature does not match the card',
  key: 'public key is unusable',
  signature: 'signature is invalid',
  invalid_lifetime: 'card expires before it was created',
  not_yet_valid: 'card was created in the future',
  expired: 'card has expired',
}

async function cardConformance(path: string, now: number, json: boolean): Promise<void> {
  let value: unknown
  try {
    value = decodeCardFile(await readFile(path, 'utf8'))
  } catch (error) {
    throw new CliFailure(`could not parse capability card: ${(error as Error).message}`)
  }
  const report = await checkCardConformance(value, now)
  if (!report.ok) fail(1)
  if (json) return printJson({ card: path, ...report })
  printLines(
    ...report.checks.map((check) => `${check.passed ? 'PASS' : 'FAIL'} ${check.name}: ${check.detail}`),
    report.ok ? `✓ Capability card ${path} conforms` : `✗ Capability card ${path} does NOT conform`,
  )
}

async function agentCardConformance(path: string, jwksPath: string, opts: ConformanceOptions, json: boolean): Promise<void> {
  let card: Uint8Array
  let jwksText: string
  try {
    card = await readFile(path)
    jwksText = await readFile(jwksPath, 'utf8')
  } catch (error) {
    throw new CliFailure(`could not read agent card or JWKS: ${(error as Error).message}`)
  }
  let jwks: unknown
  try {
    jwks = JSON.parse(jwksText)
  } catch {
    jwks = undefined // reported by the kid_resolves check as unresolvable_jwks
  }
  const report = await checkAgentCardConformance(card, jwks, {
    now: opts.now ?? Date.now() / 1000,
    ...(opts.trustedFingerprint === undefined ? {} : { trustedFingerprints: opts.trustedFingerprint }),
  })
  if (!report.ok) fail(1)
  // The shape of every other check report (`--card`, Bernstein's): {name, passed, detail}, a skipped check marked.
  const checks = report.checks.map((check) => ({
    name: check.name,
    passed: check.outcome === 'pass',
    detail: check.detail,
    ...(check.outcome === 'skip' && { skipped: true }),
    ...(check.reason !== undefined && { reason: check.reason }),
  }))
  if (json) return printJson({ agent_card: path, ...report, checks })
  printLines(
    ...report.checks.map((check) => `${check.outcome.toUpperCase()} ${check.name}: ${check.detail}`),
    report.ok ? `✓ Agent card ${path} conforms` : `✗ Agent card ${path} rejected (${report.reason ?? 'unknown'})`,
  )
}

function fingerprintOrNull(pem: string): string | null {
  try {
    return keyFingerprint(pem)
  } catch (error) {
    if (error instanceof KeyRejected) return null
    throw error
  }
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value]
}

function finiteNumber(value: string): number {
  const number = Number(value)
  if (value.trim() === '' || !Number.isFinite(number)) throw new InvalidArgumentError(`'${value}' is not a number`)
  return number
}

function nonNegativeNumber(value: string): number {
  const number = finiteNumber(value)
  if (number < 0) throw new InvalidArgumentError(`'${value}' must not be negative`)
  return number
}

function nonNegativeInteger(value: string): number {
  const number = nonNegativeNumber(value)
  if (!Number.isInteger(number)) throw new InvalidArgumentError(`'${value}' is not a whole number`)
  return number
}
