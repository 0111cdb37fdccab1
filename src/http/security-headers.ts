import type { ServerResponse } from 'node:http'
import type { RequestHandler } from 'express'
import helmet from 'helmet'
import { routeOf } from './operation-index.js'

/**
 * Helmet's defaults with one change for the reference page: no `upgrade-insecure-requests`, which would rewrite
 * the page's own http:// asset URLs to https:// on a plain-HTTP node. Scripts stay `'self'`; Swagger UI's inline
 * styles are already allowed by helmet's default `style-src 'self' https: 'unsafe-inline'`.
 */
const docsHelmet = helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } })
const apiHelmet = helmet()

type HeaderTarget = Pick<ServerResponse, 'setHeader' | 'removeHeader'>

/**
 * With these options helmet's headers never depend on the request (no per-request CSP directive), so each set is
 * recorded once and replayed: the same headers, without a dozen nested middleware calls on every request. The
 * recording request throws if helmet reads anything from it, so an option that would make the headers depend on
 * the request fails at start instead of being frozen.
 */
export function recordHeaders(middleware: RequestHandler): (res: HeaderTarget) => void {
  const set: [string, string | number | readonly string[]][] = []
  const removed: string[] = []
  const request = new Proxy(
    {},
    {
      get() {
        throw new Error('helmet read the request: its headers cannot be recorded once')
      },
    },
  )
  const recorder: HeaderTarget = {
    setHeader(name, value) {
      set.push([name, value])
      return this as never
    },
    removeHeader(name) {
      removed.push(name)
    },
  }
  let finished = false
  void middleware(request as never, recorder as never, (error?: unknown) => {
    if (error !== undefined) throw error
    finished = true
  })
  if (!finished) throw new Error('helmet did not finish synchronously: its headers cannot be recorded once')
  return (res) => {
    for (const name of removed) res.removeHeader(name)
    for (const [name, value] of set) res.setHeader(name, value)
  }
}

const apiHeaders = recordHeaders(apiHelmet)
const docsHeaders = recordHeaders(docsHelmet)

/** Security headers: helmet's defaults everywhere, the docs variant where the contract says so (`x-security-headers`). */
export function securityHeaders(): RequestHandler {
  return (_req, res, next) => {
    ;(routeOf(res).policy.headers === 'docs-page' ? docsHeaders : apiHeaders)(res)
    next()
  }
}
