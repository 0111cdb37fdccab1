import type { Task } from '../../src/tasks/task.js'

/**
 * A stored task's every field, for tests that write rows through a repository directly: an open task of the default
 * tenant created at `at`, with `changes` over it.
 */
export function taskFixture(id: string, at: number, changes: Partial<Task> = {}): Task {
  return {
    id,
    tenantId: 'default',
    title: id,
    description: '',
    role: 'backend',
    priority: 2,
    scope: 'medium',
    complexity: 'medium',
    estimatedMinutes: 30,
    status: 'open',
    taskType: 'standard',
    dependsOn: [],
    parentTaskId: null,
    ownedFiles: [],
    assignedAgent: null,
    resultSummary: null,
    terminalReason: null,
    metadata: {},
    createdAt: at,
    updatedAt: at,
    claimedAt: null,
    completedAt: null,
    closedAt: null,
    progressLog: [],
    version: 1,
    ...changes,
  }
}
