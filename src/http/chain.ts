import type { NextFunction, RequestHandler } from 'express'

/**
 * Runs `handlers` in order as one middleware, each handed the next as Express 5 would: a handler that throws, or
 * returns a promise that rejects, passes its error on (a rejection with no reason as Express's own
 * `Rejected promise`), and `next(error)` skips the rest of the chain straight to the app's error handlers. What it
 * saves is the router's work between them (its matching of each layer's path, its parameter processing, its
 * bookkeeping of `req.url`), which for some twenty `app.use` layers cost more per request than most of the
 * middleware themselves. Only for middleware mounted at `/` that call `next()` or `next(error)` (never `'route'`
 * or `'router'`), which is all of the app's own.
 */
export function chain(handlers: readonly RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    const step = (i: number): NextFunction =>
      ((error?: unknown) => {
        if (error !== undefined && error !== null) return done(error)
        const handler = handlers[i]
        if (handler === undefined) return done()
        try {
          const returned: unknown = handler(req, res, step(i + 1))
          if (isThenable(returned)) returned.then(undefined, (reason: unknown) => done(reason || new Error('Rejected promise')))
        } catch (thrown) {
          done(thrown)
        }
      }) as NextFunction
    step(0)()
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}
