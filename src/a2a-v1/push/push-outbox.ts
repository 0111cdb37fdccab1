import type { Clock, Ids } from '../../runtime.js'
import type { Repositories } from '../../store/store.js'
import type { StreamEvent, StreamEventListener } from '../stream-recorder.js'

/**
 * Writes the deliveries of a task's events: told of each event the stream log records (inside the transaction of
 * the change that made it, so committed with it or not at all), one delivery per push config of that A2A task.
 * Streams and pushes thus carry the same events in the same order: the log decides what an event is.
 */
export class PushOutbox implements StreamEventListener {
  readonly #clock: Clock
  readonly #ids: Ids
  readonly #wake: () => void

  /** `wake`: told (after the transaction had a chance to commit) that deliveries were written. */
  constructor(deps: { readonly clock: Clock; readonly ids: Ids; readonly wake: () => void }) {
    this.#clock = deps.clock
    this.#ids = deps.ids
    this.#wake = deps.wake
  }

  async onStreamEvent(repos: Repositories, event: StreamEvent): Promise<void> {
    // Most tasks have no push config: the recorder counted them in the read it makes anyway.
    if (event.pushConfigs === 0) return
    const configs = await repos.a2aV1Push.configsOf(event.tenantId, event.a2aTaskId)
    for (const config of configs) {
      await repos.a2aV1Push.insertDelivery({
        id: this.#ids.shortId() + this.#ids.shortId(),
        tenantId: event.tenantId,
        a2aTaskId: event.a2aTaskId,
        configId: config.configId,
        body: JSON.stringify(event.body),
        createdAt: this.#clock.now(),
      })
    }
    if (configs.length > 0) setImmediate(this.#wake)
  }
}
