/**
 * Migration 016 on each engine: counts kept before it stay, the rows written after it are counted (as deltas on
 * PostgreSQL, in place on SQLite), and its down folds the deltas back into the counts and counts in place again.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { TaskRepository } from '../../../src/store/task.repository.js'
import { testEngines, unmigratedDatabasePerTest } from '../../helpers/engines.js'
import { taskFixture } from '../../helpers/task-fixture.js'

const BEFORE = '2026-12-02-015-rate-limit-table'
const THIS = '2026-12-03-016-row-count-deltas'

const openUnmigrated = unmigratedDatabasePerTest()

for (const engine of testEngines()) {
  describe(`migration ${THIS} (${engine})`, () => {
    it('keeps the counts made before it, counts what comes after, and its down folds the deltas back', async () => {
      const { connection, migrator } = await openUnmigrated(engine)
      const tasks = new TaskRepository(connection.db, engine)
      let serial = 0
      const insert = async (count: number) => {
        for (let i = 0; i < count; i++) await tasks.insert(taskFixture(`t${++serial}`, serial))
      }
      const inPlace = async () =>
        Number((await sql<{ n: number | string }>`select n from row_counts where name = 'tasks.open'`.execute(connection.db)).rows[0]?.n)

      expect((await migrator.migrateTo(BEFORE)).error).toBeUndefined()
      await insert(3)
      expect(await inPlace()).toBe(3)

      expect((await migrator.migrateTo(THIS)).error).toBeUndefined()
      await insert(2)
      expect((await tasks.countedByStatus()).get('open')).toBe(5)
      // PostgreSQL appends the two as deltas; SQLite, one writer, still counts in place.
      expect(await inPlace()).toBe(engine === 'postgres' ? 3 : 5)

      expect((await migrator.migrateDown()).error).toBeUndefined()
      expect(await inPlace()).toBe(5)
      await insert(1)
      expect(await inPlace()).toBe(6)
    })
  })
}
