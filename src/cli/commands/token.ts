import { type Command, InvalidArgumentError, Option } from 'commander'
import { systemIds, systemClock } from '../../runtime.js'
import { parseDuration } from '../../auth/api-token.js'
import { TokenService } from '../../auth/token.service.js'
import type { CliContext } from '../context.js'
import { printJson, printLines, wantsJson } from '../output.js'

function duration(value: string): number {
  const seconds = parseDuration(value)
  if (seconds === null) throw new InvalidArgumentError(`'${value}' is not a duration like 2s, 10m, 12h, 30d or 2w (at most 100 years)`)
  return seconds
}

function tenant(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value)) throw new InvalidArgumentError('tenant ids are 1-64 letters, digits, dot, dash, underscore')
  return value
}

/** An expiry for people; a stored value beyond what Date can show is printed as is rather than crashing the listing. */
const iso = (seconds: number | null): string => {
  if (seconds === null) return 'never'
  const date = new Date(seconds * 1000)
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString()
}

export function registerToken(program: Command, cli: CliContext): void {
  const token = program.command('token').description('issue, list and revoke bearer tokens (stored as hashes in the database)')

  token
    .command('create')
    .description('issue a token; it is printed once')
    .addOption(new Option('--role <role>', 'agent: read and drive tasks; operator: everything').choices(['agent', 'operator']).makeOptionMandatory())
    .option('--tenant <tenant>', 'bind the token to one tenant', tenant)
    .option('--expires-in <duration>', 'lifetime, e.g. 2s, 10m, 30d (default: never)', duration)
    .option('--label <text>', 'a note for `token list`')
    .action(async (opts: { role: 'agent' | 'operator'; tenant?: string; expiresIn?: number; label?: string }, cmd: Command) => {
      const issued = await cli.withStore((store) =>
        new TokenService({ store, clock: systemClock, ids: systemIds }).create({
          role: opts.role,
          // Agent tokens always belong to a tenant; `default` unless told otherwise.
          tenant: opts.tenant ?? (opts.role === 'agent' ? 'default' : null),
          expiresInSeconds: opts.expiresIn ?? null,
          label: opts.label ?? null,
        }),
      )
      if (wantsJson(cmd)) return printJson({ ok: true, ...issued })
      printLines(
        `✓ ${issued.role} token ${issued.id} created (tenant: ${issued.tenant ?? 'any'}, expires: ${iso(issued.expires_at)})`,
        `  ${issued.token}`,
        '  This is the only time the token is shown.',
      )
    })

  token
    .command('list')
    .description('list issued tokens (never their secrets)')
    .action(async (_opts: unknown, cmd: Command) => {
      const tokens = await cli.withStore((store) => new TokenService({ store, clock: systemClock, ids: systemIds }).list())
      const now = systemClock.now()
      const rows = tokens.map((t) => ({
        id: t.id,
        role: t.role,
        tenant: t.tenantId,
        label: t.label,
        created_at: t.createdAt,
        expires_at: t.expiresAt,
        revoked_at: t.revokedAt,
        state: t.revokedAt !== null ? 'revoked' : t.expiresAt !== null && now >= t.expiresAt ? 'expired' : 'active',
      }))
      if (wantsJson(cmd)) return printJson({ ok: true, tokens: rows })
      if (rows.length === 0) return printLines('no tokens')
      printLines(
        ...rows.map(
          (r) =>
            `${r.id}  ${r.role.padEnd(8)}  ${(r.tenant ?? 'any').padEnd(12)}  ${r.state.padEnd(7)}  expires ${iso(r.expires_at)}${r.label ? `  ${r.label}` : ''}`,
        ),
      )
    })

  token
    .command('revoke')
    .description('revoke a token; it stops working at once')
    .argument('<id>', 'the token id (from `token create` or `token list`)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      await cli.withStore((store) => new TokenService({ store, clock: systemClock, ids: systemIds }).revoke(id))
      if (wantsJson(cmd)) return printJson({ ok: true, id })
      printLines(`✓ token ${id} revoked`)
    })
}
