import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { vectorBytes, vectorJson, vectorPath, vectorText } from '../helpers/vectors.js'
import { type CliRun, runCli } from '../helpers/cli.js'

/** Runs the real CLI process from the repository root. */
const cli = (...args: string[]): Promise<CliRun> => runCli(args, { NO_COLOR: '1' })

interface Variant {
  file: string
  verify_with_source_key: { ok: boolean; entry_count: number; failures: string[] }
}
const meta = vectorJson<{ hmac_key_ascii: string; tampered_variants: Record<string, Variant> }>('tracker_audit', 'source_log.meta.json')

let dir: string
let sourceKeyFile: string
let receiverKeyFile: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bernstein-a2a-lineage-cli-'))
  sourceKeyFile = join(dir, 'source.key')
  receiverKeyFile = join(dir, 'receiver.key')
  await writeFile(sourceKeyFile, `${meta.hmac_key_ascii}\n`, { mode: 0o600 })
  await writeFile(receiverKeyFile, `${'fedcba9876543210'.repeat(4)}\n`, { mode: 0o600 })
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const verify = (file: string, keyFile: string, ...extra: string[]): Promise<CliRun> =>
  cli(...extra, 'lineage', 'tracker-audit', 'verify', '--file', file, '--key-file', keyFile)

describe('lineage tracker-audit verify', { timeout: 120_000 }, () => {
  it('source_log.jsonl with the source key: exit 0, Bernstein’s OK line', async () => {
    const run = await verify(vectorPath('tracker_audit', 'source_log.jsonl'), sourceKeyFile)
    expect(run).toMatchObject({ code: 0, stdout: 'tracker-audit verify: OK (5 entry(ies))\n' })
  })

  it('--json gives {ok, entries, failure}', async () => {
    const run = await verify(vectorPath('tracker_audit', 'source_log.jsonl'), sourceKeyFile, '--json')
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ ok: true, entries: 5, failure: null })
  })

  it('every tampered variant gives Bernstein’s verdict, exit code and failure text', async () => {
    const runs = await Promise.all(
      Object.values(meta.tampered_variants).map(async (variant) => ({
        variant,
        run: await verify(vectorPath(variant.file), sourceKeyFile, '--json'),
      })),
    )
    for (const { variant, run } of runs) {
      const expected = variant.verify_with_source_key
      expect(run.code, variant.file).toBe(expected.ok ? 0 : 1)
      expect(JSON.parse(run.stdout), variant.file).toEqual({
        ok: expected.ok,
        entries: expected.entry_count,
        failure: expected.failures[0] ?? null,
      })
    }
  })

  it('the wrong key fails on line 1; the receiver log verifies with its own key only', async () => {
    const wrong = await verify(vectorPath('tracker_audit', 'source_log.jsonl'), receiverKeyFile)
    expect(wrong).toMatchObject({ code: 1, stdout: 'tracker-audit verify: FAIL\n  - line 1: signature mismatch (HMAC failed)\n' })
    const receiver = await verify(vectorPath('lineage_v2', 'receiver_log.jsonl'), receiverKeyFile)
    expect(receiver).toMatchObject({ code: 0, stdout: 'tracker-audit verify: OK (2 entry(ies))\n' })
    const crossed = await verify(vectorPath('lineage_v2', 'receiver_log.jsonl'), sourceKeyFile, '--json')
    expect(crossed.code).toBe(1)
    expect(JSON.parse(crossed.stdout)).toEqual({ ok: false, entries: 0, failure: 'line 1: signature mismatch (HMAC failed)' })
  })

  it('a log that is not there fails (Bernstein reads it as an empty, valid log: a mistyped path would pass)', async () => {
    const absent = join(dir, 'absent.jsonl')
    const run = await verify(absent, sourceKeyFile)
    expect(run).toMatchObject({ code: 1, stdout: `✗ could not read ${absent}: no such file\n` })
    const json = await verify(absent, sourceKeyFile, '--json')
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, error: `could not read ${absent}: no such file` })
    expect(await verify(dir, sourceKeyFile)).toMatchObject({ code: 1, stdout: `✗ could not read ${dir}: is a directory\n` })
  })

  it('a missing or world-readable key file exits 2', async () => {
    const missing = await verify(vectorPath('tracker_audit', 'source_log.jsonl'), join(dir, 'absent.key'), '--json')
    expect(missing.code).toBe(2)
    expect(JSON.parse(missing.stdout)).toMatchObject({ ok: false })
    const loose = join(dir, 'loose.key')
    await writeFile(loose, meta.hmac_key_ascii)
    await chmod(loose, 0o644)
    const insecure = await verify(vectorPath('tracker_audit', 'source_log.jsonl'), loose)
    expect(insecure.code).toBe(2)
    expect(insecure.stdout).toMatch(/^✗ Audit key .* has insecure permissions 0644; required 0600 \(owner-only\)\.\n$/)
  })
})

describe('lineage envelope wrap', { timeout: 120_000 }, () => {
  it('prints the canonical payload of envelope_payload.json', async () => {
    const run = await cli('lineage', 'envelope', 'wrap', '--file', vectorPath('tracker_audit', 'source_log.jsonl'), '--issuer', 'acme-orch')
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(`${vectorText('lineage_v2', 'envelope_payload.json')}\n`)
  })

  it('filters by ticket and writes exact bytes with --output', async () => {
    const output = join(dir, 'eng7.json')
    const run = await cli(
      '--json',
      'lineage',
      'envelope',
      'wrap',
      '--file',
      vectorPath('tracker_audit', 'source_log.jsonl'),
      '--issuer',
      'acme-orch',
      '--ticket-id',
      'ENG-7',
      '--output',
      output,
    )
    expect(run.code).toBe(0)
    expect(await readFile(output)).toEqual(vectorBytes('lineage_v2', 'envelope_payload_ticket_ENG-7.json'))
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: true,
      entries: 2,
      chain_digest: 'sha256:cd2d0422775f79d56140a5b41e3a4d42fcdd618c7b274213e2fab5affe16c17b',
    })
  })

  it('refuses a log with a malformed line, naming the line', async () => {
    const run = await cli('lineage', 'envelope', 'wrap', '--file', vectorPath('tracker_audit', 't4_line4_truncated.jsonl'), '--issuer', 'acme-orch')
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/^✗ could not read .*t4_line4_truncated\.jsonl: line 4: invalid JSON \(Expecting ',' delimiter\)\n$/)
  })
})

