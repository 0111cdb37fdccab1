/**
 * Every environment variable the node reads is documented where an operator looks for it (docs/configuration.md,
 * `.env.example`, which says it lists every variable), and the docs name no variable nothing reads: a renamed or
 * invented name (`BERNSTEIN_OPERATOR_TOKEN` for `BERNSTEIN_AUTH_TOKEN`) would be set and silently ignored.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/vectors.js'

const NAME = /\b(?:BERNSTEIN_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL)\b/g

const read = (path: string): string => readFileSync(join(repoRoot, path), 'utf8')
const namesIn = (text: string): Set<string> => new Set(text.match(NAME) ?? [])

/** Every file under `dir` (relative to the repository) whose name ends with one of `extensions`. */
function filesUnder(dir: string, extensions: readonly string[]): string[] {
  return readdirSync(join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => extensions.some((extension) => file.endsWith(extension)))
    .map((file) => join(dir, file))
}

describe('the configuration is documented', () => {
  const readByConfig = namesIn(read('src/config.ts'))
  // The CLI reads BERNSTEIN_DEBUG itself; the examples read the node's URL and a token (docs/configuration.md says so).
  const readElsewhere = new Set([...filesUnder('src/cli', ['.ts']), ...filesUnder('examples', ['.ts'])].flatMap((file) => [...namesIn(read(file))]))
  const reference = read('docs/configuration.md')
  const example = read('.env.example')

  it('finds the variables src/config.ts reads', () => {
    expect(readByConfig.size).toBeGreaterThan(60)
    expect(readByConfig).toContain('DATABASE_URL')
  })

  it('in docs/configuration.md and in .env.example, each of them', () => {
    const missing = (text: string) => [...readByConfig].filter((name) => !namesIn(text).has(name))
    expect(missing(reference)).toEqual([])
    expect(missing(example)).toEqual([])
  })

  it('and nowhere a name that nothing reads', () => {
    const documents = ['README.md', '.env.example', ...filesUnder('docs', ['.md'])]
    for (const file of documents) {
      const unknown = [...namesIn(read(file))].filter((name) => !readByConfig.has(name) && !readElsewhere.has(name))
      expect(unknown, file).toEqual([])
    }
  })
})
