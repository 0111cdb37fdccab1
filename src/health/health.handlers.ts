import { type RouteDefinition, route } from '../http/route.js'
import type { LoadedContract } from '../http/openapi-document.js'
import type { HealthService } from './health.service.js'

export function healthRoutes(health: HealthService, contract: LoadedContract): RouteDefinition[] {
  const ready = async () => {
    const r = await health.readiness()
    return r.ready
      ? { status: 200 as const, body: { status: 'ready' as const, reason: r.reason } }
      : { status: 503 as const, body: { status: 'not_ready' as const, reason: r.reason } }
  }
  return [
    route('getRoot', 'get', '/', async () => ({ status: 200, body: { name: 'Bernstein Task Server', status: 'running', docs: '/docs' } })),
    route('getHealth', 'get', '/health', async () => ({ status: 200, body: await health.report() })),
    route('getHealthReady', 'get', '/health/ready', ready),
    route('getReady', 'get', '/ready', ready),
    route('getHealthLive', 'get', '/health/live', async () => ({ status: 200, body: { status: 'alive' as const } })),
    route('getAlive', 'get', '/alive', async () => ({ status: 200, body: { status: 'alive' as const } })),
    route('getOpenApiJson', 'get', '/openapi.json', async () => ({ status: 200, raw: contract.jsonText, contentType: 'application/json' })),
    route('getOpenApiYaml', 'get', '/openapi.yaml', async () => ({ status: 200, raw: contract.yamlText, contentType: 'application/yaml' })),
  ]
}
