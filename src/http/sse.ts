import type { Response } from 'express'
import type { Logger } from '../logger.js'

/** One Server-Sent Event: `data` is written as it is (one line per line of it). */
export interface SseFrame {
  readonly id?: string
  readonly event?: string
  readonly data: string
}

/** What a streaming operation answers: its events, pulled one at a time, and how to write them. */
export interface SseSource {
  readonly events: AsyncIterator<SseFrame>
  /** A comment line is written this often while no event comes (0: never). */
  readonly keepAliveMs: number
  /** The most bytes a stream may hold unsent: past it, the reader is too slow and is disconnected. */
  readonly maxBufferBytes: number
  /** A stream is ended (cleanly; the client resumes with `Last-Event-ID`) after this long (0: never). */
  readonly maxDurationMs: number
  /** The event that tells the client the stream failed after it started. */
  readonly failure: (error: unknown) => SseFrame
}

/** A reply of a handler that answers a Server-Sent Events stream (`text/event-stream`). */
export interface StreamReply {
  readonly status: 200
  readonly stream: SseSource
}

const KEEP_ALIVE = ': keep-alive\n\n'
const DRAINING = ': the server is shutting down; reconnect with Last-Event-ID\n\n'
const EXPIRED = ': this stream has reached its time limit; reconnect with Last-Event-ID\n\n'

function frameText(frame: SseFrame): string {
  let text = ''
  if (frame.id !== undefined) text += `id: ${frame.id}\n`
  if (frame.event !== undefined) text += `event: ${frame.event}\n`
  for (const line of frame.data.split('\n')) text += `data: ${line}\n`
  return `${text}\n`
}

interface OpenStream {
  end(why: string): void
}

/**
 * The open Server-Sent Events streams of an app: writes them (headers at once, each event as it comes, keep-alive
 * comments between), disconnects a reader that falls more than its buffer behind (with a logged reason, so a slow
 * reader never grows the server's memory without bound), and ends them all cleanly when the node drains.
 */
export class EventStreams {
  readonly #logger: Logger
  readonly #open = new Set<OpenStream>()
  #draining = false

  constructor(logger: Logger) {
    this.#logger = logger
  }

  /** How many streams are open. */
  get open(): number {
    return this.#open.size
  }

  /** Ends every open stream (the end of its chunked body, after a comment saying why), and any opened later at once. */
  endAll(): void {
    this.#draining = true
    for (const stream of [...this.#open]) stream.end('draining')
  }

  /**
   * Writes `source` to `res` until its events end, the client goes away, the reader falls behind or the node
   * drains. Releases the write slot the admission counted (a stream is not a write in flight once it started).
   */
  write(res: Response, source: SseSource, operation: string): void {
    res.status(200)
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8')
    res.setHeader('Cache-Control', 'no-cache, no-transform')
    res.setHeader('X-Accel-Buffering', 'no')
    res.flushHeaders()
    ;(res.locals['releaseWrite'] as (() => void) | undefined)?.()
    const requestId = res.locals['requestId'] as string | undefined
    let closed = false
    let keepAlive: NodeJS.Timeout | undefined
    let limit: NodeJS.Timeout | undefined
    const stream: OpenStream = {
      end: (why) => {
        if (closed) return
        finish()
        if (why === 'draining') res.end(DRAINING)
        else if (why === 'expired') res.end(EXPIRED)
        else res.end()
      },
    }
    const finish = (): void => {
      closed = true
      clearInterval(keepAlive)
      clearTimeout(limit)
      this.#open.delete(stream)
      // A read in progress may still fail (the database closing at shutdown): nothing is left to tell.
      void Promise.resolve(source.events.return?.()).catch(() => undefined)
    }
    /** Writes `text`; false (the stream cut) when the reader has left more than the buffer unread. */
    const send = (text: string): boolean => {
      if (closed) return false
      res.write(text)
      const buffered = res.writableLength
      if (buffered <= source.maxBufferBytes) return true
      this.#logger.warn(
        { request_id: requestId, operation, buffered_bytes: buffered, max_buffer_bytes: source.maxBufferBytes, reason: 'slow_reader' },
        'event stream disconnected: the reader fell behind by more than its buffer',
      )
      finish()
      res.destroy()
      return false
    }
    res.once('close', () => {
      if (!closed) finish()
    })
    this.#open.add(stream)
    if (this.#draining) return stream.end('draining')
    if (source.keepAliveMs > 0) {
      keepAlive = setInterval(() => send(KEEP_ALIVE), source.keepAliveMs)
      keepAlive.unref()
    }
    if (source.maxDurationMs > 0) {
      limit = setTimeout(() => stream.end('expired'), source.maxDurationMs)
      limit.unref()
    }
    void (async () => {
      try {
        for (;;) {
          const next = await source.events.next()
          if (closed) return
          if (next.done === true) return stream.end('done')
          if (!send(frameText(next.value))) return
        }
      } catch (error) {
        if (closed) return
        this.#logger.error({ err: error, request_id: requestId, operation }, 'event stream failed')
        send(frameText(source.failure(error)))
        stream.end('failed')
      }
    })()
  }
}
