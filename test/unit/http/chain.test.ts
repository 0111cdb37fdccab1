import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { describe, expect, it } from 'vitest'
import { chain } from '../../../src/http/chain.js'

/** Runs `handler` on a plain request and response; resolves with what it passed to the app's next, once it did. */
function run(handler: RequestHandler): Promise<{ error: unknown; calls: number }> {
  return new Promise((resolve) => {
    let calls = 0
    const next = ((error?: unknown) => {
      calls++
      setImmediate(() => resolve({ error, calls }))
    }) as NextFunction
    handler({} as Request, {} as Response, next)
  })
}

describe('chain: middleware run in order as one, with Express 5 semantics', () => {
  it('runs every handler in order, then the next layer once', async () => {
    const seen: string[] = []
    const step =
      (name: string): RequestHandler =>
      (_req, _res, next) => {
        seen.push(name)
        next()
      }
    const outcome = await run(chain([step('a'), step('b'), step('c')]))
    expect(seen).toEqual(['a', 'b', 'c'])
    expect(outcome).toEqual({ error: undefined, calls: 1 })
  })

  it('lets an async handler continue the chain later, and an empty chain is the next layer at once', async () => {
    const seen: string[] = []
    const handlers: RequestHandler[] = [
      async (_req, _res, next) => {
        await new Promise((resolve) => setImmediate(resolve))
        seen.push('async')
        next()
      },
      (_req, _res, next) => {
        seen.push('sync')
        next()
      },
    ]
    expect(await run(chain(handlers))).toEqual({ error: undefined, calls: 1 })
    expect(seen).toEqual(['async', 'sync'])
    expect(await run(chain([]))).toEqual({ error: undefined, calls: 1 })
  })

  it('next(error) skips the rest of the chain and hands the error on', async () => {
    const boom = new Error('refused')
    let reached = false
    const outcome = await run(
      chain([
        (_req, _res, next) => next(boom),
        () => {
          reached = true
        },
      ]),
    )
    expect(outcome).toEqual({ error: boom, calls: 1 })
    expect(reached).toBe(false)
  })

  it('a thrown error and a rejected promise are handed on as errors, a rejection without reason as Express names it', async () => {
    const thrown = new Error('thrown')
    expect(
      (
        await run(
          chain([
            () => {
              throw thrown
            },
          ]),
        )
      ).error,
    ).toBe(thrown)
    const rejected = new Error('rejected')
    expect(
      (
        await run(
          chain([
            async () => {
              throw rejected
            },
          ]),
        )
      ).error,
    ).toBe(rejected)
    const outcome = await run(chain([() => Promise.reject(undefined)]))
    expect(outcome.error).toBeInstanceOf(Error)
    expect((outcome.error as Error).message).toBe('Rejected promise')
  })

  it('next(null) continues like next(): Express treats a null error as none', async () => {
    let reached = false
    const outcome = await run(
      chain([
        (_req, _res, next) => next(null),
        (_req, _res, next) => {
          reached = true
          next()
        },
      ]),
    )
    expect(reached).toBe(true)
    expect(outcome).toEqual({ error: undefined, calls: 1 })
  })
})
