import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'

/** An unusable data directory is an operator's fix: one line that says where to look, exit 1, no stack. */
describe('an unusable BERNSTEIN_DATA_DIR', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-data-dir-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('serve and the commands that open the store say which path failed and which variables to check', async () => {
    const file = join(dir, 'a-file')
    writeFileSync(file, 'not a directory')
    const dataDir = join(file, 'sub')
    const env = { BERNSTEIN_DATA_DIR: dataDir, BERNSTEIN_PORT: '0', BERNSTEIN_AUTH_TOKEN: 'data-dir-test-operator-token-0123' }
    for (const args of [['serve'], ['token', 'list']]) {
      const run = await runCli(args, env)
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 1, stdout: '' })
      expect(run.stderr).toMatch(/^error: ENOTDIR: not a directory, \w+ '/)
      expect(run.stderr).toContain(file)
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(run.stderr).toContain('(check BERNSTEIN_DATA_DIR, BERNSTEIN_AUDIT_KEY_PATH and their permissions)')
    }
  })
})
