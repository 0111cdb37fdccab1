import { type Server, createServer } from 'node:http'
import { answerClientErrors } from './client-errors.js'

/**
 * The Node HTTP server the app is served on (attach it with `server.on('request', app.express)`): the node's
 * (src/server.ts) and the test servers' alike, so that what Node answers before Express is what the tests see.
 * Requests Node cannot parse at all never become requests: `answerClientErrors` answers them.
 */
export function createHttpServer(): Server {
  const server = createServer()
  answerClientErrors(server)
  return server
}
