import createClient, { type Client, type Middleware } from 'openapi-fetch'
import type { ClientPaths } from './a2a-types.js'
import { keepA2ATaskBodies } from './raw-body.js'

export interface ApiClientOptions {
  /** Server root, e.g. `http://127.0.0.1:8052`; add `/api/v1` to use the versioned prefix for every call. */
  readonly baseUrl: string
  /** Bearer token (the operator token or an agent token). */
  readonly token?: string
  /** Sent as `x-tenant-id` (honoured for the operator token; agent tokens are bound to their tenant). */
  readonly tenant?: string
  /** Injected `fetch` (defaults to the global one). */
  readonly fetch?: typeof globalThis.fetch
  readonly headers?: Readonly<Record<string, string>>
}

/** The typed client: every operation of openapi.yaml, A2A task responses narrowed ({@link ClientPaths}). */
export type ApiClient = Client<ClientPaths>

/**
 * A typed client for the bernstein-a2a API, generated from openapi.yaml (openapi-fetch). Every call resolves to
 * `{ data }` or `{ error }` typed per status; it throws only when the network fails. An A2A task response keeps
 * its exact bytes, so that `verifyTaskReceipt(await client.GET('/a2a/tasks/{a2a_task_id}', …))` can check its
 * receipt.
 *
 * @example
 * const client = createApiClient({ baseUrl: 'http://127.0.0.1:8052', token: process.env.BERNSTEIN_TOKEN })
 * const { data, error } = await client.POST('/a2a/tasks/send', { body: { sender: 'peer', message: 'Fix the flaky test' } })
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const client = createClient<ClientPaths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: { ...options.headers },
  })
  const auth: Middleware = {
    onRequest({ request }) {
      if (options.token !== undefined) request.headers.set('Authorization', `Bearer ${options.token}`)
      if (options.tenant !== undefined) request.headers.set('x-tenant-id', options.tenant)
      return request
    },
  }
  client.use(auth, keepA2ATaskBodies)
  return client
}
