import type { Server } from 'node:http'
import type { Duplex } from 'node:stream'

/**
 * Requests Node rejects before Express sees them (oversized headers, malformed request lines) still get the
 * contract's JSON error body instead of Node's bare status line.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (error.code === 'ECONNRESET')) {
      socket.destroy()
      return
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW'
    const status = tooLarge ? 431 : 400
    const body = JSON.stringify({ detail: tooLarge ? 'Request header fields too large' : 'Bad Request' })
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  })
}
