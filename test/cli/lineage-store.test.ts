import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli, spawnServer } from '../helpers/cli.js'
import { vectorBytes } from '../helpers/vectors.js'

const TOKEN = 'lineage-store-token-0123456789'

describe('lineage commands on the node database', () => {
  const dirs: string[] = []
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'lineage-cli-'))
    dirs.push(dir)
    return dir
  }
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it("imports Bernstein's own log and exports it byte for byte; a second import does not link and is refused", async () => {
    const dir = tempDir()
    const keyPath = join(dir, 'vector-audit.key')
    writeFileSync(keyPath, '0123456789abcdef'.repeat(4), { mode: 0o600 })
    const env = { BERNSTEIN_DATA_DIR: join(dir, 'data'), BERNSTEIN_AUDIT_KEY_PATH: keyPath }
    const source = join(dir, 'source_log.jsonl')
    writeFileSync(source, vectorBytes('tracker_audit', 'source_log.jsonl'))

    const imported = await runCli(['--json', 'lineage', 'tracker-audit', 'import', '--file', source], env)
    expect(imported).toMatchObject({ code: 0 })
    expect(JSON.parse(imported.stdout)).toEqual({ ok: true, imported: 5 })

    const out = join(dir, 'export.jsonl')
    expect((await runCli(['lineage', 'tracker-audit', 'export', '--output', out], env)).code).toBe(0)
    expect(readFileSync(out).equals(vectorBytes('tracker_audit', 'source_log.jsonl'))).toBe(true)

    const verified = await runCli(['--json', 'lineage', 'tracker-audit', 'verify'], env)
    expect(JSON.parse(verified.stdout)).toEqual({ ok: true, entries: 5, failure: null })

    const again = await runCli(['--json', 'lineage', 'tracker-audit', 'import', '--file', source], env)
    expect(again.code).toBe(1)
    expect(JSON.parse(again.stdout).error).toMatch(/^not imported: line 1: prev_entry_hash mismatch \(expected sha256:[0-9a-f]{64}, got sha256:0{64}\)$/)
    expect(JSON.parse((await runCli(['--json', 'lineage', 'tracker-audit', 'verify'], env)).stdout)).toEqual({ ok: true, entries: 5, failure: null })

    const tampered = join(dir, 't1.jsonl')
    writeFileSync(tampered, vectorBytes('tracker_audit', 't1_payload_ticket_id_line3.jsonl'))
    const fresh = { ...env, BERNSTEIN_DATA_DIR: join(dir, 'data2') }
    const refused = await runCli(['--json', 'lineage', 'tracker-audit', 'import', '--file', tampered], fresh)
    expect(JSON.parse(refused.stdout)).toEqual({ ok: false, error: 'not imported: line 3: entry_hash mismatch (tampered payload)' })
    expect(JSON.parse((await runCli(['--json', 'lineage', 'tracker-audit', 'verify'], fresh)).stdout)).toEqual({ ok: true, entries: 0, failure: null })

    // A file that is not there is refused up front, in words, and nothing is imported.
    const absent = join(dir, 'absent.jsonl')
    const missing = await runCli(['--json', 'lineage', 'tracker-audit', 'import', '--file', absent], fresh)
    expect(missing.code).toBe(1)
    expect(JSON.parse(missing.stdout)).toEqual({ ok: false, error: `could not read ${absent}: no such file` })
    expect(missing.stderr).not.toMatch(/ENOENT|at .*\.(ts|js):\d+/)
    expect(JSON.parse((await runCli(['--json', 'lineage', 'tracker-audit', 'verify'], fresh)).stdout)).toEqual({ ok: true, entries: 0, failure: null })
  }, 120_000)

  it('verifies, exports and wraps the chain a running server wrote', async () => {
    const dir = tempDir()
    const env = { BERNSTEIN_DATA_DIR: dir, BERNSTEIN_AUTH_TOKEN: TOKEN, BERNSTEIN_A2A_ISSUER: 'acme-orch' }
    const server = await spawnServer(env)
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
    const sent = (await (
      await fetch(`${server.url}/a2a/tasks/send`, { method: 'POST', headers, body: JSON.stringify({ sender: 'p', message: 'm' }) })
    ).json()) as { bernstein_task_id: string }
    await fetch(`${server.url}/tasks/${sent.bernstein_task_id}/complete`, { method: 'POST', headers, body: JSON.stringify({ result_summary: 'ok' }) })
    await server.stop()

    const verified = await runCli(['--json', 'lineage', 'tracker-audit', 'verify'], env)
    expect(JSON.parse(verified.stdout)).toEqual({ ok: true, entries: 2, failure: null })
    const out = join(dir, 'chain.jsonl')
    expect((await runCli(['lineage', 'tracker-audit', 'export', '--output', out], env)).code).toBe(0)
    const fileCheck = await runCli(['--json', 'lineage', 'tracker-audit', 'verify', '--file', out, '--key-file', join(dir, 'audit.key')], env)
    expect(JSON.parse(fileCheck.stdout)).toEqual({ ok: true, entries: 2, failure: null })

    const wrapped = await runCli(['lineage', 'envelope', 'wrap', '--ticket-id', sent.bernstein_task_id], env)
    const payload = JSON.parse(wrapped.stdout) as { source_issuer: string; chain_digest: string; entries: unknown[] }
    expect(payload.source_issuer).toBe('acme-orch')
    expect(payload.entries).toHaveLength(2)
    expect(payload.chain_digest).toBe('sha256:' + createHash('sha256').update(readFileSync(out)).digest('hex'))
  }, 120_000)
})
