/**
 * Runs `pass` every `intervalMs` (0 or less: never), one pass at a time: a tick that finds the previous pass still
 * running is skipped. The timer does not keep the process alive; `stop` clears it and waits for a pass in progress.
 * `pass` must not reject (it reports its own failures).
 */
export function runPeriodically(intervalMs: number, pass: () => Promise<void>): { stop(): Promise<void> } {
  if (intervalMs <= 0) return { stop: async () => {} }
  let running: Promise<void> | null = null
  const timer = setInterval(() => {
    if (running) return
    running = pass().finally(() => {
      running = null
    })
  }, intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
