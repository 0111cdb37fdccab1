/**
 * A Server-Sent Events client for tests: opens a stream with fetch (its own connection) and hands out its events
 * one at a time, parsed as the SSE format says (`id:`, `event:`, `data:` lines, comments counted apart).
 */
import { fetchOnce } from './raw-http.js'

export interface SseEvent {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: string
}

export interface SseStream {
  readonly status: number
  readonly headers: Headers
  /** The body, when the answer is not an event stream (an error). */
  readonly text: string | undefined
  /** The next event; null once the stream has ended. Waits at most `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseEvent | null>
  /** Every event until the end of the stream. */
  rest(timeoutMs?: number): Promise<SseEvent[]>
  /** Comment lines received so far (keep-alives and the like). */
  readonly comments: string[]
  /** Reads until `count` comments have come (events meanwhile are kept for `next`). */
  untilComments(count: number, timeoutMs?: number): Promise<void>
  /** Drops the connection. */
  close(): void
}

export async function openSse(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; token?: string | null },
): Promise<SseStream> {
  const controller = new AbortController()
  const headers: Record<string, string> = { accept: 'text/event-stream', 'a2a-version': '1.0', ...init.headers }
  if (init.token !== null && init.token !== undefined) headers['authorization'] = `Bearer ${init.token}`
  if (init.body !== undefined) headers['content-type'] ??= 'application/json'
  const res = await fetchOnce(url, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    signal: controller.signal,
  })
  const comments: string[] = []
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const text = await res.text()
    return {
      status: res.status,
      headers: res.headers,
      text,
      next: async () => null,
      rest: async () => [],
      comments,
      untilComments: async () => {},
      close: () => controller.abort(),
    }
  }
  const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  let ended = false
  const queued: SseEvent[] = []
  // One read at a time, kept across waits that time out, so that no chunk is lost.
  let pending: ReturnType<typeof reader.read> | null = null
  const parse = (): void => {
    for (;;) {
      const end = buffer.indexOf('\n\n')
      if (end < 0) return
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      let id: string | undefined
      let event: string | undefined
      const data: string[] = []
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim())
        else if (line.startsWith('id: ')) id = line.slice(4)
        else if (line.startsWith('event: ')) event = line.slice(7)
        else if (line.startsWith('data: ')) data.push(line.slice(6))
      }
      if (data.length > 0) queued.push({ id, event, data: data.join('\n') })
    }
  }
  /** Reads until `enough()` or the end of the stream; throws after `timeoutMs`. */
  const readUntil = async (enough: () => boolean, timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs
    while (!enough() && !ended) {
      const remaining = deadline - Date.now()
      if (remaining <= 0) throw new Error(`the stream did not deliver within ${timeoutMs} ms`)
      let timer: NodeJS.Timeout | undefined
      pending ??= reader.read()
      const read = await Promise.race([
        pending,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), remaining)
        }),
      ]).finally(() => clearTimeout(timer))
      if (read === 'timeout') continue
      pending = null
      if (read.done) ended = true
      else {
        buffer += read.value
        parse()
      }
    }
  }
  const next = async (timeoutMs = 60_000): Promise<SseEvent | null> => {
    await readUntil(() => queued.length > 0, timeoutMs)
    return queued.shift() ?? null
  }
  return {
    status: res.status,
    headers: res.headers,
    text: undefined,
    next,
    async rest(timeoutMs = 60_000) {
      const all: SseEvent[] = []
      for (let e = await next(timeoutMs); e !== null; e = await next(timeoutMs)) all.push(e)
      return all
    },
    comments,
    async untilComments(count, timeoutMs = 60_000) {
      await readUntil(() => comments.length >= count, timeoutMs)
    },
    close: () => controller.abort(),
  }
}
