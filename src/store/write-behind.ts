import { fixedShape, isDeferrable, isHost } from './statement-shapes.js'

export interface Statement {
  readonly sql: string
  readonly values: readonly unknown[]
}

/** `sql` with each `$n` placeholder moved up by `offset` (Kysely compiles values as placeholders, never literals). */
const renumbered = (sql: string, offset: number): string => (offset === 0 ? sql : sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`))

/**
 * The deferrable writes (see statement-shapes.ts) a PostgreSQL transaction has made and not sent yet, one per
 * connection. On PostgreSQL every statement is a round trip, and on a loaded host the round trip costs more than
 * the statement; a send was six of them (BEGIN, task, receipt-spine append, A2A task, audit append, COMMIT). Held
 * back and sent as CTEs in front of the next chain append, the two INSERTs cost none of their own.
 *
 * Order and visibility are kept: every statement other than a host first sends what is held back (so a read in the
 * same transaction sees the rows), COMMIT too; ROLLBACK drops it, as the database would. An error in a held-back
 * write surfaces on the statement that carried it, which aborts the transaction as it would have.
 */
export class WriteBehind {
  #inTransaction = false
  #held: Statement[] = []

  /**
   * What to send for `statement`: nothing (`null`, it is held back), or the statements to run in order, the last
   * one answering for `statement`.
   */
  plan(statement: Statement): readonly Statement[] | null {
    const { sql } = statement
    if (this.#inTransaction && isDeferrable(sql)) {
      this.#held.push(statement)
      return null
    }
    if (sql === 'rollback') {
      this.#inTransaction = false
      this.#held = []
      return [statement]
    }
    if (sql === 'begin' || sql.startsWith('start transaction')) this.#inTransaction = true
    if (sql === 'commit') this.#inTransaction = false
    if (this.#held.length === 0) return [statement]
    const held = this.#held
    this.#held = []
    return isHost(sql) ? [merged(held, statement)] : [merged(held.slice(0, -1), held.at(-1) as Statement), statement]
  }

  /** The connection goes back to its pool: nothing held back may outlive its transaction. */
  reset(): void {
    this.#inTransaction = false
    this.#held = []
  }
}

/** Merged texts by the texts merged (the same few combinations recur: a task's INSERT before the spine append). */
const mergedTexts = new Map<string, string>()
const MAX_MERGED_TEXTS = 256

/** `last` with the `before` writes as data-modifying CTEs in front of it, all of their parameters renumbered in order. */
function merged(before: readonly Statement[], last: Statement): Statement {
  if (before.length === 0) return last
  const values = [...before.flatMap((write) => write.values), ...last.values]
  const key = [...before.map((write) => write.sql), last.sql].join('\u0000')
  let sql = mergedTexts.get(key)
  if (sql === undefined) {
    const ctes: string[] = []
    let offset = 0
    for (const [i, write] of before.entries()) {
      ctes.push(`held_${i + 1} as (${renumbered(write.sql, offset)})`)
      offset += write.values.length
    }
    const main = renumbered(last.sql, offset)
    sql = /^with\s/i.test(main) ? `with ${ctes.join(', ')}, ${main.slice(5)}` : `with ${ctes.join(', ')} ${main}`
    // Prepared too (fixedShape); both registries are bounded, beyond which a combination is merged anew each time.
    if (mergedTexts.size < MAX_MERGED_TEXTS) mergedTexts.set(key, fixedShape(sql))
  }
  return { sql, values }
}
