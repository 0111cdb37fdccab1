/**
 * Private keys on disk: PKCS#8 PEM files that are 0600 from their first byte, in a 0700 directory.
 *
 * Every write goes to a fresh temporary file opened with `O_CREAT|O_EXCL` and mode 0600, is fsynced, and only
 * then appears under its real name (rename, or link when the name must not exist yet). Bernstein writes first and
 * chmods afterwards (§10), which leaves a window where the key is readable; this module has no such window.
 *
 * Layout under `<dataDir>/keys/`: `<name>.pem` for the current key; a rotation moves the previous one to
 * `archive/<name>/<YYYYmmddTHHMMSSZ>/private.pem` with `rotated_at.txt` beside it, so its public key can stay in
 * the JWKS for a grace period (24 h by default, as in Bernstein §6.3).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import type { KeyObject } from 'node:crypto'
import { chmod, link, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { TrustError } from '../errors.js'
import { exportPkcs8Pem, generateEd25519KeyPair, privateKeyFromPem, publicKeyOf } from './ed25519.js'

/** The node's signing keys. */
export type KeyName = 'agent-card' | 'receipt' | 'capability-card'

export interface StoredKey {
  name: KeyName
  path: string
  privateKey: KeyObject
  publicKey: KeyObject
  /** True when this call generated the key. */
  created: boolean
}

export interface ArchivedKey {
  name: KeyName
  path: string
  publicKey: KeyObject
  rotatedAt: Date
}

export interface RotateKeyOptions {
  /** Rotation time (injected for tests); defaults to the current time. */
  now?: Date
}

export interface ListArchivedKeysOptions {
  now?: Date
  /** How long a rotated-out public key stays publishable; Bernstein keeps it 24 h. */
  graceSeconds?: number
}

export type InsecureKeyFileCode = 'insecure_key_file'

/** Thrown when a key file exists but is readable by group or others: the key may have leaked, so it is not used. */
export class InsecureKeyFile extends TrustError<InsecureKeyFileCode> {
  override readonly name = 'InsecureKeyFile'
  readonly path: string

  constructor(path: string, mode: number) {
    super('insecure_key_file', `key file ${path} has mode 0${(mode & 0o777).toString(8)}; expected 0600`)
    this.path = path
  }
}

const KEY_NAMES: readonly KeyName[] = ['agent-card', 'receipt', 'capability-card']
const DAY_SECONDS = 24 * 60 * 60

/** `<dataDir>/keys` */
export function keysDirectory(dataDir: string): string {
  return join(dataDir, 'keys')
}

/** `<dataDir>/keys/<name>.pem` */
export function keyFilePath(dataDir: string, name: KeyName): string {
  assertKeyName(name)
  return join(keysDirectory(dataDir), `${name}.pem`)
}

/**
 * Writes `privateKey` as PKCS#8 PEM to `path`, mode 0600 from the first byte. With `exclusive`, fails with
 * `EEXIST` when `path` already exists (and leaves it alone); otherwise replaces it atomically.
 *
 * @example await writePrivateKeyFile('card.json.key.pem', privateKey)
 */
export async function writePrivateKeyFile(path: string, privateKey: KeyObject, { exclusive = false }: { exclusive?: boolean } = {}): Promise<void> {
  await writeSecretFile(path, exportPkcs8Pem(privateKey), exclusive)
}

/**
 * Loads `<dataDir>/keys/<name>.pem`, creating it (and the 0700 directory) on first use. Two processes racing on
 * first use end up with the same key: creation is exclusive and the loser loads the winner's file.
 *
 * @throws KeyRejected when the file is not an Ed25519 PKCS#8 PEM; InsecureKeyFile when it is group/world readable.
 */
