/**
 * `bernstein-a2a lineage checkpoint` and `lineage verify-node` (docs/scaling.md): sign a checkpoint of every chain
 * partition head now, and verify the whole node (every partition of the tracker-audit chain and the receipt spine,
 * every checkpoint's signature and recorded heads).
 *
 * @module
 */
import type { Command } from 'commander'
import type { NodeVerification } from '../../lineage/checkpoints.js'
import type { CliContext } from '../context.js'
import { fail, printJson, printLines, wantsJson } from '../output.js'

/** The verdict in words: one line per partition, then the checkpoints. */
function verificationLines(result: NodeVerification): string[] {
  const lines = result.partitions.map(
    (p) => `${p.ok ? '✓' : '✗'} ${p.kind} ${p.chain}: ${p.entries} entr${p.entries === 1 ? 'y' : 'ies'}${p.failure ? ` (${p.failure})` : ''}`,
  )
  const { count, latest, failures } = result.checkpoints
  lines.push(`${failures.length === 0 ? '✓' : '✗'} ${count} checkpoint(s)${latest ? `, latest ${latest.id} over ${latest.partitions} partition(s)` : ''}`)
  for (const failure of failures) lines.push(`  - ${failure}`)
  lines.push(result.ok ? 'verify-node: OK' : 'verify-node: FAIL')
  return lines
}

/** Registers `checkpoint` and `verify-node` under the `lineage` command. */
export function registerLineageNode(lineage: Command, cli: CliContext): void {
  lineage
    .command('checkpoint')
    .description('sign a checkpoint of every tracker-audit and receipt-spine partition head now (the server does it periodically)')
    .action(async (_opts: unknown, cmd: Command) => {
      const body = await cli.withNode((node) => node.checkpoints.write())
      if (wantsJson(cmd)) return printJson({ ok: true, id: body.id, partitions: body.partitions })
      printLines(`✓ checkpoint ${body.id} over ${body.partitions.length} partition(s)`)
    })

  lineage
    .command('verify-node')
    .description('verify every chain partition and every signed checkpoint: a dropped or rolled-back partition fails; exits 1 on failure')
    .action(async (_opts: unknown, cmd: Command) => {
      const result = await cli.withNode((node) => node.checkpoints.verifyNode())
      const failures = [...result.partitions.filter((p) => !p.ok).map((p) => `${p.chain}: ${p.failure}`), ...result.checkpoints.failures]
      if (wantsJson(cmd)) printJson({ ok: result.ok, partitions: result.partitions, checkpoints: result.checkpoints, failures })
      else printLines(...verificationLines(result))
      if (!result.ok) fail(1)
    })
}
