import type { RequestHandler } from 'express'

/**
 * Signs the answer to a request (RFC 9421): given the request's method and fields, the answer's status and exact
 * body bytes, the fields to add. It throws when it cannot (the answer then goes out unsigned, and a peer that
 * demands a signature refuses it).
 */
export interface AnswerSigner {
  /** Whether this request asks for a signed answer (it carries a signature of ours to bind the answer to). */
  wants(headers: Readonly<Record<string, string | string[] | undefined>>): boolean
  /** `origin` is `scheme://host` as the request was addressed, `path` its path and query. */
  sign(
    request: { method: string; origin: string; path: string; headers: Record<string, string> },
    status: number,
    body: Buffer,
  ): Promise<Record<string, string>>
}

type End = (chunk?: unknown, encoding?: unknown, callback?: unknown) => unknown

/**
 * Signs every answer to a request that asks for one, whatever produced it (a handler, the error renderer, the
 * authentication or rate-limit refusals): the answer's last write, `res.end(body)`, waits for the signature fields
 * to be set first. An answer written in pieces (`res.write`) is sent unsigned.
 */
export function signedAnswers(signer: AnswerSigner): RequestHandler {
  return (req, res, next) => {
    if (!signer.wants(req.headers)) return next()
    const end = res.end.bind(res) as End
    const write = res.write.bind(res) as (...args: unknown[]) => boolean
    let streamed = false
    res.write = ((...args: unknown[]) => {
      streamed = true
      return write(...args)
    }) as typeof res.write
    res.end = ((chunk?: unknown, encoding?: unknown, callback?: unknown) => {
      if (streamed || res.headersSent) return end(chunk, encoding, callback)
      const body =
        chunk === undefined || chunk === null || typeof chunk === 'function'
          ? Buffer.alloc(0)
          : typeof chunk === 'string'
            ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
            : Buffer.from(chunk as Uint8Array)
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
      signer
        .sign(
          { method: req.method, origin: `${req.protocol}://${req.get('host') ?? ''}`, path: req.originalUrl, headers },
          res.statusCode,
          req.method === 'HEAD' ? Buffer.alloc(0) : body,
        )
        .then(
          (fields) => {
            if (!res.headersSent) for (const [name, value] of Object.entries(fields)) res.setHeader(name, value)
          },
          () => undefined,
        )
        .finally(() => end(chunk, encoding, callback))
      return res
    }) as typeof res.end
    next()
  }
}
