/**
 * Bundles the compiled CLI (`dist/cli/main.js`, from `tsc -p tsconfig.build.json`) into one ES module,
 * `dist/bundle/bernstein-a2a.mjs`, which `bin/bernstein-a2a.js` runs when present.
 *
 * Why: start-up was dominated by loading about a thousand small modules (express and its middleware, ajv, kysely,
 * jose…): resolving, reading and compiling each one. One file cuts that part by more than half, and dropping
 * whitespace and dead branches (names are kept) cuts V8's parse of it by another third. `dist/bundle/*.map` maps it
 * back to the compiled modules for stack traces (`NODE_OPTIONS=--enable-source-maps`). Several installed copies of
 * one package version go into it once (scripts/dedupe-packages.ts).
 *
 * Left outside the bundle, and loaded from node_modules at run time:
 * - better-sqlite3: a native addon;
 * - path-to-regexp: Express's router and the validator each load it; left outside, they share the one copy in
 *   node_modules (the validator's operation lookup itself is replaced by src/http/validator-patches.ts, which matches
 *   with the contract's own matcher, src/http/path-templates.ts).
 * pg (loaded on first use of PostgreSQL, through createRequire) and swagger-ui-dist (only its directory is resolved,
 * to serve its files) are never imported statically, so they stay out by themselves.
 *
 * Usage: `tsx scripts/bundle.ts` (part of `npm run build`).
 */
import { build } from 'esbuild'
import { mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { dedupePackages } from './dedupe-packages.js'
import { BUNDLE_FILE } from './ensure-built.mjs'

export const BUNDLE_EXTERNALS = ['better-sqlite3', 'path-to-regexp'] as const

export function bundlePath(root: string): string {
  return join(root, BUNDLE_FILE)
}

export async function bundleCli(root: string): Promise<string> {
  const outfile = bundlePath(root)
  const result = await build({
    entryPoints: [join(root, 'dist', 'cli', 'main.js')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: [...BUNDLE_EXTERNALS],
    plugins: [dedupePackages(join(root, 'node_modules'))],
    // CommonJS dependencies call require(); an ES module has none, so the bundle makes one for its own location.
    banner: { js: "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);" },
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    // The map points at dist/**/*.js and node_modules, which ship beside the bundle; copying their text in would
    // triple its size for nothing.
    sourcesContent: false,
    legalComments: 'linked',
    logLevel: 'warning',
    write: false,
  })
  // Each file replaced by a rename, never rewritten in place: a server starting during a build (or a test spawning
  // the CLI while another runs `npm run build`) reads the old bundle or the new one, never half of one.
  mkdirSync(dirname(outfile), { recursive: true })
  for (const file of result.outputFiles) {
    const partial = `${file.path}.${process.pid}.partial`
    writeFileSync(partial, file.contents, { mode: file.path === outfile ? 0o755 : 0o644 })
    renameSync(partial, file.path)
  }
  return outfile
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..')
  await bundleCli(root)
}
