import { type Command, InvalidArgumentError } from 'commander'
import { ConfigError } from '../../config.js'
import { type Delegation, FOLLOWED_STATUSES } from '../../federation/delegation.js'
import { peerTokenResolver } from '../../node.js'
import type { CliContext } from '../context.js'
import { fail, printJson, printLines, wantsJson } from '../output.js'

/** `federation sync`: some followed delegation recorded an error in this pass (listed on stderr). */
export const EXIT_FOLLOW_ERRORS = 1

const PEER_TOKEN_HELP = 'bearer token for the peer, for this run only, never stored (default: BERNSTEIN_PEER_TOKENS for this URL, else BERNSTEIN_PEER_TOKEN)'

function usd(value: string): number {
  const n = Number(value)
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(n)) throw new InvalidArgumentError(`'${value}' is not a non-negative number of USD`)
  return n
}

function fingerprint(value: string, previous: string[]): string[] {
  if (!/^sha256:[0-9a-f]{64}$/.test(value)) throw new InvalidArgumentError(`'${value}' is not a key fingerprint (sha256: + 64 lowercase hex)`)
  return [...previous, value]
}

/**
 * The peer's own (Bernstein) task id, the one `federation message --task-id` wants, or null while unknown. Rows
 * written before the ledger recorded it hold the id we offered (our local task id) instead.
 */
function peerTaskId(d: Delegation): string | null {
  return d.remoteTaskId !== null && d.remoteTaskId !== d.localTaskId ? d.remoteTaskId : null
}

/** What to do about a recorded error, when the error alone does not say. */
function hintFor(lastError: string | null): string | null {
  if (lastError === null || !/^follow: HTTP 401\b/.test(lastError)) return null
  return 'the peer wants a valid bearer token: pass it with `federation sync --peer-token <token>` (this run only), or set BERNSTEIN_PEER_TOKEN or BERNSTEIN_PEER_TOKENS (<peer url>=<token>,...) for the CLI and the server; tokens are never stored'
}

/** Followed in this pass and it recorded an error (a settled failure at the peer is an outcome, not an error). */
function followFailed(d: Delegation): boolean {
  return FOLLOWED_STATUSES.has(d.status) && d.lastError !== null
}

function toWire(d: Delegation) {
  return {
    id: d.id,
    tenant: d.tenantId,
    peer: d.peerUrl,
    task_id: d.localTaskId,
    status: d.status,
    remote_id: d.remoteId,
    remote_task_id: d.remoteTaskId,
    peer_task_id: peerTaskId(d),
    remote_a2a_task_id: d.remoteA2ATaskId,
    peer_issuer: d.peerIssuer,
    peer_fingerprint: d.peerFingerprint,
    trust_level: d.trustLevel,
    attempts: d.attempts,
    last_error: d.lastError,
    hint: hintFor(d.lastError),
    result: d.result,
    updated_at: d.updatedAt,
  }
}

function line(d: Delegation): string {
  const peerTask = peerTaskId(d)
  const remote = [peerTask && `peer task ${peerTask}`, d.remoteA2ATaskId && `a2a ${d.remoteA2ATaskId}`].filter(Boolean).join(', ')
  const hint = hintFor(d.lastError)
  return `${d.id}  ${d.status.padEnd(11)}  task ${d.localTaskId} -> ${d.peerUrl}${remote ? ` (${remote})` : ''}${d.lastError ? `  [${d.lastError}]` : ''}${hint ? ` (${hint})` : ''}`
}

