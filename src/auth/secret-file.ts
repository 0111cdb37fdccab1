import { randomBytes } from 'node:crypto'
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'

/**
 * Reads a secret file, or creates it with `make()` when absent. The file is created with mode 0600 from its first
 * byte (never briefly readable by others) under a temporary name and renamed into place, so a crash leaves
 * either no file or a whole one.
 */
export function readOrCreateSecretFile(path: string, make: () => string): { value: string; created: boolean } {
  try {
    return { value: readFileSync(path, 'utf8').trim(), created: false }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const value = make()
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  const fd = openSync(temporary, 'wx', 0o600)
  try {
    writeSync(fd, value + '\n')
  } finally {
    closeSync(fd)
  }
  renameSync(temporary, path)
  return { value, created: true }
}
