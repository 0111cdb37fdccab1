import { type Command, Option } from 'commander'
import { keyFingerprint } from '../../crypto/fingerprint.js'
import { jwkThumbprint } from '../../crypto/jwk-thumbprint.js'
import { jwksEntry } from '../../crypto/jwks.js'
import { type KeyName, keyFilePath, readStoredKey, rotateKey } from '../../crypto/key-files.js'
import { AGENT_CARD_KID_PREFIX, RECEIPT_KID_PREFIX, derivedKid } from '../../identity/node-keys.js'
import type { CliContext } from '../context.js'
import { CliFailure } from '../failure.js'
import { printJson, printLines, wantsJson } from '../output.js'

const ALL: readonly KeyName[] = ['agent-card', 'receipt', 'capability-card']

/** What each key signs, and where a peer or a verifier uses its fingerprint. */
const PINNED_BY: Readonly<Record<KeyName, string>> = {
  'capability-card':
    'the capability card: peers pin this fingerprint (`delegate --trusted-fingerprint`, BERNSTEIN_TRUSTED_PEER_FINGERPRINTS, `interop a2a verify --trusted-fingerprint`)',
  'agent-card': 'the v1.0 agent card (`interop a2a conformance --trusted-fingerprint`); published in the JWKS under its kid',
  receipt: 'A2A receipts (`a2a verify --jwks-url <node>/.well-known/agent.json/keys` picks it by kid, `--trusted-jwk` pins it)',
}

/** The node's current keys, read without creating any: name, fingerprint, kid and, for the receipt key, its JWK. */
async function describeKeys(dataDir: string) {
  const described = []
  // The order an operator needs them in: what peers pin first.
  for (const name of ['capability-card', 'agent-card', 'receipt'] as const) {
    const key = await readStoredKey(dataDir, name)
    if (key === undefined) {
      throw new CliFailure(`no ${name} key at ${keyFilePath(dataDir, name)}: start the server once (it creates the keys), or run: bernstein-a2a keys rotate`)
    }
    const kid =
      name === 'agent-card' ? derivedKid(AGENT_CARD_KID_PREFIX, key.publicKey) : name === 'receipt' ? derivedKid(RECEIPT_KID_PREFIX, key.publicKey) : null
    const jwk = name === 'receipt' && kid !== null ? jwksEntry(key.publicKey, kid) : null
    described.push({
      key: name,
      fingerprint: keyFingerprint(key.publicKey),
      kid,
      // RFC 7638, over the key's required members only: the same whatever kid or alg a JWKS gives it.
      ...(jwk !== null && { jwk, jwk_thumbprint: await jwkThumbprint(jwk) }),
      path: key.path,
      used_for: PINNED_BY[name],
    })
  }
  return described
}

export function registerKeys(program: Command, cli: CliContext): void {
  const keys = program.command('keys').description("the node's Ed25519 signing keys in <data dir>/keys (0600)")
  keys
    .command('show')
    .description("print the node's key fingerprints (what peers pin) and kids; reads the keys, creates nothing")
    .action(async (_opts: unknown, cmd: Command) => {
      const described = await describeKeys(cli.config.dataDir)
      if (wantsJson(cmd)) return printJson({ ok: true, keys: described })
      printLines(
        ...described.flatMap((k) => [
          `${k.key}: ${k.fingerprint}`,
          ...(k.kid === null ? [] : [`  kid: ${k.kid}`]),
          ...('jwk_thumbprint' in k ? [`  jwk thumbprint (RFC 7638): ${k.jwk_thumbprint}`] : []),
          `  signs ${k.used_for}`,
        ]),
      )
    })
  keys
    .command('rotate')
    .description('make new keys, used from the next start of the server; old public keys stay in the JWKS for 24 hours')
    .addOption(new Option('--key <name>', 'which key').choices([...ALL, 'all']).default('all'))
    .action(async (opts: { key: KeyName | 'all' }, cmd: Command) => {
      const config = cli.config
      const names = opts.key === 'all' ? ALL : [opts.key]
      const rotated = []
      for (const name of names) {
        const { current, archived } = await rotateKey(config.dataDir, name)
        rotated.push({
          key: name,
          fingerprint: keyFingerprint(current.publicKey),
          previous_fingerprint: archived ? keyFingerprint(archived.publicKey) : null,
          path: current.path,
        })
      }
      if (wantsJson(cmd)) return printJson({ ok: true, rotated })
      printLines(
        ...rotated.map((r) => `✓ ${r.key}: ${r.previous_fingerprint ?? '(none)'} -> ${r.fingerprint}`),
        'Restart the server (every replica) to sign with the new keys.',
      )
    })
}
