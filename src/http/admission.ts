import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks'
import type { ErrorRequestHandler, RequestHandler, Response } from 'express'
import { AppError } from '../errors.js'
import { routeOf } from './operation-index.js'

/** Load shedding, the answer deadline and the drain's refusals (docs/reliability.md). */
export interface AdmissionOptions {
  /** Writes in flight at most; 0: no limit. */
  readonly maxWritesInFlight: number
  /** From the body read to the answer; 0: no deadline. */
  readonly requestDeadlineMs: number
  /** Writes are shed while the event loop has run this late within the last sample (about half a second); 0: never. */
  readonly maxEventLoopDelayMs?: number
  /**
   * The longest an operation that waits by design (`x-waits: true`: a blocking A2A SendMessage) waits before it
   * answers: its deadline is `requestDeadlineMs` plus this. 0 when absent.
   */
  readonly waitBoundMs?: number
  /** True once the drain's grace period is over: requests still arriving are refused. */
  readonly refusing?: () => boolean
}

const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Seconds a refused client is told to wait: another replica, or this one, will have room by then. */
const RETRY_AFTER_S = '1'

const unavailable = (detail: string): AppError => new AppError('unavailable', detail, { headers: { 'Retry-After': RETRY_AFTER_S } })

/** Only operations that document a 503 are ever answered one here: health, liveness and discovery are always served. */
function mayRefuse(res: Response): boolean {
  return routeOf(res).operation?.statuses.has(503) === true
}

/**
 * What keeps a loaded node answering quickly instead of queueing: writes past `maxWritesInFlight` are answered 503
 * with `Retry-After` at once (a write counts from here, after authentication and the rate limit, to the end of its
 * answer, its body upload included, which the request timeout bounds); an answer not started `requestDeadlineMs`
 * after the body was read becomes a 503 with `Retry-After` (a database that does not answer, a pool or group commit
 * backlog); and once a drain's grace period is over, requests still arriving are refused the same way.
 */
export class Admission {
  readonly #options: AdmissionOptions
  #writesInFlight = 0
  readonly #loopDelay: LoopDelay | null

  constructor(options: AdmissionOptions) {
    this.#options = options
    this.#loopDelay = (options.maxEventLoopDelayMs ?? 0) > 0 ? new LoopDelay() : null
  }

  get writesInFlight(): number {
    return this.#writesInFlight
  }

  /** After the rate limit: refuses a write the node has no room for, and counts the ones it admits. */
  admit(): RequestHandler {
    const max = this.#options.maxWritesInFlight
    const refusing = this.#options.refusing ?? (() => false)
    return (req, res, next) => {
      if (refusing() && mayRefuse(res)) throw unavailable('Server is shutting down')
      if (!WRITE_METHODS.has(req.method)) return next()
      if (max > 0 && this.#writesInFlight >= max && mayRefuse(res)) throw unavailable('Server is overloaded')
      const lateMs = this.#loopDelay?.recentMaxMs() ?? 0
      if (lateMs > (this.#options.maxEventLoopDelayMs ?? 0) && this.#loopDelay !== null && mayRefuse(res)) throw unavailable('Server is overloaded')
      this.#writesInFlight++
      let counted = true
      // Once per write: at its end, or earlier when it turns into a stream (src/http/sse.ts), which is no write in flight.
      const release = (): void => {
        if (!counted) return
        counted = false
        this.#writesInFlight--
      }
      res.locals['releaseWrite'] = release
      res.once('close', release)
      next()
    }
  }

  /**
   * Just before the handler: an answer not begun in time is a 503 with `Retry-After`, in the operation's own error
   * format (`render`: the app's error handler). An operation that waits by design (`x-waits`) is given its wait
   * bound on top of the deadline. The handler goes on (a write may still commit, as with any 503 of a lost
   * connection); what it answers later is dropped (see the dispatcher). The connection is closed after the 503,
   * since the request is still being worked on.
   */
  deadline(render: ErrorRequestHandler): RequestHandler {
    const ms = this.#options.requestDeadlineMs
    const waitBoundMs = this.#options.waitBoundMs ?? 0
    return (req, res, next) => {
      if (ms <= 0 || !mayRefuse(res)) return next()
      const timeout = routeOf(res).policy.waits ? ms + waitBoundMs : ms
      const timer = setTimeout(() => {
        if (res.headersSent) return
        res.locals['deadlinePassed'] = true
        res.setHeader('Connection', 'close')
        render(unavailable('Service Unavailable'), req, res, () => undefined)
      }, timeout)
      timer.unref()
      res.once('close', () => clearTimeout(timer))
      next()
    }
  }
}

/**
 * How late the event loop has lately run: the largest delay Node's monitor saw since the last sample, sampled at most
 * every {@link SAMPLE_MS}. A queue of requests the loop has not reached yet (on SQLite the database work runs on it)
 * shows here before it shows as writes in flight.
 */
class LoopDelay {
  readonly #histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 })
  #sampledAt = performance.now()
  #lastMaxMs = 0

  constructor() {
    this.#histogram.enable()
  }

  recentMaxMs(): number {
    const now = performance.now()
    if (now - this.#sampledAt >= SAMPLE_MS) {
      this.#lastMaxMs = this.#histogram.max / 1e6
      this.#histogram.reset()
      this.#sampledAt = now
    }
    return Math.max(this.#lastMaxMs, this.#histogram.count > 0 ? this.#histogram.max / 1e6 : 0)
  }
}

const SAMPLE_MS = 500
