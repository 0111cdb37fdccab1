import type { A2AV1StreamEventRow, A2AV1StreamPosition, A2AV1StreamState } from '../a2a-v1/stream-records.js'
import { Repository } from './repository.js'

/** The A2A v1.0 stream events of each task, numbered per task (`seq` 1, 2, …). */
export class A2AV1StreamEventRepository extends Repository {
  /** Where a task's log stands (its last row). Read under the linked task's row lock, so the next `seq` is free. */
  async position(a2aTaskId: string): Promise<A2AV1StreamPosition> {
    const last = await this.db
      .selectFrom('a2a_v1_stream_events')
      .select(['seq', 'state', 'artifacts'])
      .where('a2a_task_id', '=', a2aTaskId)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst()
    return last === undefined
      ? { lastSeq: 0, lastState: null, artifacts: 0 }
      : { lastSeq: Number(last.seq), lastState: last.state, artifacts: Number(last.artifacts) }
  }

  /**
   * Everything the recorder needs before logging a change of an A2A task, in one statement: where its log stands,
   * its context, how many artifacts it holds, when its oldest logged event was recorded (Unix seconds; null with no
   * events) and how many push configs it has. Read under the linked task's row lock, so the next `seq` is free.
   */
  async streamState(tenantId: string, a2aTaskId: string): Promise<A2AV1StreamState> {
    const row = await this.db
      .selectNoFrom((eb) => {
        const events = eb.selectFrom('a2a_v1_stream_events').where('a2a_task_id', '=', a2aTaskId)
        const last = events.orderBy('seq', 'desc').limit(1)
        return [
          last.select('seq').as('seq'),
          last.select('state').as('state'),
          last.select('artifacts').as('artifacts'),
          events.select((e) => e.fn.min('created_at').as('oldest')).as('oldest'),
          eb.selectFrom('a2a_v1_tasks').select('context_id').where('tenant_id', '=', tenantId).where('a2a_task_id', '=', a2aTaskId).as('context_id'),
          eb
            .selectFrom('a2a_artifacts')
            .select((e) => e.fn.countAll<string | number>().as('count'))
            .where('a2a_task_id', '=', a2aTaskId)
            .as('artifact_count'),
          eb
            .selectFrom('a2a_v1_push_configs')
            .select((e) => e.fn.countAll<string | number>().as('count'))
            .where('tenant_id', '=', tenantId)
            .where('a2a_task_id', '=', a2aTaskId)
            .as('push_configs'),
        ]
      })
      .executeTakeFirstOrThrow()
    return {
      lastSeq: row.seq === null ? 0 : Number(row.seq),
      lastState: row.state ?? null,
      artifacts: row.artifacts === null ? 0 : Number(row.artifacts),
      oldestAt: row.oldest === null ? null : Number(row.oldest),
      contextId: row.context_id ?? null,
      artifactCount: Number(row.artifact_count ?? 0),
      pushConfigs: Number(row.push_configs ?? 0),
    }
  }

  async append(row: A2AV1StreamEventRow): Promise<void> {
    await this.db
      .insertInto('a2a_v1_stream_events')
      .values({
        a2a_task_id: row.a2aTaskId,
        seq: row.seq,
        kind: row.kind,
        state: row.state,
        artifacts: row.artifacts,
        body: row.body,
        created_at: row.createdAt,
      })
      .execute()
  }

  /** The task's events after `seq` recorded at or after `since` (Unix seconds), oldest first, at most `limit`. */
  async after(a2aTaskId: string, seq: number, since: number, limit: number): Promise<A2AV1StreamEventRow[]> {
    const rows = await this.db
      .selectFrom('a2a_v1_stream_events')
      .selectAll()
      .where('a2a_task_id', '=', a2aTaskId)
      .where('seq', '>', seq)
      .where('created_at', '>=', since)
      .orderBy('seq', 'asc')
      .limit(limit)
      .execute()
    return rows.map((r) => ({
      a2aTaskId: r.a2a_task_id,
      seq: Number(r.seq),
      kind: r.kind === 'artifact' ? 'artifact' : 'status',
      state: r.state,
      artifacts: Number(r.artifacts),
      body: r.body,
      createdAt: Number(r.created_at),
    }))
  }

  /** Forgets the task's events recorded before `before` (Unix seconds), except the last, which says where the log stands. */
  async prune(a2aTaskId: string, before: number, lastSeq: number): Promise<void> {
    await this.db.deleteFrom('a2a_v1_stream_events').where('a2a_task_id', '=', a2aTaskId).where('created_at', '<', before).where('seq', '<', lastSeq).execute()
  }
}
