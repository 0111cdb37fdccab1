import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseCardFile } from '../../../src/cards/card-file.js'
import { consumePeerCard } from '../../../src/cards/consume-peer-card.js'
import { OPEN_REQUIREMENTS } from '../../../src/cards/policy-gate.js'
import { publicKeyFromPem } from '../../../src/crypto/ed25519.js'
import { loadOrCreateKey } from '../../../src/crypto/key-files.js'
import { TrustError, type TrustErrorCode } from '../../../src/errors.js'
import { readAuditKey } from '../../../src/lineage/audit-key.js'
import { vectorText } from '../../helpers/vectors.js'

async function thrown(run: () => unknown): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

/** What a caller sees: one base class, and a code to branch on. */
function describeTrust(error: unknown): string {
  if (!(error instanceof TrustError)) throw error
  const code: TrustErrorCode = error.code
  switch (code) {
    case 'malformed_key':
    case 'not_ed25519':
    case 'wrong_key_type':
      return `key: ${error.name}`
    case 'insecure_key_file':
      return `key file: ${error.name}`
    case 'invalid_card':
    case 'kid_mismatch':
      return `card: ${error.name}`
    case 'issuer_mismatch':
    case 'signature':
    case 'untrusted_issuer':
    case 'policy':
      return `peer card: ${error.name}`
    case 'missing':
    case 'insecure_permissions':
    case 'empty':
      return `audit key: ${error.name}`
  }
}

describe('TrustError: the one base of the trust primitives’ errors', () => {
  it('is what a bad key, key file, card, peer card and audit key throw, each with its code', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'trust-error-'))
    try {
      const keysDir = join(scratch, 'keys')
      await loadOrCreateKey(scratch, 'agent-card')
      chmodSync(join(keysDir, 'agent-card.pem'), 0o644)
      writeFileSync(join(scratch, 'audit.key'), '')
      chmodSync(join(scratch, 'audit.key'), 0o600)
      const cases: Array<[unknown, TrustErrorCode, string]> = [
        [await thrown(() => publicKeyFromPem('nope')), 'malformed_key', 'key: KeyRejected'],
        [await thrown(() => loadOrCreateKey(scratch, 'agent-card')), 'insecure_key_file', 'key file: InsecureKeyFile'],
        [await thrown(() => parseCardFile('{}')), 'invalid_card', 'card: CapabilityCardInvalid'],
        [
          await thrown(() =>
            consumePeerCard(parseCardFile(vectorText('capability_cards', 'card_a.signed.json')), {
              trustedIssuerFingerprints: [],
              requirements: OPEN_REQUIREMENTS,
              now: 1700000100,
            }),
          ),
          'untrusted_issuer',
          'peer card: PeerCardRejected',
        ],
        [await thrown(() => readAuditKey(join(scratch, 'audit.key'))), 'empty', 'audit key: AuditKeyError'],
      ]
      for (const [error, code, described] of cases) {
        expect(error).toBeInstanceOf(TrustError)
        expect(error).toBeInstanceOf(Error)
        expect((error as TrustError).code).toBe(code)
        expect(describeTrust(error)).toBe(described)
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  })

  it('leaves programmer errors as TypeErrors', () => {
    expect(() => publicKeyFromPem(5 as unknown as string)).toThrow(TypeError)
    expect(() => describeTrust(new TypeError('x'))).toThrow(TypeError)
  })
})
