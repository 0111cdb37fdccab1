import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { exportPkcs8Pem, generateEd25519KeyPair, rawPublicKey } from '../../../src/crypto/ed25519.js'
import {
  InsecureKeyFile,
  keyFilePath,
  keysDirectory,
  listArchivedKeys,
  loadOrCreateKey,
  rotateKey,
  writePrivateKeyFile,
} from '../../../src/crypto/key-files.js'
import { KeyRejected } from '../../../src/crypto/key-rejected.js'

let dataDir: string

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'bernstein-a2a-keys-'))
})
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777
}

describe('writePrivateKeyFile', () => {
  it('writes a 0600 PKCS#8 PEM even under a permissive umask', async () => {
    const previous = process.umask(0o000)
    try {
      const { privateKey } = generateEd25519KeyPair()
      const path = join(dataDir, 'card.json.key.pem')
      await writePrivateKeyFile(path, privateKey)
      expect(await modeOf(path)).toBe(0o600)
      expect(await readFile(path, 'utf8')).toBe(exportPkcs8Pem(privateKey))
      expect(await readdir(dataDir)).toEqual(['card.json.key.pem'])
    } finally {
      process.umask(previous)
    }
  })

  it('replaces atomically by default and refuses to replace when exclusive', async () => {
    const path = join(dataDir, 'k.pem')
    const first = generateEd25519KeyPair().privateKey
    const second = generateEd25519KeyPair().privateKey
    await writePrivateKeyFile(path, first)
    await expect(writePrivateKeyFile(path, second, { exclusive: true })).rejects.toMatchObject({ code: 'EEXIST' })
    expect(await readFile(path, 'utf8')).toBe(exportPkcs8Pem(first))
    await writePrivateKeyFile(path, second)
    expect(await readFile(path, 'utf8')).toBe(exportPkcs8Pem(second))
    expect(await modeOf(path)).toBe(0o600)
    expect(await readdir(dataDir)).toEqual(['k.pem'])
  })
})

describe('loadOrCreateKey', () => {
  it('creates <dataDir>/keys/<name>.pem (0600) in a 0700 directory, then loads the same key', async () => {
    const created = await loadOrCreateKey(dataDir, 'capability-card')
    expect(created.created).toBe(true)
    expect(created.path).toBe(join(dataDir, 'keys', 'capability-card.pem'))
    expect(await modeOf(created.path)).toBe(0o600)
    expect(await modeOf(keysDirectory(dataDir))).toBe(0o700)
    const loaded = await loadOrCreateKey(dataDir, 'capability-card')
    expect(loaded.created).toBe(false)
    expect(rawPublicKey(loaded.publicKey)).toEqual(rawPublicKey(created.publicKey))
  })

  it('keeps the named keys apart', async () => {
    const names = ['agent-card', 'receipt', 'capability-card'] as const
    const keys = await Promise.all(names.map((name) => loadOrCreateKey(dataDir, name)))
    const raws = new Set(keys.map((k) => Buffer.from(rawPublicKey(k.publicKey)).toString('hex')))
    expect(raws.size).toBe(3)
    expect((await readdir(keysDirectory(dataDir))).sort()).toEqual(['agent-card.pem', 'capability-card.pem', 'receipt.pem'])
  })

  it('gives one key to concurrent first users', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateKey(dataDir, 'receipt')))
    const raws = new Set(keys.map((k) => Buffer.from(rawPublicKey(k.publicKey)).toString('hex')))
    expect(raws.size).toBe(1)
    expect(keys.filter((k) => k.created)).toHaveLength(1)
  })

  it('tightens an existing keys directory to 0700', async () => {
    await loadOrCreateKey(dataDir, 'receipt')
    await chmod(keysDirectory(dataDir), 0o755)
    await loadOrCreateKey(dataDir, 'receipt')
    expect(await modeOf(keysDirectory(dataDir))).toBe(0o700)
  })

  it('refuses a group/world-readable key file and a corrupt one', async () => {
    const { path } = await loadOrCreateKey(dataDir, 'agent-card')
    await chmod(path, 0o644)
    await expect(loadOrCreateKey(dataDir, 'agent-card')).rejects.toBeInstanceOf(InsecureKeyFile)
    await chmod(path, 0o600)
    await writeFile(path, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n')
    await expect(loadOrCreateKey(dataDir, 'agent-card')).rejects.toBeInstanceOf(KeyRejected)
  })

  it('rejects unknown key names as misuse', () => {
    expect(() => keyFilePath(dataDir, 'other' as 'receipt')).toThrow(TypeError)
  })
})

describe('rotateKey / listArchivedKeys', () => {
  const t0 = new Date('2026-01-02T03:04:05.678Z')

  it('archives the previous key with its rotation time and installs a new one', async () => {
    const before = await loadOrCreateKey(dataDir, 'agent-card')
    const { current, archived } = await rotateKey(dataDir, 'agent-card', { now: t0 })
    expect(rawPublicKey(current.publicKey)).not.toEqual(rawPublicKey(before.publicKey))
    expect(archived).toBeDefined()
    expect(archived?.path).toBe(join(dataDir, 'keys', 'archive', 'agent-card', '20260102T030405Z', 'private.pem'))
    expect(rawPublicKey(archived!.publicKey)).toEqual(rawPublicKey(before.publicKey))
    expect(await modeOf(archived!.path)).toBe(0o600)
    expect(await modeOf(current.path)).toBe(0o600)
    expect(await readFile(join(dataDir, 'keys', 'archive', 'agent-card', '20260102T030405Z', 'rotated_at.txt'), 'utf8')).toBe('2026-01-02T03:04:05.678Z')
    const reloaded = await loadOrCreateKey(dataDir, 'agent-card')
    expect(rawPublicKey(reloaded.publicKey)).toEqual(rawPublicKey(current.publicKey))
  })

  it('rotating with no current key archives nothing', async () => {
    const { archived, current } = await rotateKey(dataDir, 'receipt', { now: t0 })
    expect(archived).toBeUndefined()
    expect(await modeOf(current.path)).toBe(0o600)
  })

  it('keeps archived public keys for 24 h, newest first, and survives two rotations in one second', async () => {
    const first = await loadOrCreateKey(dataDir, 'agent-card')
    const r1 = await rotateKey(dataDir, 'agent-card', { now: t0 })
    const r2 = await rotateKey(dataDir, 'agent-card', { now: new Date(t0.getTime() + 300) })
    expect(r2.archived?.path).toContain('20260102T030405Z-1')
    const hex = (k: { publicKey: Parameters<typeof rawPublicKey>[0] }): string => Buffer.from(rawPublicKey(k.publicKey)).toString('hex')

    const soon = await listArchivedKeys(dataDir, 'agent-card', { now: new Date(t0.getTime() + 60_000) })
    expect(soon.map(hex)).toEqual([hex(r1.current), hex(first)])

    const almostDay = await listArchivedKeys(dataDir, 'agent-card', { now: new Date(t0.getTime() + 86_400_000 - 1) })
    expect(almostDay).toHaveLength(2)
    const afterDay = await listArchivedKeys(dataDir, 'agent-card', { now: new Date(t0.getTime() + 86_400_300) })
    expect(afterDay).toHaveLength(0)
    expect(await listArchivedKeys(dataDir, 'receipt', { now: t0 })).toEqual([])
  })
})
