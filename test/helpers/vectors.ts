import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root (tests live in <root>/test/...). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Bernstein-made and RFC vectors live read-only beside the repository, in ../shared/vectors. */
export const vectorsDir = resolve(repoRoot, '..', 'shared', 'vectors')

export function vectorPath(...parts: string[]): string {
  return resolve(vectorsDir, ...parts)
}

/** Exact bytes of a vector file (never re-serialise before comparing). */
export function vectorBytes(...parts: string[]): Buffer {
  return readFileSync(vectorPath(...parts))
}

export function vectorText(...parts: string[]): string {
  return readFileSync(vectorPath(...parts), 'utf8')
}

/** A description file, compared by parsed value. */
export function vectorJson<T = unknown>(...parts: string[]): T {
  return JSON.parse(vectorText(...parts)) as T
}
