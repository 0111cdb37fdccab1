import { type Command, Option } from 'commander'
import { keyFingerprint } from '../../crypto/fingerprint.js'
import { type KeyName, rotateKey } from '../../crypto/key-files.js'
import type { CliContext } from '../context.js'
import { printJson, printLines, wantsJson } from '../output.js'

const ALL: readonly KeyName[] = ['agent-card', 'receipt', 'capability-card']

export function registerKeys(program: Command, cli: CliContext): void {
  const keys = program.command('keys').description("the node's Ed25519 signing keys in <data dir>/keys (0600)")
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
