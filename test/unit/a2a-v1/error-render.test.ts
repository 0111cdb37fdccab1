/**
 * Every error of the one table renders in both A2A v1.0 dialects as what it is: never as the INTERNAL a missing
 * mapping fell back to (a HEAD on a GET path, an unknown path and a full disk were answered 500 that way).
 */
import { describe, expect, it } from 'vitest'
import { renderA2AError } from '../../../src/a2a-v1/a2a-v1-error-render.js'
import { AppError, type ErrorCode } from '../../../src/errors.js'
import { STATUS_OF } from '../../../src/http/problem.js'

const CODES = Object.keys(STATUS_OF) as ErrorCode[]
const REQUEST = { body: { jsonrpc: '2.0', id: 7, method: 'GetTask', params: {} }, accept: undefined }

describe('A2A v1.0 error rendering', () => {
  it.each(CODES.filter((code) => code !== 'internal'))('%s: never INTERNAL, in HTTP+JSON and in JSON-RPC', (code) => {
    const known = new AppError(code, `refused: ${code}`, { headers: { 'Retry-After': '5' } })
    const rest = renderA2AError('a2a-rest', known, known, REQUEST)
    const body = rest.body as { error: { code: number; status: string; message: string } }
    expect(rest.unexpected).toBe(false)
    expect(rest.status).not.toBe(500)
    expect(body.error.status).not.toBe('INTERNAL')
    expect(body.error.code).toBe(rest.status)
    expect(body.error.message).not.toBe('Internal error')
    // The node's own headers (Allow, Retry-After) travel with the answer.
    expect(rest.headers['Retry-After']).toBe('5')

    const rpc = renderA2AError('a2a-jsonrpc', known, known, REQUEST)
    const envelope = rpc.body as { id: unknown; error: { code: number; message: string } }
    expect(rpc.unexpected).toBe(false)
    expect(rpc.status).not.toBe(500)
    expect(envelope.error.message).not.toBe('Internal error')
    expect(envelope.id).toBe(7)
  })

  it("keeps the table's HTTP status for the refusals the protocol has no error for", () => {
    for (const code of ['method_not_allowed', 'not_found', 'storage_unavailable', 'unavailable', 'rate_limited', 'expectation_failed'] as const) {
      const known = new AppError(code, 'x')
      expect(renderA2AError('a2a-rest', known, known, REQUEST).status, code).toBe(STATUS_OF[code])
    }
    const full = new AppError('storage_unavailable', 'Storage unavailable (disk full): nothing was written, retry later')
    expect(renderA2AError('a2a-rest', full, full, REQUEST).body).toMatchObject({
      error: { code: 503, status: 'UNAVAILABLE', message: 'Storage unavailable (disk full): nothing was written, retry later' },
    })
    expect(renderA2AError('a2a-jsonrpc', full, full, REQUEST)).toMatchObject({ status: 503, body: { error: { code: -32000 } } })
  })

  it('answers the unexpected as INTERNAL without its text', () => {
    const rendered = renderA2AError('a2a-rest', new Error('secret detail'), null, REQUEST)
    expect(rendered).toMatchObject({ status: 500, unexpected: true, body: { error: { status: 'INTERNAL', message: 'Internal error' } } })
  })
})
