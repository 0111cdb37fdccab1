import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks'
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express'
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
   * Writes are shed while every write answered within the last interval (about half a second) took longer than this
   * from its body being read to the end of its answer, and at least an eighth of `maxWritesInFlight` are in flight: a
   * standing queue (the group commit, the database pool); 0: never.
   */
  readonly maxWriteLatencyMs?: number
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
  readonly #writeLatency: StandingQueue | null

  constructor(options: AdmissionOptions) {
    this.#options = options
    this.#loopDelay = (options.maxEventLoopDelayMs ?? 0) > 0 ? new LoopDelay() : null
    this.#writeLatency = (options.maxWriteLatencyMs ?? 0) > 0 ? new StandingQueue(options.maxWriteLatencyMs ?? 0) : null
  }

  get writesInFlight(): number {
    return this.#writesInFlight
  }

  /** After the rate limit: refuses a write the node has no room for, and counts the ones it admits. */
  admit(): RequestHandler {
    const refusing = this.#options.refusing ?? (() => false)
    return (req, res, next) => {
      if (refusing() && mayRefuse(res)) throw unavailable('Server is shutting down')
      if (!WRITE_METHODS.has(req.method)) return next()
      if (this.#overloaded() && mayRefuse(res)) return shed(req, next)
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
   * bound on top of the deadline; one whose work grows with what is stored (`x-no-deadline`) has none. The handler goes on (a write may still commit, as with any 503 of a lost
   * connection); what it answers later is dropped (see the dispatcher). The connection is closed after the 503,
   * since the request is still being worked on.
   */
  deadline(render: ErrorRequestHandler): RequestHandler {
    const ms = this.#options.requestDeadlineMs
    const waitBoundMs = this.#options.waitBoundMs ?? 0
    return (req, res, next) => {
      this.#timeWrite(req.method, res)
      const policy = routeOf(res).policy
      if (ms <= 0 || !mayRefuse(res) || policy.noDeadline) return next()
      const timeout = policy.waits ? ms + waitBoundMs : ms
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

  #overloaded(): boolean {
    const max = this.#options.maxWritesInFlight
    if (max > 0 && this.#writesInFlight >= max) return true
    if (this.#loopDelay !== null && this.#loopDelay.recentMaxMs() > (this.#options.maxEventLoopDelayMs ?? 0)) return true
    // A queue needs writes waiting: a few slow writes are a slow machine or database (the request deadline's part).
    return this.#writeLatency?.standing() === true && this.#writesInFlight >= Math.max(1, Math.floor(max / QUEUE_FRACTION))
  }

  /** From the body read to the end of the answer, for the standing-queue criterion; not the operations that wait. */
  #timeWrite(method: string, res: Response): void {
    const latency = this.#writeLatency
    if (latency === null || !WRITE_METHODS.has(method) || routeOf(res).policy.waits) return
    const started = performance.now()
    res.once('finish', () => latency.record(performance.now() - started))
  }
}

/**
 * A write refused for load: `503 Server is overloaded` with `Retry-After`. Admission runs as the request's headers are
 * parsed, before the parser has reached its body; answered then, the body would still count as arriving and the
 * connection would be closed (src/http/http-server.ts), and a client on a kept-alive connection would have to open
 * a new one, which a loaded node accepts slowly (Node accepts about one connection per turn of its event loop).
 * So the answer waits for the rest of the current turn: a small body that came with its headers is complete by then,
 * and the connection stays open; a body still trickling in is answered and closed as before.
 */
function shed(req: Request, next: NextFunction): void {
  const refuse = (): void => next(unavailable('Server is overloaded'))
  if (req.complete) refuse()
  else setImmediate(refuse)
}

/**
 * Whether writes queue inside the node (CoDel's test, applied to requests): the shortest time a write took, from its
 * body read to the end of its answer, over the last complete interval of {@link INTERVAL_MS}, is above the target.
 * The shortest, not the average: one write waiting on a lock, or a slow one, does not make a queue, but when even
 * the fastest write of half a second waited that long, every write behind it will too. An interval without a write
 * answered counts as no queue (writes shed meanwhile, or none sent), so admission resumes within an interval once
 * the admitted writes are answered in time; the request deadline covers a database that answers nothing.
 */
class StandingQueue {
  readonly #targetMs: number
  #intervalStart = performance.now()
  #currentMinMs = Number.POSITIVE_INFINITY
  #lastMinMs = 0

  constructor(targetMs: number) {
    this.#targetMs = targetMs
  }

  record(ms: number): void {
    this.#roll()
    if (ms < this.#currentMinMs) this.#currentMinMs = ms
  }

  standing(): boolean {
    this.#roll()
    return this.#lastMinMs > this.#targetMs
  }

  #roll(): void {
    const now = performance.now()
    if (now - this.#intervalStart < INTERVAL_MS) return
    this.#lastMinMs = this.#currentMinMs === Number.POSITIVE_INFINITY ? 0 : this.#currentMinMs
    this.#currentMinMs = Number.POSITIVE_INFINITY
    this.#intervalStart = now
  }
}

const INTERVAL_MS = 500

/** The standing-queue criterion applies while at least this fraction of `maxWritesInFlight` (1 / 8) are in flight. */
const QUEUE_FRACTION = 8

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
