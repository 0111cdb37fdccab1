/** One event of a task's stream log: a status or an artifact update, as StreamResponse JSON, numbered per task. */
export interface A2AV1StreamEventRow {
  readonly a2aTaskId: string
  readonly seq: number
  readonly kind: 'status' | 'artifact'
  /** The task's `TASK_STATE_*` after the event. */
  readonly state: string
  /** How many artifact events the log holds up to this one. */
  readonly artifacts: number
  readonly body: string
  /** Unix seconds. */
  readonly createdAt: number
}

/** Where a task's stream log stands. */
export interface A2AV1StreamPosition {
  readonly lastSeq: number
  /** The state after the last event; null before the first. */
  readonly lastState: string | null
  /** How many artifact events were recorded (artifacts are only appended, so the next one's index). */
  readonly artifacts: number
}

/** What logging a change of an A2A task starts from (`streamState`): its log's position and what surrounds it. */
export interface A2AV1StreamState extends A2AV1StreamPosition {
  /** When the oldest event still logged was recorded (Unix seconds); null with none. */
  readonly oldestAt: number | null
  /** The v1 context of the task; null when it was created without one (v0). */
  readonly contextId: string | null
  /** How many artifacts the A2A task holds. */
  readonly artifactCount: number
  /** How many push configs the task has. */
  readonly pushConfigs: number
}
