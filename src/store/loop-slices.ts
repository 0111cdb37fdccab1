import { setImmediate as nextTurn } from 'node:timers/promises'

/** How long a walk over stored rows may keep the event loop before it lets the node's requests run. */
export const LOOP_SLICE_MS = 5

/**
 * `rows` as they come, giving the event loop back once `sliceMs` of work (the reader's included) have passed since
 * it last turned. For walks over many stored rows (a chain's verification or export): SQLite's reads are synchronous
 * and settle as microtasks, so a walk would otherwise hold the loop from its first row to its last. A turn per page
 * was not enough: a page's verification takes 20-50 ms, and a request needs several turns (its connection, its body,
 * the group commit, its signatures), so under a steady load requests queued behind the pages for most of the walk
 * (a soak's p99 of 9 s while verifying 221 000 entries).
 */
export async function* inLoopSlices<T>(rows: AsyncIterable<T>, sliceMs: number = LOOP_SLICE_MS): AsyncGenerator<T> {
  let since = performance.now()
  for await (const row of rows) {
    yield row
    if (performance.now() - since >= sliceMs) {
      await nextTurn()
      since = performance.now()
    }
  }
}
