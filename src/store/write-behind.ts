import { fixedShape, isBeforeCommit, isDeferrable, isHost } from './statement-shapes.js'

export interface Statement {
  readonly sql: string
  readonly values: readonly unknown[]
}

/** `sql` with each `$n` placeholder moved up by `offset` (Kysely compiles values as placeholders, never literals). */
const renumbered = (sql: string, offset: number): string => (offset === 0 ? sql : sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`))

/**
 * What a PostgreSQL transaction has asked for and not sent yet, one per connection. On PostgreSQL every round trip
 * costs more than the statement it carries on a loaded host, and a send was six of them (BEGIN, task, receipt-spine
 * append, A2A task, audit append, COMMIT); while a chain head's lock is held, each one also holds up every other
 * writer of that chain. So, inside a transaction:
 *
 * - BEGIN is not sent on its own: it goes in the round trip of the transaction's first statement (pipelined, see
 *   pg-pool.ts); a transaction that sends nothing else sends no BEGIN, COMMIT or ROLLBACK either;
 * - a deferrable write (a new row's INSERT) is sent as a data-modifying CTE in front of the next host statement;
 * - a before-commit statement (a chain append built on a guess, statement-shapes.ts) carries the deferrable writes
 *   held before it and is itself held until the next statement, so that a send's appends travel with its COMMIT.
 *
 * Order and visibility are kept: every other statement, COMMIT included, first sends what is held (so a read in the
 * same transaction sees the rows), in the same round trip; ROLLBACK drops it, as the database would. An error in a
 * held statement surfaces on the statement that carried it (pg-pool.ts answers a round trip with its first error),
 * which aborts the transaction as it would have.
 */
export class WriteBehind {
  #inTransaction = false
  /** The transaction's BEGIN, until its first statement goes out. */
  #begin: Statement | null = null
  #held: Statement[] = []

  /**
   * What to send for `statement`, in order and in one round trip, the last one answering for it; none when it is
   * held (or is the COMMIT or ROLLBACK of a transaction that sent nothing), which is answered at once.
   */
  plan(statement: Statement): readonly Statement[] {
    const { sql } = statement
    if (sql === 'begin' || sql.startsWith('start transaction')) {
      this.#inTransaction = true
      this.#begin = statement
      this.#held = []
      return []
    }
    if (this.#inTransaction && (isDeferrable(sql) || isBeforeCommit(sql))) {
      this.#held.push(statement)
      return []
    }
    if (sql === 'rollback') {
      const begun = this.#begin === null
      this.reset()
      return begun ? [statement] : []
    }
    if (sql === 'commit') {
      this.#inTransaction = false
      if (this.#begin !== null && this.#held.length === 0) {
        this.#begin = null
        return []
      }
    }
    const out: Statement[] = this.#begin === null ? [] : [this.#begin]
    this.#begin = null
    const held = this.#held
    this.#held = []
    let pending: Statement[] = []
    for (const write of held) {
      if (isBeforeCommit(write.sql)) {
        out.push(merged(pending, write))
        pending = []
      } else pending.push(write)
    }
    if (isHost(sql)) out.push(merged(pending, statement))
    else {
      if (pending.length > 0) out.push(merged(pending.slice(0, -1), pending.at(-1) as Statement))
      out.push(statement)
    }
    return out
  }

  /** The connection goes back to its pool: nothing held back may outlive its transaction. */
  reset(): void {
    this.#inTransaction = false
    this.#begin = null
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
