/**
 * What the PostgreSQL connection (pg-pool.ts) knows about the SQL texts this code sends, registered by the code that
 * builds them. Keyed by the exact text, so the set is bounded by the code (a few dozen texts), never by the data:
 * statements built per call (lists, filters) are never registered.
 *
 * - A **fixed shape** (every {@link ReusableQuery}, the chain append) is prepared once per connection
 *   under a name and afterwards only bound and executed. An unnamed statement is parsed, analysed and planned again
 *   on every execution.
 * - A **deferrable** write (the one-row INSERT of a new task or A2A task) may be held back inside a transaction and
 *   sent with the transaction's next statement instead of in a round trip of its own: its caller needs nothing back
 *   but success, and anything that could read the row goes after it (see {@link WriteBehind}).
 * - A **host** statement (the chain append, the head reads) may carry the held-back writes as data-modifying CTEs in
 *   front of it: it reads none of the tables they write.
 * - A **before-commit** statement (the chain append built on a guess, which fails its transaction when the guess was
 *   stale) is a host that is itself held back: its caller needs nothing back, so it travels in the round trip of the
 *   transaction's next statement, at best its COMMIT.
 */
const names = new Map<string, string>()
const deferrable = new Set<string>()
const hosts = new Set<string>()
const beforeCommit = new Set<string>()

/** At most this many texts are named; beyond it (combinations of held-back writes nobody foresaw) they go unnamed. */
const MAX_NAMED = 256

export type ShapeRole = 'deferrable' | 'host' | 'before-commit'

/** Marks `sql` as a fixed shape (and, optionally, its role); returns it unchanged, so a constant can be declared through it. */
export function fixedShape(sql: string, role?: ShapeRole): string {
  if (!names.has(sql) && names.size < MAX_NAMED) names.set(sql, `bernstein_${names.size + 1}`)
  if (role === 'deferrable') deferrable.add(sql)
  if (role === 'host' || role === 'before-commit') hosts.add(sql)
  if (role === 'before-commit') beforeCommit.add(sql)
  return sql
}

/** The name a connection prepares `sql` under, when it is a fixed shape. */
export function preparedName(sql: string): string | undefined {
  return names.get(sql)
}

export function isDeferrable(sql: string): boolean {
  return deferrable.has(sql)
}

export function isHost(sql: string): boolean {
  return hosts.has(sql)
}

export function isBeforeCommit(sql: string): boolean {
  return beforeCommit.has(sql)
}
