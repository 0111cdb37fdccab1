import type { RequestHandler } from 'express'
import { AppError } from '../errors.js'
import { LONE_SURROGATE_MESSAGE, findLoneSurrogate } from '../unicode.js'

/** Rejects a parsed JSON body that carries a lone surrogate: 422, before anything is validated or stored. */
export function rejectLoneSurrogates(): RequestHandler {
  return (req, _res, next) => {
    const at = req.body === undefined ? null : findLoneSurrogate(req.body)
    if (at) throw new AppError('validation_failed', LONE_SURROGATE_MESSAGE, { issues: [{ loc: ['body', ...at], msg: LONE_SURROGATE_MESSAGE, type: 'string_unicode' }] })
    next()
  }
}
