/**
 * An esbuild plugin that bundles one copy of each package version. npm leaves several copies of the same version
 * in node_modules when hoisting conflicts (mime-types 3.0.2 sat in express/, body-parser/ and send/ beside a
 * top-level 2.1.35), and a bundle would evaluate each: building mime-types' extension tables three times was
 * ~30 ms of the server's start-up. Every import that resolves into a copy is pointed at the same file in the
 * canonical copy of that name and version (the shallowest, then the first by path, so builds are reproducible).
 * Copies are identical code; their own dependencies then resolve from the canonical copy's place, which npm filled
 * from the same version ranges.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import type { Plugin } from 'esbuild'

interface PackageCopy {
  readonly dir: string
  readonly depth: number
}

/** Every installed package directory under `nodeModules`, nested ones included, by `name@version`. */
export function packageCopies(nodeModules: string): Map<string, string[]> {
  const found = new Map<string, PackageCopy[]>()
  const visit = (modulesDir: string, depth: number): void => {
    if (!existsSync(modulesDir)) return
    for (const entry of readdirSync(modulesDir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue
      const dirs = entry.name.startsWith('@')
        ? readdirSync(join(modulesDir, entry.name), { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => join(modulesDir, entry.name, e.name))
        : [join(modulesDir, entry.name)]
      for (const dir of dirs) {
        const manifest = readManifest(dir)
        if (manifest !== null) {
          const key = `${manifest.name}@${manifest.version}`
          const copies = found.get(key) ?? []
          copies.push({ dir, depth })
          found.set(key, copies)
        }
        visit(join(dir, 'node_modules'), depth + 1)
      }
    }
  }
  visit(nodeModules, 0)
  const byKey = new Map<string, string[]>()
  for (const [key, copies] of found) {
    copies.sort((a, b) => a.depth - b.depth || (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0))
    byKey.set(
      key,
      copies.map((c) => c.dir),
    )
  }
  return byKey
}

function readManifest(dir: string): { name: string; version: string } | null {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown }
    return typeof manifest.name === 'string' && typeof manifest.version === 'string' ? { name: manifest.name, version: manifest.version } : null
  } catch {
    return null
  }
}

/** The package directory a resolved file lies in: the path up to the last `node_modules/<name>` (or `<@scope>/<name>`). */
export function packageDirOf(file: string): string | null {
  const marker = `${sep}node_modules${sep}`
  const at = file.lastIndexOf(marker)
  if (at < 0) return null
  const rest = file.slice(at + marker.length).split(sep)
  const length = rest[0]?.startsWith('@') ? 2 : 1
  if (rest.length <= length) return null
  return file.slice(0, at + marker.length) + rest.slice(0, length).join(sep)
}

export function dedupePackages(nodeModules: string): Plugin {
  return {
    name: 'dedupe-same-version-packages',
    setup(build) {
      const canonicalDir = new Map<string, string>()
      for (const dirs of packageCopies(nodeModules).values()) for (const dir of dirs) canonicalDir.set(dir, dirs[0]!)
      // Bare specifiers only (relative imports stay inside whichever copy their importer is, the canonical one).
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if ((args.pluginData as { deduping?: true } | undefined)?.deduping) return undefined
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { deduping: true },
        })
        if (resolved.errors.length > 0 || resolved.external || resolved.namespace !== 'file') return undefined
        const dir = packageDirOf(resolved.path)
        const canonical = dir === null ? undefined : canonicalDir.get(dir)
        if (dir === null || canonical === undefined || canonical === dir) return undefined
        return { path: join(canonical, relative(dir, resolved.path)), sideEffects: resolved.sideEffects }
      })
    },
  }
}
