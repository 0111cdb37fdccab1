/**
 * The typed client: every call is checked against openapi.yaml at compile time, and resolves to `{ data }` or
 * `{ error }` (an HTTP error status is data, never an exception).
 *
 *   npx tsx examples/typed-client.ts                                  # against npm start
 *   BERNSTEIN_URL=http://127.0.0.1:4010 npx tsx examples/typed-client.ts   # against the Prism mock (npm run mock)
 *
 * In your own project: import { createApiClient } from 'bernstein-a2a/client'
 */
import { createApiClient } from '../src/client/index.js'
import { baseUrl, token } from './env.js'

const client = createApiClient({ baseUrl, ...(token !== undefined && { token }) })

const created = await client.POST('/tasks', { body: { title: 'Add a health check', role: 'backend', priority: 1 } })
if (created.error) throw new Error(`create failed (${created.response.status}): ${JSON.stringify(created.error)}`)
console.log(`created task ${created.data.id}: ${created.data.status}, version ${created.data.version}`)

const page = await client.GET('/tasks', { params: { query: { status: 'open', limit: 5 } } })
console.log(`open tasks on the first page: ${page.data?.tasks.length ?? 0}`)

// The versioned prefix serves the same operations.
const v1 = createApiClient({ baseUrl: `${baseUrl}/api/v1`, ...(token !== undefined && { token }) })
const fetched = await v1.GET('/tasks/{task_id}', { params: { path: { task_id: created.data.id } } })
console.log(`read back through /api/v1: ${fetched.data?.title}`)

// Errors are data: a 404 is a value to branch on.
const missing = await client.GET('/tasks/{task_id}', { params: { path: { task_id: 'ffffffffffff' } } })
if (missing.error) console.log(`unknown task: ${missing.response.status} ${missing.error.detail}`)
