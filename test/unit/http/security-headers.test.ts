import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import helmet from 'helmet'
import { describe, expect, it } from 'vitest'
import { recordHeaders } from '../../../src/http/security-headers.js'

function response(): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket())
  req.method = 'GET'
  req.url = '/a2a/tasks/x'
  const res = new ServerResponse(req)
  res.setHeader('X-Powered-By', 'Express')
  return { req, res }
}

describe('recordHeaders', () => {
  it.each([
    ['defaults', helmet()],
    ['docs variant', helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } })],
    ['non-default options', helmet({ strictTransportSecurity: { maxAge: 60, preload: true }, referrerPolicy: { policy: 'origin' } })],
  ])('replays exactly the headers helmet sets itself (%s)', (_name, middleware) => {
    const live = response()
    let called = false
    void middleware(live.req, live.res, () => {
      called = true
    })
    expect(called).toBe(true)
    const replayed = response()
    recordHeaders(middleware)(replayed.res)
    expect(replayed.res.getHeaders()).toEqual(live.res.getHeaders())
    expect(replayed.res.getHeader('x-powered-by')).toBeUndefined()
    expect(Object.keys(replayed.res.getHeaders()).length).toBeGreaterThan(10)
  })

  it('refuses helmet options whose headers depend on the request', () => {
    const perRequest = helmet({ contentSecurityPolicy: { directives: { scriptSrc: ["'self'", (req) => `'nonce-${String((req as IncomingMessage).url)}'`] } } })
    expect(() => recordHeaders(perRequest)).toThrow(/cannot be recorded once/)
  })
})
