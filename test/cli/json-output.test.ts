/**
 * One way to report: with --json every command prints one JSON document on stdout, on success and on every kind of
 * error (usage errors included), with the documented exit codes; --version prints the package's version.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'
import { repoRoot } from '../helpers/vectors.js'

const dir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-json-'))
const env = { BERNSTEIN_DATA_DIR: join(dir, 'data'), NO_COLOR: '1' }
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The whole of stdout is one JSON document (a line), and nothing of it went to stderr. */
function onlyJson(run: { stdout: string; stderr: string }): Record<string, unknown> {
  expect(run.stdout.endsWith('\n')).toBe(true)
  expect(run.stdout.trimEnd().split('\n')).toHaveLength(1)
  expect(run.stderr).toBe('')
  return JSON.parse(run.stdout) as Record<string, unknown>
}

describe('the CLI with --json', { timeout: 120_000 }, () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
    for (const flag of ['--version', '-V']) expect(await runCli([flag], env)).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' })
  })

  it('a refusal of the domain (a token that does not exist) is one object with its code, exit 1', async () => {
    const json = await runCli(['--json', 'token', 'revoke', 'nosuchid'], env)
    expect(json.code).toBe(1)
    expect(onlyJson(json)).toEqual({ ok: false, error: "Token 'nosuchid' not found or already revoked", code: 'not_found' })
    // Without --json: the same text on stderr, as before.
    expect(await runCli(['token', 'revoke', 'nosuchid'], env)).toMatchObject({
      code: 1,
      stdout: '',
      stderr: "error: Token 'nosuchid' not found or already revoked\n",
    })
  })

  it('usage errors are one object too, with the exit code of the text run (2 for a2a verify, as Bernstein, else 1)', async () => {
    const cases: [string[], number, string][] = [
      [['a2a', 'verify', '--receipt', '/nope', '--response', '/nope'], 2, "Invalid value for '--receipt': File '/nope' does not exist."],
      [['a2a', 'verify', '--receipt', '/nope'], 1, "required option '--response <file>' not specified"],
      [['token', 'create', '--role', 'admin'], 1, "option '--role <role>' argument 'admin' is invalid. Allowed choices are agent, operator."],
      [['no-such-command'], 1, "unknown command 'no-such-command'"],
      [[], 1, 'a command is required (see --help)'],
    ]
    for (const [args, code, error] of cases) {
      // --json before and after the command: both are the global flag.
      for (const argv of [
        ['--json', ...args],
        [...args, '--json'],
      ]) {
        if (args.length === 0 && argv[0] !== '--json') continue
        const run = await runCli(argv, env)
        expect({ argv, code: run.code }).toEqual({ argv, code })
        expect(onlyJson(run)).toEqual({ ok: false, error, code: 'usage' })
      }
      if (args.length === 0) continue
      // The text run keeps commander's (or click's) message on stderr, and the same exit code.
      const text = await runCli(args, env)
      expect(text.code).toBe(code)
      expect(text.stdout).toBe('')
      expect(text.stderr).toContain(error)
    }
  })

  it('a configuration error is one object, exit 1', async () => {
    const run = await runCli(['--json', 'token', 'list'], { ...env, BERNSTEIN_PORT: 'eighty' })
    expect(run.code).toBe(1)
    expect(onlyJson(run)).toMatchObject({ ok: false, error: expect.stringContaining('BERNSTEIN_PORT') as unknown, code: 'configuration' })
  })

  it('offline commands do not need a loadable configuration', async () => {
    const run = await runCli(['--json', 'lineage', 'envelope', 'inspect', '--file', join(dir, 'absent.json')], { ...env, BERNSTEIN_PORT: 'eighty' })
    expect(run.code).toBe(1)
    expect(onlyJson(run)).toEqual({ ok: false, error: 'could not read envelope: no such file' })
  })
})