export function registerFederation(program: Command, cli: CliContext): void {
  program
    .command('delegate')
    .description("delegate a local task to a peer after verifying the peer's capability card")
    .requiredOption('--peer <url>', "the peer's base URL")
    .option('--peer-token <token>', PEER_TOKEN_HELP)
    .requiredOption('--task-id <id>', 'the local task to delegate')
    .option('--message <text>', "what to ask (default: the task's description)")
    .option('--role <role>', "role at the peer (default: the task's role)")
    .option('--tenant <tenant>', 'tenant of the local task', 'default')
    .option('--trusted-fingerprint <fp>', 'a trusted peer card key fingerprint (repeatable; at least one)', fingerprint, [])
    .option('--require-cost-cap-usd <n>', "the peer's cost cap must not exceed this", usd)
    .option('--require-redaction-tier <tier>', 'minimum redaction tier (none < basic < standard < strict)')
    .option('--require-sandbox-profile <profile>', 'minimum sandbox profile (none < process < container < microvm)')
    .option(
      '--allow-unsigned-peer',
      'delegate even if the peer cannot prove it holds its card key (Bernstein 3.x); the ledger records trust level card-only (BERNSTEIN_ALLOW_UNSIGNED_PEERS)',
    )
    .action(
      async (
        opts: {
          allowUnsignedPeer?: boolean
          peer: string
          peerToken?: string
          taskId: string
          message?: string
          role?: string
          tenant: string
          trustedFingerprint: string[]
          requireCostCapUsd?: number
          requireRedactionTier?: string
          requireSandboxProfile?: string
        },
        cmd: Command,
      ) => {
        if (opts.trustedFingerprint.length === 0) {
          cmd.error('error: at least one --trusted-fingerprint is required: delegation never trusts a card it has not pinned')
        }
        const d = await cli.withNode(({ services, config }) => {
          // The peer keeps our sender card's `endpoint`; with BERNSTEIN_PORT=0 only the running server knows its port.
          if (config.publicBaseUrl === null && config.port === 0) {
            throw new ConfigError(
              'BERNSTEIN_PORT=0 leaves the port to the server, so the peer cannot be told where this node is: set BERNSTEIN_PUBLIC_BASE_URL to the URL peers reach this node at',
            )
          }
          return services.delegation.delegate({
            tenantId: opts.tenant,
            peerUrl: opts.peer,
            peerToken: peerTokenResolver(config, opts.peerToken ?? null)(opts.peer),
            taskId: opts.taskId,
            ...(opts.message !== undefined && { message: opts.message }),
            ...(opts.role !== undefined && { role: opts.role }),
            trustedFingerprints: opts.trustedFingerprint,
            ...(opts.allowUnsignedPeer === true && { allowUnsignedPeer: true }),
            requirements: {
              maxCostCapUsd: opts.requireCostCapUsd ?? Infinity,
              minRedactionTier: opts.requireRedactionTier ?? 'none',
              minSandboxProfile: opts.requireSandboxProfile ?? 'none',
            },
          })
        })
        const ok = d.status === 'accepted' || d.status === 'in_progress' || d.status === 'completed'
        if (wantsJson(cmd)) printJson({ ok, ...(!ok && { error: `delegation ${d.status}${d.lastError === null ? '' : `: ${d.lastError}`}` }), ...toWire(d) })
        else printLines(ok ? `✓ delegated: ${line(d)}` : `✗ delegation ${d.status}: ${line(d)}`)
        if (!ok) fail(1)
      },
    )

  const federation = program.command('federation').description('the ledger of tasks delegated to peers')
  federation
    .command('list')
    .description('show every delegation and its status')
    .option('--tenant <tenant>', 'only this tenant')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      const all = await cli.withNode(({ services }) => services.delegation.list(opts.tenant))
      if (wantsJson(cmd)) return printJson({ ok: true, delegations: all.map(toWire) })
      printLines(...(all.length === 0 ? ['no delegations'] : all.map(line)))
    })
  federation
    .command('message')
    .description('send a message into a task at a peer; recorded here as outbound once the peer accepts it')
    .requiredOption('--peer <url>', "the peer's base URL")
    .option('--peer-token <token>', PEER_TOKEN_HELP)
    .requiredOption(
      '--task-id <id>',
      "the task's id at the peer: for a delegated task, its `peer task` in `delegate` / `federation list` output (`peer_task_id` with --json), not its a2a id nor the local task id",
    )
    .requiredOption('--sender <name>', 'who is speaking')
    .requiredOption('--recipient <name>', 'who it is for')
    .requiredOption('--content <text>', 'the message')
    .option('--tenant <tenant>', 'tenant to record the message under', 'default')
    .action(
      async (opts: { peer: string; peerToken?: string; taskId: string; sender: string; recipient: string; content: string; tenant: string }, cmd: Command) => {
        const message = await cli.withNode(({ services, config }) =>
          services.delegation.sendMessage({
            tenantId: opts.tenant,
            peerUrl: opts.peer,
            peerToken: peerTokenResolver(config, opts.peerToken ?? null)(opts.peer),
            sender: opts.sender,
            recipient: opts.recipient,
            content: opts.content,
            taskId: opts.taskId,
          }),
        )
        if (wantsJson(cmd))
          return printJson({
            ok: true,
            id: message.id,
            direction: message.direction,
            delivered: message.delivered,
            external_endpoint: message.externalEndpoint,
            task_id: message.taskId,
          })
        printLines(`✓ message ${message.id} delivered to ${message.externalEndpoint}`)
      },
    )
  federation
    .command('sync')
    .description(
      'follow every delegation in progress once: settle the finished ones after verifying their receipts ' +
        `(exit ${EXIT_FOLLOW_ERRORS} when following any of them recorded an error, listed on stderr; with --json, in the object)`,
    )
    .option(
      '--peer-token <token>',
      'bearer token presented to every peer followed in this run, never stored (default: BERNSTEIN_PEER_TOKENS for the peer URL, else BERNSTEIN_PEER_TOKEN)',
    )
    .action(async (opts: { peerToken?: string }, cmd: Command) => {
      const settled = await cli.withNode(({ services }) => services.delegation.syncDue({ all: true }), { peerToken: opts.peerToken ?? null })
      const failed = settled.filter(followFailed)
      const error = failed.length === 0 ? null : `following ${failed.length} of ${settled.length} delegation(s) recorded an error`
      if (failed.length > 0) fail(EXIT_FOLLOW_ERRORS)
      // With --json one object: the error and the ids of the failed ones in it, nothing on stderr.
      if (wantsJson(cmd)) {
        return printJson({ ok: error === null, ...(error !== null && { error, failed: failed.map((d) => d.id) }), delegations: settled.map(toWire) })
      }
      printLines(...(settled.length === 0 ? ['nothing to follow'] : settled.map(line)))
      if (error === null) return
      process.stderr.write(
        `error: ${error}:\n` +
          failed
            .map((d) => {
              const hint = hintFor(d.lastError)
              return `  ${d.id} (task ${d.localTaskId} -> ${d.peerUrl}): ${d.lastError ?? ''}\n${hint ? `    ${hint}\n` : ''}`
            })
            .join(''),
      )
    })
}
