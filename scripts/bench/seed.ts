/**
 * Seeds a stopped server's SQLite database directly: N linked task pairs (tasks + a2a_tasks) cloned from one pair
 * the server itself wrote through the API (so every column, the schema and the receipt are what the migrations and
 * the service produce), with fresh random ids, in one transaction, within a time budget.
 */
import { randomBytes } from 'node:crypto'
import SQLite from 'better-sqlite3'

export interface SeedResult {
  /** Pairs actually written (less than asked when the time budget ran out). */
  readonly seeded: number
  readonly seconds: number
  /** A2A task ids spread over the whole table, for GET to cycle through. */
  readonly sampleIds: string[]
}

type Row = Record<string, unknown>

function insertStatement(db: SQLite.Database, table: string, columns: readonly string[]): SQLite.Statement {
  return db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => '@' + c).join(', ')})`)
}

export function seedTasks(file: string, templateA2AId: string, count: number, budgetSeconds: number, samples: number): SeedResult {
  const t0 = performance.now()
  const db = new SQLite(file)
  try {
    // A fixture, not production data: no journal and no fsync while it is written; WAL again afterwards.
    db.pragma('journal_mode = OFF')
    db.pragma('synchronous = OFF')
    db.pragma('cache_size = -262144')
    const a2a = db.prepare('SELECT * FROM a2a_tasks WHERE id = ?').get(templateA2AId) as Row | undefined
    if (!a2a) throw new Error(`seed: template a2a task ${templateA2AId} not found`)
    const task = db.prepare('SELECT * FROM tasks WHERE id = ?').get(a2a['bernstein_task_id']) as Row | undefined
    if (!task) throw new Error('seed: template task not found')
    const insertTask = insertStatement(db, 'tasks', Object.keys(task))
    const insertA2A = insertStatement(db, 'a2a_tasks', Object.keys(a2a))
    const every = Math.max(1, Math.floor(count / samples))
    const sampleIds: string[] = []
    const deadline = t0 + budgetSeconds * 1000
    let seeded = 0
    const createdAt = Number(task['created_at'])
    const write = db.transaction(() => {
      const batch = 4096
      while (seeded < count) {
        if (seeded % batch === 0 && performance.now() > deadline) break
        // 6 random bytes per id, as the server's own ids; a collision with 10^6 rows is ~1e-3 likely, so skip it.
        const bytes = randomBytes(12)
        const taskId = bytes.toString('hex', 0, 6)
        const a2aId = bytes.toString('hex', 6, 12)
        const at = createdAt - (count - seeded) / 1000
        try {
          insertTask.run({ ...task, id: taskId, created_at: at, updated_at: at })
          insertA2A.run({ ...a2a, id: a2aId, bernstein_task_id: taskId, created_at: at, updated_at: at })
        } catch (error) {
          if (String(error).includes('UNIQUE')) continue
          throw error
        }
        if (seeded % every === 0 && sampleIds.length < samples) sampleIds.push(a2aId)
        seeded++
      }
    })
    write()
    db.pragma('journal_mode = WAL')
    return { seeded, seconds: (performance.now() - t0) / 1000, sampleIds }
  } finally {
    db.close()
  }
}
