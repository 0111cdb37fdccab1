import type { Server } from 'node:http'
import express from 'express'
import * as OpenApiValidator from 'express-openapi-validator'
import { afterEach } from 'vitest'

export interface PingOutcome {
  readonly status: number
  /** The message of the error the validator raised, if any. */
  readonly error: string | null
}

/**
 * GET /ping through express-openapi-validator on a given document, on a server of its own (closed after each test):
 * the status, and the error the validator raised while preparing the document, if any.
 */
export function validatorPingPerTest(): (document: object, validateApiSpec: boolean) => Promise<PingOutcome> {
  const servers: Server[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
  })
  return async (document, validateApiSpec) => {
    const app = express()
    let error: string | null = null
    app.use(OpenApiValidator.middleware({ apiSpec: document as never, validateApiSpec, validateRequests: true, validateResponses: false }))
    app.get('/ping', (_req, res) => void res.status(200).end())
    app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      error = err.message
      res.status(500).end()
    })
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s))
    })
    servers.push(server)
    const address = server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const response = await fetch(`http://127.0.0.1:${port}/ping`)
    return { status: response.status, error }
  }
}
