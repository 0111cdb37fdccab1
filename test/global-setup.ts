import { ensureBuilt } from '../scripts/ensure-built.mjs'
import { repoRoot } from './helpers/vectors.js'

/**
 * Builds `dist/` (`npm run build`: compiled modules, the client package, then the single-file bundle) once before
 * the suite when it is missing or older than the sources, by the same check `npm start` makes
 * (scripts/ensure-built.mjs). Tests that run the CLI as a process spawn the bundle, the entry `bin/` runs.
 */
export default function setup(): void {
  ensureBuilt(repoRoot, { reason: 'test setup' })
}