export async function loadOrCreateKey(dataDir: string, name: KeyName): Promise<StoredKey> {
  const path = keyFilePath(dataDir, name)
  await ensurePrivateDirectory(dirname(path))
  const existing = await readKeyFile(path)
  if (existing) return { name, path, privateKey: existing, publicKey: publicKeyOf(existing), created: false }
  const { privateKey, publicKey } = generateEd25519KeyPair()
  try {
    await writePrivateKeyFile(path, privateKey, { exclusive: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const winner = await readKeyFile(path)
    if (!winner) throw error
    return { name, path, privateKey: winner, publicKey: publicKeyOf(winner), created: false }
  }
  return { name, path, privateKey, publicKey, created: true }
}

/**
 * Loads `<dataDir>/keys/<name>.pem` without creating anything; undefined when there is no such file.
 *
 * @throws KeyRejected when the file is not an Ed25519 PKCS#8 PEM; InsecureKeyFile when it is group/world readable.
 */
export async function readStoredKey(dataDir: string, name: KeyName): Promise<StoredKey | undefined> {
  const path = keyFilePath(dataDir, name)
  const privateKey = await readKeyFile(path)
  return privateKey && { name, path, privateKey, publicKey: publicKeyOf(privateKey), created: false }
}

/**
 * Replaces the current key with a fresh one. The previous key (if any) is first archived with its rotation time;
 * readers always see either the old or the new key under the current name, never no key.
 */
export async function rotateKey(
  dataDir: string,
  name: KeyName,
  { now = new Date() }: RotateKeyOptions = {},
): Promise<{ current: StoredKey; archived: ArchivedKey | undefined }> {
  const path = keyFilePath(dataDir, name)
  await ensurePrivateDirectory(dirname(path))
  const previous = await readKeyFile(path)
  let archived: ArchivedKey | undefined
  if (previous) {
    const archiveDir = await createArchiveDirectory(dataDir, name, now)
    const archivedPath = join(archiveDir, 'private.pem')
    await writeSecretFile(join(archiveDir, 'rotated_at.txt'), now.toISOString(), true)
    // A hard link keeps the 0600 file as it is; the current name is then replaced atomically below.
    await link(path, archivedPath)
    archived = { name, path: archivedPath, publicKey: publicKeyOf(previous), rotatedAt: now }
  }
  const { privateKey, publicKey } = generateEd25519KeyPair()
  await writePrivateKeyFile(path, privateKey)
  return { current: { name, path, privateKey, publicKey, created: true }, archived }
}

/**
 * Archived keys of `name` rotated out less than `graceSeconds` ago (default 24 h), newest first: the public keys
 * a JWKS keeps publishing so signatures made just before a rotation still verify.
 */
export async function listArchivedKeys(
  dataDir: string,
  name: KeyName,
  { now = new Date(), graceSeconds = DAY_SECONDS }: ListArchivedKeysOptions = {},
): Promise<ArchivedKey[]> {
  const base = join(keysDirectory(dataDir), 'archive', name)
  let stamps: string[]
  try {
    stamps = await readdir(base)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const found: ArchivedKey[] = []
  for (const stamp of stamps) {
    const dir = join(base, stamp)
    let rotatedAt: Date
    try {
      rotatedAt = new Date((await readFile(join(dir, 'rotated_at.txt'), 'utf8')).trim())
    } catch {
      continue
    }
    const ageSeconds = (now.getTime() - rotatedAt.getTime()) / 1000
    if (Number.isNaN(ageSeconds) || ageSeconds < 0 || ageSeconds >= graceSeconds) continue
    const privateKey = await readKeyFile(join(dir, 'private.pem'))
    if (privateKey) found.push({ name, path: join(dir, 'private.pem'), publicKey: publicKeyOf(privateKey), rotatedAt })
  }
  return found.sort((a, b) => b.rotatedAt.getTime() - a.rotatedAt.getTime())
}

async function readKeyFile(path: string): Promise<KeyObject | undefined> {
  let mode: number
  try {
    mode = (await stat(path)).mode
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  if ((mode & 0o077) !== 0) throw new InsecureKeyFile(path, mode)
  return privateKeyFromPem(await readFile(path, 'utf8'))
}

async function writeSecretFile(path: string, content: string, exclusive: boolean): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  const handle = await open(temp, 'wx', 0o600)
  try {
    try {
      await handle.writeFile(content, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    // link() refuses an existing target (O_EXCL semantics); rename() replaces it atomically.
    if (exclusive) await link(temp, path)
    else await rename(temp, path)
  } finally {
    await unlink(temp).catch(() => undefined)
  }
  await syncDirectory(dirname(path))
}

async function ensurePrivateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  // mkdir leaves an existing directory's mode alone, and the umask may have narrowed a new one oddly.
  await chmod(dir, 0o700)
}

async function createArchiveDirectory(dataDir: string, name: KeyName, now: Date): Promise<string> {
  const base = join(keysDirectory(dataDir), 'archive', name)
  await ensurePrivateDirectory(base)
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  for (let attempt = 0; ; attempt += 1) {
    const dir = join(base, attempt === 0 ? stamp : `${stamp}-${attempt}`)
    try {
      await mkdir(dir, { mode: 0o700 })
      await chmod(dir, 0o700)
      return dir
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 100) throw error
    }
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } catch {
    // Some filesystems refuse fsync on a directory; the rename itself has still happened.
  } finally {
    await handle.close()
  }
}

function assertKeyName(name: KeyName): void {
  if (!KEY_NAMES.includes(name)) throw new TypeError(`unknown key name ${JSON.stringify(name)}`)
}
