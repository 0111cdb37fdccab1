/**
 * Prometheus metrics: `GET /metrics` with the operator token or BERNSTEIN_METRICS_TOKEN (which reads nothing
 * else). Prints the bernstein_* series a dashboard would start with.
 *
 *   npx tsx examples/metrics.ts
 *   BERNSTEIN_TOKEN=$BERNSTEIN_METRICS_TOKEN npx tsx examples/metrics.ts
 */
import { baseUrl, token } from './env.js'

const res = await fetch(`${baseUrl}/metrics`, { headers: token !== undefined ? { Authorization: `Bearer ${token}` } : {} })
if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`)
const interesting = /^bernstein_(tasks|chain_length|signatures_made_total|signatures_verified_total|http_requests_total)\{/
for (const line of (await res.text()).split('\n')) if (interesting.test(line)) console.log(line)
