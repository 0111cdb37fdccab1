/** The official `@a2a-js/sdk` client pointed at a test node, over one of its two bindings. */
import { ClientFactory, type Client, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client'
import { OPERATOR_TOKEN, type TestApp, rawRequest } from './test-app.js'

export const BINDINGS = ['JSONRPC', 'HTTP+JSON'] as const
export type Binding = (typeof BINDINGS)[number]

/** A fetch that authenticates as `token` (and scopes to `tenant`), as a deployment's client would. */
function authenticatedFetch(token: string, tenant?: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('authorization', `Bearer ${token}`)
    if (tenant !== undefined) headers.set('x-tenant-id', tenant)
    return fetch(input, { ...init, headers })
  }
}

/**
 * A client of the node's card over one binding. The card names the node by its public URL (`http://bernstein.test`
 * in tests), so the interfaces are pointed at the loopback address the test node listens on.
 */
export async function clientFor(app: TestApp, binding: Binding, token = OPERATOR_TOKEN, tenant?: string): Promise<Client> {
  const card = (await rawRequest(app.url, { method: 'GET', path: '/.well-known/agent-card.json', token: null })).json as {
    supportedInterfaces: { url: string; protocolBinding: string }[]
  }
  const local = {
    ...card,
    supportedInterfaces: card.supportedInterfaces
      .filter((i) => i.protocolBinding === binding)
      .map((i) => ({ ...i, url: i.url.replace('http://bernstein.test', app.url) })),
  }
  const fetchImpl = authenticatedFetch(token, tenant)
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
  })
  return factory.createFromAgentCard(local as never)
}
