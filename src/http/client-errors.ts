import { STATUS_CODES, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { STATUS_OF } from './problem.js'

/**
 * Requests Node rejects before Express sees them (oversized headers, malformed request lines) still get the
 * contract's JSON error body instead of Node's bare status line.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy()
      return
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW'
    const status = STATUS_OF[tooLarge ? 'header_fields_too_large' : 'invalid_request']
    const body = JSON.stringify({ detail: tooLarge ? 'Request header fields too large' : 'Bad Request' })
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  })
}
