import { STATUS_CODES, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { ErrorCode } from '../errors.js'
import { STATUS_OF } from './problem.js'
import { endLingering } from './http-server.js'

/** Node's codes for the refusals that are not a plain 400. */
const CLIENT_ERROR_ANSWERS: Readonly<Record<string, readonly [ErrorCode, string]>> = {
  HPE_HEADER_OVERFLOW: ['header_fields_too_large', 'Request header fields too large'],
  // The header block (BERNSTEIN_HTTP_HEADERS_TIMEOUT_MS) or the whole request (BERNSTEIN_HTTP_REQUEST_TIMEOUT_MS) was too slow.
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'Request not received in time'],
}

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
    const [code, detail] = CLIENT_ERROR_ANSWERS[error.code ?? ''] ?? ['invalid_request', 'Bad Request']
    const status = STATUS_OF[code]
    const body = JSON.stringify({ detail })
    // As after an early answer: our FIN follows, then read and discard until the client closes (or LINGER_MS).
    endLingering(
      socket,
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  })
}
