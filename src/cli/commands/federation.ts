import { type Command, InvalidArgumentError, Option } from 'commander'
import type { Delegation } from '../../federation/delegation.js'
import { fail, printJson, printLines, wantsJson } from '../output.js'
import { withNode } from '../node-context.js'


function usd(value: string): number {
  const n = Number(value)
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(n)) throw new InvalidArgumentError(`'${value}' is not a non-negative number of USD`)
  return n
}

function fingerprint(value: string, previous: string[]): string[] {
  if (!/^sha256:[0-9a-f]{64}$/.test(value)) throw new InvalidArgumentError(`'${value}' is not a key fingerprint (sha256: + 64 lowercase hex)`)
  return [...previous, value]
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
    remote_a2a_task_id: d.remoteA2ATaskId,
    peer_issuer: d.peerIssuer,
    peer_fingerprint: d.peerFingerprint,
    attempts: d.attempts,
    last_error: d.lastError,
    result: d.result,
    updated_at: d.updatedAt,
  }
}

function line(d: Delegation): string {
  return `${d.id}  ${d.status.padEnd(11)}  task ${d.localTaskId} -> ${d.peerUrl}${d.remoteA2ATaskId ? ` (a2a ${d.remoteA2ATaskId})` : ''}${d.lastError ? `  [${d.lastError}]` : ''}`
}

export function registerFederation(program: Command): void {
  program
    .command('delegate')
    .description("delegate a local task to a peer after verifying the peer's capability card")
    .requiredOption('--peer <url>', "the peer's base URL")
    .addOption(new Option('--peer-token <token>', 'bearer token for the peer').env('BERNSTEIN_PEER_TOKEN'))
    .requiredOption('--task-id <id>', 'the local task to delegate')
    .option('--message <text>', "what to ask (default: the task's description)")
    .option('--role <role>', "role at the peer (default: the task's role)")
    .option('--tenant <tenant>', 'tenant of the local task', 'default')
    .option('--trusted-fingerprint <fp>', 'a trusted peer card key fingerprint (repeatable; at least one)', fingerprint, [])
    .option('--require-cost-cap-usd <n>', "the peer's cost cap must not exceed this", usd)
    .option('--require-redaction-tier <tier>', 'minimum redaction tier (none < basic < standard < strict)')
    .option('--require-sandbox-profile <profile>', 'minimum sandbox profile (none < process < container < microvm)')
    .action(
      async (
        opts: {
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
        const d = await withNode((services) =>
          services.delegation.delegate({
            tenantId: opts.tenant,
            peerUrl: opts.peer,
            peerToken: opts.peerToken ?? null,
            taskId: opts.taskId,
            ...(opts.message !== undefined && { message: opts.message }),
            ...(opts.role !== undefined && { role: opts.role }),
            trustedFingerprints: opts.trustedFingerprint,
            requirements: {
              maxCostCapUsd: opts.requireCostCapUsd ?? Infinity,
              minRedactionTier: opts.requireRedactionTier ?? 'none',
              minSandboxProfile: opts.requireSandboxProfile ?? 'none',
            },
          }),
        )
        const ok = d.status === 'accepted' || d.status === 'in_progress' || d.status === 'completed'
        if (wantsJson(cmd)) printJson({ ok, ...toWire(d) })
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
      const all = await withNode((services) => services.delegation.list(opts.tenant))
      if (wantsJson(cmd)) return printJson(all.map(toWire))
      printLines(...(all.length === 0 ? ['no delegations'] : all.map(line)))
    })
  federation
    .command('message')
    .description("send a message into a task at a peer; recorded here as outbound once the peer accepts it")
    .requiredOption('--peer <url>', "the peer's base URL")
    .addOption(new Option('--peer-token <token>', 'bearer token for the peer').env('BERNSTEIN_PEER_TOKEN'))
    .requiredOption('--task-id <id>', "the peer's task id")
    .requiredOption('--sender <name>', 'who is speaking')
    .requiredOption('--recipient <name>', 'who it is for')
    .requiredOption('--content <text>', 'the message')
    .option('--tenant <tenant>', 'tenant to record the message under', 'default')
    .action(async (opts: { peer: string; peerToken?: string; taskId: string; sender: string; recipient: string; content: string; tenant: string }, cmd: Command) => {
      const message = await withNode((services) =>
        services.delegation.sendMessage({
          tenantId: opts.tenant,
          peerUrl: opts.peer,
          peerToken: opts.peerToken ?? null,
          sender: opts.sender,
          recipient: opts.recipient,
          content: opts.content,
          taskId: opts.taskId,
        }),
      )
      if (wantsJson(cmd)) return printJson({ id: message.id, direction: message.direction, delivered: message.delivered, external_endpoint: message.externalEndpoint, task_id: message.taskId })
      printLines(`✓ message ${message.id} delivered to ${message.externalEndpoint}`)
    })
  federation
    .command('sync')
    .description('follow every delegation in progress once: settle the finished ones after verifying their receipts')
    .action(async (_opts: unknown, cmd: Command) => {
      const settled = await withNode((services) => services.delegation.syncDue({ all: true }))
      if (wantsJson(cmd)) return printJson(settled.map(toWire))
      printLines(...(settled.length === 0 ? ['nothing to follow'] : settled.map(line)))
    })
}
