/**
 * Structured logs: every response carries `X-Request-Id` (yours when well formed, else a generated UUID), and the
 * server writes one JSON line per request with the same id, the OpenAPI path template, operationId, status,
 * latency and tenant. Send an id, then look for it in the server's output:
 *
 *   npx tsx examples/request-id.ts
 *   # server: {"level":30,…,"request_id":"example-…","route":"/tasks/{task_id}","operation_id":"getTask","status":404,…}
 */
import { createApiClient } from '../src/client/index.js'
import { baseUrl, token } from './env.js'

const requestId = `example-${Date.now()}`
const client = createApiClient({ baseUrl, ...(token !== undefined && { token }), headers: { 'X-Request-Id': requestId } })
const { response } = await client.GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } })
console.log(`status ${response.status}, X-Request-Id ${response.headers.get('x-request-id')} (sent ${requestId})`)

const anonymous = await fetch(`${baseUrl}/health`)
console.log(`without one, the server made one up: ${anonymous.headers.get('x-request-id')}`)
