/** The logging surface the application uses; pino's logger satisfies it, and tests may pass a silent one. */
export interface Logger {
  error(obj: unknown, msg?: string): void
  warn(obj: unknown, msg?: string): void
  info(obj: unknown, msg?: string): void
  debug(obj: unknown, msg?: string): void
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {} }
