/**
 * `bernstein-a2a token create|list|revoke` as spawned processes against a data dir (and, for the PostgreSQL run,
 * a private schema), with `serve` running on the same state: the issued token works at once, revocation takes
 * effect on the next request, bad input exits non-zero with a clear message, and the database never holds the
 * secret, only its SHA-256.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CliRun, type ServerProcess, runCli, spawnServer } from '../helpers/cli.js'
import { type TestEngine, testEngines } from '../helpers/engines.js'

const OPERATOR = `cli-operator-${randomBytes(8).toString('hex')}`
const DAY = 86_400

interface Issued {
  readonly id: string
  readonly token: string
  readonly role: string
  readonly tenant: string | null
  readonly expires_at: number | null
}

/** Where the CLI and the server keep their state; for PostgreSQL a private schema, dropped afterwards. */
async function stateFor(
  engine: TestEngine,
): Promise<{ env: Record<string, string>; rows: () => Promise<Record<string, unknown>[]>; drop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-token-cli-'))
  if (engine === 'sqlite') {
    return {
      env: { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: '' },
      rows: async () => {
        const db = new SQLite(join(dataDir, 'bernstein-a2a.sqlite'), { readonly: true, fileMustExist: true })
        try {
          const tables = db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'").all() as { name: string }[]
          return tables.flatMap(({ name }) =>
            (db.prepare(`select * from "${name}"`).all() as Record<string, unknown>[]).map((row) => ({ table: name, ...row })),
          )
        } finally {
          db.close()
        }
      },
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    }
  }
  const url = process.env['TEST_DATABASE_URL'] ?? ''
  const schema = `cli_tok_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const separator = url.includes('?') ? '&' : '?'
  const withClient = async <T>(work: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      return await work(c)
    } finally {
      await c.end()
    }
  }
  return {
    env: { BERNSTEIN_DATA_DIR: dataDir, DATABASE_URL: `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}` },
    rows: () =>
      withClient(async (c) => {
        const tables = await c.query<{ table_name: string }>('select table_name from information_schema.tables where table_schema = $1', [schema])
        const rows: Record<string, unknown>[] = []
        for (const { table_name } of tables.rows)
          rows.push(...(await c.query(`select * from "${schema}"."${table_name}"`)).rows.map((r: Record<string, unknown>) => ({ table: table_name, ...r })))
        return rows
      }),
    drop: async () => {
      await withClient((c) => c.query(`drop schema if exists ${schema} cascade`))
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

const noStack = (run: CliRun): void => {
  expect(run.stderr + run.stdout).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m)
  expect(run.stderr + run.stdout).not.toMatch(/AppError|RangeError|node:internal/)
}

describe.each(testEngines())('token CLI (%s)', (engine) => {
  let state: Awaited<ReturnType<typeof stateFor>>
  let server: ServerProcess | undefined
  const cli = (...args: string[]): Promise<CliRun> => runCli(args, state.env)
  const call = (path: string, token: string, init: { method?: string; body?: unknown; tenant?: string } = {}) =>
    fetch(`${server?.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
        ...(init.tenant !== undefined && { 'x-tenant-id': init.tenant }),
      },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    }).then(async (res) => ({ status: res.status, json: (await res.json()) as unknown }))

  beforeAll(async () => {
    state = await stateFor(engine)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await state?.drop()
  }, 60_000)

  let issued: Issued

  it('`token create --role agent --tenant acme --expires-in 30d --json` prints the token once, with its id, role, tenant and expiry', async () => {
    const before = Date.now() / 1000
    const run = await cli('token', 'create', '--role', 'agent', '--tenant', 'acme', '--expires-in', '30d', '--json')
    const after = Date.now() / 1000
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
    issued = JSON.parse(run.stdout) as Issued
    expect(Object.keys(issued).sort()).toEqual(['expires_at', 'id', 'ok', 'role', 'tenant', 'token'])
    expect(issued.id).toMatch(/^[0-9a-f]{12}$/)
    expect(issued.token).toMatch(new RegExp(`^bat_${issued.id}\\.[A-Za-z0-9_-]{43}$`))
    expect(issued).toMatchObject({ role: 'agent', tenant: 'acme' })
    expect(issued.expires_at).toBeGreaterThanOrEqual(before + 30 * DAY - 1)
    expect(issued.expires_at).toBeLessThanOrEqual(after + 30 * DAY + 1)
  }, 60_000)

  it('the token works against `serve` on the same state, bound to its tenant and refused operator-only writes', async () => {
    server = await spawnServer({ ...state.env, BERNSTEIN_AUTH_TOKEN: OPERATOR })
    const created = await call('/tasks', issued.token, { method: 'POST', body: { title: 'from the CLI token' }, tenant: 'other' })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ tenant_id: 'acme', title: 'from the CLI token' })
    const listed = await call('/api/v1/tasks', issued.token)
    expect(listed.status).toBe(200)
    expect((listed.json as { tasks: { tenant_id: string }[] }).tasks.map((t) => t.tenant_id)).toEqual(['acme'])
    const forbidden = await call('/a2a/tasks/send', issued.token, { method: 'POST', body: { sender: 'peer', message: 'hi' } })
    expect(forbidden).toEqual({ status: 403, json: { detail: 'Agent tokens cannot access operator-only endpoints', required_permission: 'admin:manage' } })
    const asOperator = await call('/tasks', OPERATOR, { tenant: 'acme' })
    expect((asOperator.json as { tasks: unknown[] }).tasks).toHaveLength(1)
  }, 90_000)

  it('`token list` shows it without the secret, in text and in JSON', async () => {
    const secret = issued.token.split('.')[1] ?? ''
    const text = await cli('token', 'list')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(new RegExp(`^${issued.id}\\s+agent\\s+acme\\s+active\\s+expires \\d{4}-\\d\\d-\\d\\dT`, 'm'))
    const json = await cli('token', 'list', '--json')
    expect(json.code).toBe(0)
    const rows = (JSON.parse(json.stdout) as { ok: boolean; tokens: Record<string, unknown>[] }).tokens
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true })
    expect(rows).toEqual([
      {
        id: issued.id,
        role: 'agent',
        tenant: 'acme',
        label: null,
        created_at: expect.any(Number),
        expires_at: issued.expires_at,
        revoked_at: null,
        state: 'active',
      },
    ])
    for (const out of [text.stdout, text.stderr, json.stdout, json.stderr]) {
      expect(out).not.toContain(secret)
      expect(out).not.toContain(createHash('sha256').update(secret).digest('hex'))
    }
  }, 60_000)

  it('the database holds only the SHA-256 of the secret, in no column anything that contains it', async () => {
    const secret = issued.token.split('.')[1] ?? ''
    const rows = await state.rows()
    const tokenRows = rows.filter((r) => r['table'] === 'api_tokens')
    expect(tokenRows).toHaveLength(1)
    expect(tokenRows[0]).toMatchObject({
      id: issued.id,
      secret_hash: createHash('sha256').update(secret, 'utf8').digest('hex'),
      role: 'agent',
      tenant_id: 'acme',
    })
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        const text = Buffer.isBuffer(value) ? value.toString('latin1') : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)
        expect(text.includes(secret), `${String(row['table'])}.${column}`).toBe(false)
        expect(text.includes(issued.token), `${String(row['table'])}.${column}`).toBe(false)
      }
    }
  }, 60_000)

  it('`token revoke <id>` makes it 401 on the very next request; revoking again fails clearly', async () => {
    const run = await cli('token', 'revoke', issued.id)
    expect({ code: run.code, stdout: run.stdout.trim() }).toEqual({ code: 0, stdout: `✓ token ${issued.id} revoked` })
    const refused = await call('/tasks', issued.token)
    expect(refused).toEqual({ status: 401, json: { detail: 'Invalid or expired authentication token' } })
    const listed = (JSON.parse((await cli('token', 'list', '--json')).stdout) as { tokens: { id: string; state: string; revoked_at: number | null }[] }).tokens
    expect(listed.find((r) => r.id === issued.id)).toMatchObject({ state: 'revoked', revoked_at: expect.any(Number) })

    for (const id of [issued.id, '000000000000']) {
      const again = await cli('token', 'revoke', id)
      expect(again.code).not.toBe(0)
      expect(again.stderr).toContain(`Token '${id}' not found or already revoked`)
      noStack(again)
    }
  }, 60_000)

  it('a --expires-in 1s token expires a second after its creation: `serve` refuses it and `token list` shows it expired', async () => {
    // The one real wait in this file, and at most a second of it. Both processes read the system clock (the CLI
    // takes no clock: src/cli/commands/token.ts uses systemClock) and --expires-in refuses anything under 1s, so no
    // token can be issued through the CLI already expired. Expiry itself is covered with a manual clock in
    // test/security/auth-matrix.test.ts; this checks the CLI's path end to end: the duration is stored in the
    // seconds the server compares against, and `token list` reports the expired state.
    const run = await cli('token', 'create', '--role', 'agent', '--tenant', 'brief', '--expires-in', '1s', '--json')
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
    const brief = JSON.parse(run.stdout) as Issued
    const expiresAt = brief.expires_at ?? Number.NaN
    const createdAt = (JSON.parse((await cli('token', 'list', '--json')).stdout) as { tokens: { id: string; created_at: number }[] }).tokens.find(
      (r) => r.id === brief.id,
    )?.created_at
    expect(expiresAt - (createdAt ?? Number.NaN)).toBeCloseTo(1, 6)
    // Until the expiry instant on this machine's clock, plus a millisecond for rounding (usually already behind us
    // after the `token list` run).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.ceil(expiresAt * 1000) + 1 - Date.now())))
    expect(await call('/tasks', brief.token)).toEqual({ status: 401, json: { detail: 'Invalid or expired authentication token' } })
    const listed = (JSON.parse((await cli('token', 'list', '--json')).stdout) as { tokens: { id: string; state: string }[] }).tokens
    expect(listed.find((r) => r.id === brief.id)).toMatchObject({ state: 'expired' })
  }, 60_000)

  it('an operator token from the CLI has operator rights and picks its tenant', async () => {
    const run = await cli('token', 'create', '--role', 'operator', '--label', 'second operator', '--json')
    expect(run.code).toBe(0)
    const operator = JSON.parse(run.stdout) as Issued
    expect(operator).toMatchObject({ role: 'operator', tenant: null, expires_at: null })
    const sent = await call('/a2a/tasks/send', operator.token, { method: 'POST', body: { sender: 'peer', message: 'from a CLI operator' }, tenant: 'ops' })
    expect(sent.status).toBe(201)
    const inOps = await call('/tasks', operator.token, { tenant: 'ops' })
    expect((inOps.json as { tasks: { tenant_id: string }[] }).tasks.map((t) => t.tenant_id)).toEqual(['ops'])
  }, 60_000)

  /** The api_tokens rows, straight from the database. */
  const tokenRows = async (): Promise<Record<string, unknown>[]> => (await state.rows()).filter((r) => r['table'] === 'api_tokens')

  it.each([['30x'], ['0s'], ['-1d'], [''], ['1.5h'], ['999999999w']])(
    'a bad --expires-in %j exits non-zero with a clear message and issues nothing',
    async (value) => {
      const tokens = async (): Promise<number> => (await tokenRows()).length
      const before = await tokens()
      const run = await cli('token', 'create', '--role', 'agent', '--expires-in', value, '--json')
      expect(run.code).not.toBe(0)
      // With --json the usage error is the one JSON object on stdout (issue 28; it was commander's text on stderr).
      const reported = JSON.parse(run.stdout) as { ok: boolean; code: string; error: string }
      expect(reported).toMatchObject({ ok: false, code: 'usage' })
      expect(reported.error).toMatch(/--expires-in <duration>.*is not a duration like 2s, 10m, 12h, 30d or 2w/)
      expect(run.stdout).not.toMatch(/bat_/)
      noStack(run)
      expect(await tokens()).toBe(before)
    },
    60_000,
  )

  it('a bad role or tenant exits non-zero with a clear message and issues nothing', async () => {
    const before = await tokenRows()
    expect(before.length).toBeGreaterThan(0)
    const role = await cli('token', 'create', '--role', 'admin')
    expect(role.code).not.toBe(0)
    expect(role.stderr).toContain("argument 'admin' is invalid. Allowed choices are agent, operator.")
    const tenant = await cli('token', 'create', '--role', 'agent', '--tenant', 'no spaces')
    expect(tenant.code).not.toBe(0)
    expect(tenant.stderr).toContain('tenant ids are 1-64 letters, digits, dot, dash, underscore')
    const missing = await cli('token', 'create')
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain("required option '--role <role>' not specified")
    for (const run of [role, tenant, missing]) {
      expect(run.stdout).not.toMatch(/bat_/)
      noStack(run)
    }
    expect(await tokenRows()).toEqual(before)
  }, 60_000)
})
