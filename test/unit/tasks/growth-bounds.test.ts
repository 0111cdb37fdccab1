import { describe, expect, it } from 'vitest'
import { assertArtifactRoom, MAX_ARTIFACT_BYTES_PER_TASK, MAX_ARTIFACTS_PER_TASK } from '../../../src/a2a/a2a-task.js'
import { isAppError } from '../../../src/errors.js'
import { MAX_PROGRESS_BYTES, MAX_TASK_PAGE_BYTES, type Task, fitTaskPage, withProgressEntry } from '../../../src/tasks/task.js'
import { taskFixture } from '../../helpers/task-fixture.js'

function task(id: string, description = '', progress: string[] = []): Task {
  return taskFixture(id, 1, {
    description,
    role: 'auto',
    status: 'in_progress',
    progressLog: progress.map((message) => ({ timestamp: 1, message, percent: 0 })),
  })
}

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn()
  } catch (error) {
    return isAppError(error) ? error.code : 'not an AppError'
  }
  return undefined
}

describe('fitTaskPage', () => {
  it('keeps a page whose tasks fit, whole', () => {
    const page = [task('a', 'x'.repeat(1000)), task('b'), task('c')]
    expect(fitTaskPage(page)).toBe(page)
  })

  it('stops before the task that takes the page over the budget, counting UTF-8 bytes', () => {
    // Each description is just under a third of the budget in UTF-8 (three bytes per character), a ninth in UTF-16.
    const third = '€'.repeat(Math.floor(MAX_TASK_PAGE_BYTES / 9) - 100)
    const page = [task('a', third), task('b', third), task('c', third), task('d', third)]
    expect(fitTaskPage(page).map((t) => t.id)).toEqual(['a', 'b', 'c'])
  })

  it('always keeps the first task, however large, so that a listing moves on', () => {
    const huge = task('huge', 'x'.repeat(MAX_TASK_PAGE_BYTES + 1))
    expect(fitTaskPage([huge, task('b')]).map((t) => t.id)).toEqual(['huge'])
  })

  it('counts progress messages and metadata too', () => {
    const half = 'p'.repeat(MAX_TASK_PAGE_BYTES / 2)
    const withLog = task('log', '', [half])
    const withMetadata = { ...task('meta'), metadata: { blob: half } }
    expect(fitTaskPage([withLog, withMetadata, task('c')]).map((t) => t.id)).toEqual(['log'])
  })
})

describe('withProgressEntry', () => {
  it('appends without touching the task it was given', () => {
    const before = task('t', '', ['one'])
    const after = withProgressEntry(before, { timestamp: 2, message: 'two', percent: 5 })
    expect(after.progressLog.map((p) => p.message)).toEqual(['one', 'two'])
    expect(before.progressLog).toHaveLength(1)
  })

  it('refuses with payload_too_large at exactly one byte past the bound', () => {
    const almost = task('t', '', ['a'.repeat(MAX_PROGRESS_BYTES - 3)])
    expect(withProgressEntry(almost, { timestamp: 2, message: 'abc', percent: 0 }).progressLog).toHaveLength(2)
    expect(codeOf(() => withProgressEntry(almost, { timestamp: 2, message: 'é€', percent: 0 }))).toBe('payload_too_large')
  })
})

describe('assertArtifactRoom', () => {
  it('allows up to the byte bound, names included, and refuses one byte past it', () => {
    const usage = { count: 3, bytes: MAX_ARTIFACT_BYTES_PER_TASK - 10 }
    expect(codeOf(() => assertArtifactRoom('a', usage, { name: 'n', data: 'é'.repeat(4) + 'x' }))).toBeUndefined()
    expect(codeOf(() => assertArtifactRoom('a', usage, { name: 'n', data: 'é'.repeat(5) }))).toBe('payload_too_large')
  })

  it('refuses a further artifact once the task has the most it keeps', () => {
    expect(codeOf(() => assertArtifactRoom('a', { count: MAX_ARTIFACTS_PER_TASK - 1, bytes: 0 }, { name: 'n', data: '' }))).toBeUndefined()
    expect(codeOf(() => assertArtifactRoom('a', { count: MAX_ARTIFACTS_PER_TASK, bytes: 0 }, { name: 'n', data: '' }))).toBe('payload_too_large')
  })
})