describe('lineage envelope inspect', { timeout: 120_000 }, () => {
  it('accepts the bare payload and the A2A message carrying it', async () => {
    const bare = await cli('--json', 'lineage', 'envelope', 'inspect', '--file', vectorPath('lineage_v2', 'envelope_payload.json'))
    expect(bare.code).toBe(0)
    expect(JSON.parse(bare.stdout)).toEqual({
      ok: true,
      source_issuer: 'acme-orch',
      schema_version: 1,
      chain_digest: 'sha256:ad5a6a1beea49ea1c729aa77e39dd91fed0b2c793827c8758a45a53b9a0f0ff3',
      entries: 5,
      payload_sha256: 'sha256:cd99b212df93491cf0235e67bf534aab2e2ce94d3fecd4cf3e29f461e18071c4',
    })
    const carried = await cli('lineage', 'envelope', 'inspect', '--file', vectorPath('lineage_v2', 'a2a_envelope.json'))
    expect(carried.code).toBe(0)
    expect(carried.stdout.split('\n').slice(0, 5)).toEqual([
      `✓ lineage envelope ${vectorPath('lineage_v2', 'a2a_envelope.json')} is valid`,
      '  source_issuer: acme-orch  schema_version: 1',
      '  chain_digest: sha256:ad5a6a1beea49ea1c729aa77e39dd91fed0b2c793827c8758a45a53b9a0f0ff3',
      '  payload: sha256:cd99b212df93491cf0235e67bf534aab2e2ce94d3fecd4cf3e29f461e18071c4',
      '  entries: 5',
    ])
  })

  it('rejects a tampered payload and a message without the field, with Bernstein’s texts', async () => {
    const tampered = join(dir, 'tampered.json')
    await writeFile(tampered, vectorText('lineage_v2', 'envelope_payload.json').replace('"tokens_out":345', '"tokens_out":346'))
    const run = await cli('lineage', 'envelope', 'inspect', '--file', tampered)
    expect(run.code).toBe(1)
    expect(run.stdout).toBe(
      `✗ lineage envelope ${tampered} is NOT valid:\n` +
        '  - lineage envelope chain_digest mismatch (carried sha256:ad5a6a1beea49ea1c729aa77e39dd91fed0b2c793827c8758a45a53b9a0f0ff3, recomputed sha256:0aa1515f960701dc3ac776294c58800b1b8cdcc610b44948ded44fd5d14168df)\n',
    )
    const message = join(dir, 'message.json')
    await writeFile(message, '{"id":"5f2c9a1b7e3d","kind":"task"}')
    const none = await cli('--json', 'lineage', 'envelope', 'inspect', '--file', message)
    expect(none.code).toBe(1)
    expect(JSON.parse(none.stdout)).toEqual({
      ok: false,
      code: 'missing_field',
      error: "A2A envelope missing 'bernstein.lineage_v2' field",
    })
  })

  it('applies the stricter checks on request', async () => {
    const file = vectorPath('lineage_v2', 'envelope_payload_ticket_ENG-7.json')
    expect((await cli('lineage', 'envelope', 'inspect', '--file', file)).code).toBe(0)
    const strict = await cli('--json', 'lineage', 'envelope', 'inspect', '--file', file, '--require-genesis')
    expect(strict.code).toBe(1)
    expect(JSON.parse(strict.stdout)).toMatchObject({ ok: false, code: 'broken_link' })
    const issuer = await cli('lineage', 'envelope', 'inspect', '--file', file, '--expected-issuer', 'globex')
    expect(issuer.code).toBe(1)
    expect(issuer.stdout).toContain("  - lineage envelope source_issuer 'acme-orch' does not match the verified issuer 'globex'\n")
  })

  it('--check-links lets one ticket’s entries skip other tickets’, and refuses them out of order', async () => {
    // PROJ-101's entries 0 and 2 of the source log, its entry 1 left out; then 2 before 1.
    const lines = vectorText('tracker_audit', 'source_log.jsonl').trim().split('\n')
    const envelopeOf = async (name: string, picked: number[]) => {
      const file = join(dir, name)
      const wrapped = await cli(
        'lineage',
        'envelope',
        'wrap',
        '--file',
        await linesFile(
          name,
          picked.map((i) => lines[i]!),
        ),
        '--issuer',
        'acme-orch',
        '--output',
        file,
      )
      expect(wrapped.code, wrapped.stderr).toBe(0)
      return file
    }
    const gap = await envelopeOf('gap.json', [0, 2])
    expect((await cli('lineage', 'envelope', 'inspect', '--file', gap, '--check-links', '--check-entry-hashes')).code).toBe(0)
    const reordered = await envelopeOf('reordered.json', [0, 2, 1])
    const run = await cli('--json', 'lineage', 'envelope', 'inspect', '--file', reordered, '--check-links')
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, code: 'broken_link' })
  })
})

async function linesFile(name: string, lines: string[]): Promise<string> {
  const file = join(dir, `${name}.jsonl`)
  await writeFile(file, lines.map((l) => `${l}\n`).join(''))
  return file
}
