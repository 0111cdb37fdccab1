/**
 * `POST /__bench/reset` on the bench's baselines (bare Express and the A2A SDK): empties the baseline's in-memory
 * store and, since they run with `--expose-gc` (systems.ts), collects the old store's garbage at once, so that the
 * next run starts from the same empty heap. `resetBaseline` in systems.ts calls it before every send run.
 */
import type { Express } from 'express'

export const RESET_PATH = '/__bench/reset'

export function serveReset(app: Express, empty: () => void): void {
  app.post(RESET_PATH, (_req, res) => {
    empty()
    ;(globalThis as { gc?: () => void }).gc?.()
    res.status(204).end()
  })
}
