import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { startServer } from '../../src/server.js'
import { repoRoot } from '../helpers/vectors.js'
import { CLI_ENTRY } from '../helpers/cli.js'

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** The real CLI as a process, with only the variables given (none of the caller's BERNSTEIN_* or DATABASE_URL). */
function doctor(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BERNSTEIN_') && k !== 'DATABASE_URL'))
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI_ENTRY, ...args, 'doctor'], { cwd: repoRoot, env: { ...base, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr })
    })
  })
}

describe('bernstein-a2a doctor', () => {
  let root: string
  let dataDir: string
  let env: Record<string, string>
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'bernstein-a2a-doctor-'))
    dataDir = join(root, 'data')
    env = { BERNSTEIN_DATA_DIR: dataDir }
    // A node that has started once: keys, audit key, generated operator token, migrated database.
    const server = await startServer(loadConfig({ ...env, BERNSTEIN_PORT: '0' }), pino({ level: 'silent' }))
    await server.close()
  }, 60_000)
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('passes on a node that has started once (exit 0)', async () => {
    const run = await doctor(env)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const lines = run.stdout.trim().split('\n')
    expect(lines.at(-1)).toBe('all checks passed')
    expect(lines.slice(0, -1).every((l) => l.startsWith('✓ '))).toBe(true)
    for (const name of [
      'configuration',
      'data directory',
      'keys directory',
      'agent-card key',
      'receipt key',
      'capability-card key',
      'audit key',
      'operator token',
      'database',
      'migrations',
    ]) {
      expect(
        lines.some((l) => l.startsWith(`✓ ${name}: `)),
        name,
      ).toBe(true)
    }
  })

  it('prints JSON with --json', async () => {
    const run = await doctor(env, '--json')
    expect(run.code).toBe(0)
    const report = JSON.parse(run.stdout) as { ok: boolean; checks: { name: string; ok: boolean; detail: string; fix: string | null }[] }
    expect(report.ok).toBe(true)
    expect(report.checks).toHaveLength(10)
    expect(report.checks.find((c) => c.name === 'migrations')).toMatchObject({ ok: true, fix: null, detail: expect.stringMatching(/^all \d+ applied$/) })
  })

  it('fails on a key file readable by others and says how to fix it (exit 1)', async () => {
    const key = join(dataDir, 'keys', 'receipt.pem')
    chmodSync(key, 0o644)
    try {
      const run = await doctor(env)
      expect(run.code).toBe(1)
      expect(run.stdout).toContain(`✗ receipt key: ${key} has mode 0644; expected 0600\n    fix: chmod 600 ${key}\n`)
      expect(run.stdout.trim().split('\n').at(-1)).toBe('1 problem found')
      const json = JSON.parse((await doctor(env, '--json')).stdout) as { ok: boolean; checks: { name: string; ok: boolean; fix: string | null }[] }
      expect(json.ok).toBe(false)
      expect(json.checks.filter((c) => !c.ok)).toEqual([expect.objectContaining({ name: 'receipt key', fix: `chmod 600 ${key}` })])
    } finally {
      chmodSync(key, 0o600)
    }
  })

  it('fails on an open data dir, a readable operator token or audit key', async () => {
    const token = join(dataDir, 'auth.token')
    const audit = join(dataDir, 'audit.key')
    chmodSync(dataDir, 0o755)
    chmodSync(token, 0o640)
    chmodSync(audit, 0o604)
    try {
      const run = await doctor(env)
      expect(run.code).toBe(1)
      expect(run.stdout).toContain(`✗ data directory: ${dataDir} has mode 0755; expected 0700\n    fix: chmod 700 ${dataDir}`)
      expect(run.stdout).toContain(`✗ operator token: ${token} has mode 0640; expected 0600\n    fix: chmod 600 ${token}`)
      expect(run.stdout).toContain(`✗ audit key: ${audit} has mode 0604; expected 0600\n    fix: chmod 600 ${audit}`)
      expect(run.stdout).toContain('3 problems found')
    } finally {
      chmodSync(dataDir, 0o700)
      chmodSync(token, 0o600)
      chmodSync(audit, 0o600)
    }
  })

  it('reports pending migrations', async () => {
    const db = new Database(join(dataDir, 'bernstein-a2a.sqlite'))
    const last = db.prepare('select name from kysely_migration order by name desc limit 1').get() as { name: string }
    const row = db.prepare('select * from kysely_migration where name = ?').get(last.name) as Record<string, unknown>
    db.prepare('delete from kysely_migration where name = ?').run(last.name)
    try {
      const run = await doctor(env)
      expect(run.code).toBe(1)
      expect(run.stdout).toContain(`✗ migrations: 1 pending: ${last.name}\n    fix: run: bernstein-a2a db migrate`)
    } finally {
      db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run(row['name'], row['timestamp'])
      db.close()
    }
  })

  it('reports an invalid configuration and an unreachable database', async () => {
    const bad = await doctor({ ...env, BERNSTEIN_PORT: 'eighty' })
    expect(bad.code).toBe(1)
    expect(bad.stdout).toContain("✗ configuration: BERNSTEIN_PORT must be a port number 0-65535, got 'eighty'")
    const unreachable = await doctor({ ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
    expect(unreachable.code).toBe(1)
    expect(unreachable.stdout).toMatch(
      /✗ database: PostgreSQL \(DATABASE_URL\) is not reachable: .+\n {4}fix: check DATABASE_URL and that PostgreSQL is running/,
    )
  })

  it('reports a data dir that was never set up', async () => {
    const run = await doctor({ BERNSTEIN_DATA_DIR: join(root, 'never') })
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(`fix: start the server once, or: mkdir -m 700 ${join(root, 'never')}`)
    expect(run.stdout).toContain('does not exist yet')
  })
})
