import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { openApiPath, loadContract, type OpenApiDocument } from '../../../src/http/openapi-document.js'
import { type AccessPolicy, ContractPolicyError, OperationIndex, type Permission } from '../../../src/http/operation-index.js'

/** Every operation of openapi.yaml, read with `yaml` from the file itself (not through the app's loader). */
const DOCUMENT = parse(readFileSync(openApiPath, 'utf8')) as OpenApiDocument
const OPERATIONS = Object.entries(DOCUMENT.paths).flatMap(([template, item]) =>
  Object.entries(item)
    .filter(([method]) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].includes(method))
    .map(([method, op]) => ({ method: method.toUpperCase(), template, operationId: String(op?.['operationId']) })),
)
const index = new OperationIndex(loadContract().document)
/** A concrete path for a template: each parameter filled with a plain value. */
const concrete = (template: string): string => template.replace(/\{[^}]+\}/g, 'v1')

/**
 * The access rules as they were written by hand before the contract carried them (src/http/auth.ts, authorize.ts,
 * network.ts, rate-limit.ts, security-headers.ts and app.ts before the operation index): the contract's
 * extensions must say exactly the same for every operation.
 */
const previousRules = {
  strip: (path: string): string => (path === '/api/v1' ? '/' : path.startsWith('/api/v1/') ? path.slice('/api/v1'.length) : path),
  isPublicPath(path: string): boolean {
    const p = previousRules.strip(path)
    return (
      // `/a2a/v0/proof` since issue 24: a peer's proof-of-possession challenge, answered before any token is sent.
      ['/', '/health/ready', '/health/live', '/ready', '/alive', '/docs', '/openapi.json', '/openapi.yaml', '/a2a/v0/proof'].includes(p) ||
      p.startsWith('/.well-known/') ||
      p.startsWith('/docs/')
    )
  },
  // The health summary is node-wide and read like the metrics since issue 26 (the probes stay public).
  isNodeWide: (p: string): boolean => p.startsWith('/lineage') || p.startsWith('/federation') || p === '/metrics' || p === '/health',
  // A2A v1.0 push notification configs carry the receiver's credentials: reading them is the operator's too.
  requiresOperator: (method: string, p: string): boolean =>
    previousRules.isNodeWide(p) ||
    (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS' && p.startsWith('/a2a/')) ||
    p.includes('/pushnotificationconfigs'),
  isHealthOrDiscovery(path: string): boolean {
    const p = previousRules.strip(path)
    return p.startsWith('/health/') || p === '/ready' || p === '/alive' || p.startsWith('/.well-known/')
  },
  isDocsPath: (path: string): boolean => path === '/docs' || path.startsWith('/docs/'),
  v0Paths: ['/a2a/v0/tasks', '/api/v1/a2a/v0/tasks'],
}

/** Who is refused, as the decisions the middleware takes: these, not the permission's name, must be unchanged. */
function refusals(policy: AccessPolicy): { anonymous: boolean; metrics: boolean; agent: boolean; boundOperator: boolean } {
  const refusedBy = (allowed: readonly Permission[]): boolean => !policy.public && !allowed.includes(policy.permission)
  return {
    anonymous: !policy.public,
    metrics: refusedBy(['metrics-reader']),
    agent: refusedBy(['any']),
    boundOperator: refusedBy(['any', 'operator']),
  }
}

describe('the operation index of openapi.yaml', () => {
  it('holds every operation of the document, once', () => {
    expect(OPERATIONS.length).toBeGreaterThanOrEqual(60)
    expect(index.operations.map((o) => `${o.method} ${o.template} ${o.operationId}`).sort()).toEqual(
      OPERATIONS.map((o) => `${o.method} ${o.template} ${o.operationId}`).sort(),
    )
  })

  it.each(OPERATIONS.map((o) => [`${o.method} ${o.template}`, o] as const))('resolves %s to its operation', (_name, { method, template, operationId }) => {
    const matched = index.match(method, concrete(template))
    expect(matched.operation?.operationId).toBe(operationId)
    expect(matched.path?.template).toBe(template)
    expect(matched.policy).toBe(matched.operation)
    expect(matched.params).toEqual(Object.fromEntries([...template.matchAll(/\{([^}]+)\}/g)].map((m) => [m[1], 'v1'])))
    const statuses = Object.keys((DOCUMENT.paths[template]?.[method.toLowerCase()]?.['responses'] ?? {}) as object).map(Number)
    expect([...(matched.operation?.statuses ?? [])].sort()).toEqual(statuses.sort())
  })

  it.each(OPERATIONS.map((o) => [`${o.method} ${o.template}`, o] as const))(
    'declares for %s the policy the hand-written rules applied',
    (_name, { method, template }) => {
      const { policy } = index.match(method, concrete(template))
      const p = previousRules.strip(template.toLowerCase())
      const open = previousRules.isPublicPath(template)
      expect({
        public: policy.public,
        refusals: refusals(policy),
        allowlistExempt: policy.allowlistExempt,
        rateLimitBucket: policy.rateLimitBucket,
        body: policy.body,
        headers: policy.headers,
      }).toEqual({
        public: open,
        refusals: {
          anonymous: !open,
          metrics: !open && !(['/metrics', '/health'].includes(p) && method === 'GET'),
          agent: !open && previousRules.requiresOperator(method, p),
          boundOperator: !open && previousRules.isNodeWide(p),
        },
        allowlistExempt: previousRules.isHealthOrDiscovery(template),
        rateLimitBucket: previousRules.isHealthOrDiscovery(template)
          ? null
          : ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)
            ? 'default_write'
            : 'default_read',
        body: method !== 'POST' ? 'none' : previousRules.v0Paths.includes(template) ? 'raw' : 'json',
        headers: previousRules.isDocsPath(template) ? 'docs-page' : 'api',
      })
    },
  )
})

/** The operations whose policy has `flag` set, by operationId. */
const operationsWith = (flag: 'waits' | 'noDeadline'): string[] =>
  index.operations
    .filter((o) => o[flag])
    .map((o) => o.operationId)
    .sort()

it('marks as waiting by design (x-waits) exactly the blocking SendMessage operations', () => {
  expect(operationsWith('waits')).toEqual(['a2aV1JsonRpc', 'a2aV1JsonRpcSlash', 'a2aV1SendMessage', 'a2aV1SendMessageForTenant'])
})

it('exempts from the request deadline (x-no-deadline) exactly the chain verifications, whose work grows with the chain', () => {
  expect(operationsWith('noDeadline')).toEqual(['verifyTrackerAudit', 'verifyTrackerAuditApiV1'])
})

describe('matching a request', () => {
  it.each([
    // [name, { given: [method, path], want }]
    ['a literal path wins over a parameter', { given: ['GET', '/tasks/next/backend'], want: { path: '/tasks/next/{role}', operation: 'claimNextTask' } }],
    ['a parameter where no literal matches', { given: ['GET', '/tasks/next'], want: { path: '/tasks/{task_id}', operation: 'getTask' } }],
    ['the most specific path decides, then the method (405)', { given: ['GET', '/a2a/tasks/send'], want: { path: '/a2a/tasks/send', operation: null } }],
    ['HEAD is answered as GET', { given: ['HEAD', '/tasks'], want: { path: '/tasks', operation: 'listTasks' } }],
    ['a method the path does not have', { given: ['PUT', '/tasks'], want: { path: '/tasks', operation: null } }],
    ['the /api/v1 mirror', { given: ['POST', '/api/v1/tasks/t1/claim'], want: { path: '/api/v1/tasks/{task_id}/claim', operation: 'claimTaskApiV1' } }],
    [
      'an A2A v1.0 tenant twin and its root do not shadow each other',
      {
        given: ['GET', '/a2a/v1/acme/tasks/t1/pushNotificationConfigs'],
        want: { path: '/a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}/pushNotificationConfigs', operation: 'a2aV1ListTaskPushNotificationConfigsForTenant' },
      },
    ],
    [
      'the root of a tenant twin',
      {
        given: ['DELETE', '/a2a/v1/tasks/t1/pushNotificationConfigs/c1'],
        want: { path: '/a2a/v1/tasks/{a2a_task_id}/pushNotificationConfigs/{config_id}', operation: 'a2aV1DeleteTaskPushNotificationConfig' },
      },
    ],
    [
      'a tenant twin with an action after the task id',
      {
        given: ['GET', '/a2a/v1/acme/tasks/t1:subscribe'],
        want: { path: '/a2a/v1/{a2a_tenant}/tasks/{a2a_task_id}:subscribe', operation: 'a2aV1SubscribeToTaskGetForTenant' },
      },
    ],
    ['case matters', { given: ['GET', '/TASKS'], want: { path: null, operation: null } }],
    ['no trailing slash', { given: ['GET', '/tasks/'], want: { path: null, operation: null } }],
    ['no prefix without a path', { given: ['GET', '/api/v1'], want: { path: null, operation: null } }],
    ['an unknown path', { given: ['GET', '/nope'], want: { path: null, operation: null } }],
  ] as const)('%s', (_name, { given: [method, path], want }) => {
    const matched = index.match(method, path)
    expect({ path: matched.path?.template ?? null, operation: matched.operation?.operationId ?? null }).toEqual(want)
  })

  it('decodes parameters, and names the one that does not decode', () => {
    expect(index.match('GET', '/a2a/tasks/abc%20d%C3%A9f')).toMatchObject({ params: { a2a_task_id: 'abc déf' }, undecodableParameter: null })
    expect(index.match('GET', '/tasks/next/%E2%82')).toMatchObject({ params: {}, undecodableParameter: 'role' })
    expect(index.match('POST', '/tasks/%FF/claim')).toMatchObject({ operation: { operationId: 'claimTask' }, undecodableParameter: 'task_id' })
  })

  it('lists the methods of a path for a 405', () => {
    expect(index.match('PUT', '/tasks').path?.methods).toEqual(['GET', 'POST'])
    expect(index.match('PUT', '/a2a/tasks/send').path?.methods).toEqual(['POST'])
  })
})

describe('requests the contract has no operation for', () => {
  const closed = (bucket: 'default_read' | 'default_write', body: 'json' | 'none'): AccessPolicy => ({
    public: false,
    permission: 'node-operator',
    rateLimitBucket: bucket,
    allowlistExempt: false,
    body,
    headers: 'api',
    errorFormat: 'detail',
    waits: false,
    noDeadline: false,
  })
  it.each([
    // Fail-closed: a token not bound to a tenant, the bucket of the method, no allowlist exemption.
    ['an unknown path', { given: ['GET', '/nope'], want: closed('default_read', 'none') }],
    ['an unknown path, written to', { given: ['POST', '/nope'], want: closed('default_write', 'json') }],
    ['a case variant of an operator-only path', { given: ['POST', '/A2A/tasks/send'], want: closed('default_write', 'json') }],
    ['an undocumented method of a protected path', { given: ['PUT', '/tasks'], want: closed('default_write', 'none') }],
    ['a HEAD without a GET', { given: ['HEAD', '/a2a/tasks/send'], want: closed('default_read', 'none') }],
    ['an undocumented method of /metrics', { given: ['POST', '/metrics'], want: closed('default_write', 'json') }],
    // A path whose operations are all public, exempt or unlimited stays so for its 405.
    [
      'an undocumented method of a health probe',
      { given: ['CONNECT', '/health/live'], want: { ...closed('default_read', 'none'), public: true, allowlistExempt: true, rateLimitBucket: null } },
    ],
    ['an undocumented method of a public page', { given: ['POST', '/openapi.json'], want: { ...closed('default_write', 'json'), public: true } }],
    [
      'an undocumented method of the reference page',
      { given: ['POST', '/docs'], want: { ...closed('default_write', 'json'), public: true, headers: 'docs-page' } },
    ],
    // The two prefixes that are not operations of the contract.
    [
      'a static file of the reference page',
      { given: ['GET', '/docs/assets/swagger-ui.css'], want: { ...closed('default_read', 'none'), public: true, headers: 'docs-page' } },
    ],
    [
      'an absent discovery document',
      {
        given: ['GET', '/.well-known/no-such-document'],
        want: { ...closed('default_read', 'none'), public: true, allowlistExempt: true, rateLimitBucket: null },
      },
    ],
  ] as const)('%s', (_name, { given: [method, path], want }) => {
    const matched = index.match(method, path)
    expect(matched.operation).toBeNull()
    expect({ ...matched.policy }).toEqual(want)
  })

  it('HEAD /metrics is read as GET /metrics (the metrics token may, then the validator answers 405)', () => {
    expect(index.match('HEAD', '/metrics').policy.permission).toBe('metrics-reader')
  })
})

/** A one-operation document, the operation changed by `edit`. */
function documentWith(edit: (op: Record<string, unknown>, document: Record<string, unknown>) => void, method = 'post'): OpenApiDocument {
  const op: Record<string, unknown> = {
    operationId: 'doThing',
    'x-permission': 'any',
    'x-rate-limit-bucket': 'default_write',
    responses: { '200': { description: 'ok' } },
  }
  if (method === 'post') op['x-body'] = 'json'
  const document: Record<string, unknown> = {
    openapi: '3.2.0',
    info: { title: 't', version: '1' },
    security: [{ bearer: [] }],
    paths: { '/things': { [method]: op } },
  }
  edit(op, document)
  return document as OpenApiDocument
}

describe('a contract that does not say what the server needs fails the build', () => {
  it('builds on a complete operation', () => {
    expect(new OperationIndex(documentWith(() => {})).operation('doThing')).toMatchObject({
      permission: 'any',
      rateLimitBucket: 'default_write',
      body: 'json',
      allowlistExempt: false,
      headers: 'api',
      waits: false,
    })
  })

  it('reads x-waits: an operation that waits by design', () => {
    expect(new OperationIndex(documentWith((op) => (op['x-waits'] = true))).operation('doThing')).toMatchObject({ waits: true })
    expect(new OperationIndex(documentWith((op) => (op['x-waits'] = false))).operation('doThing')).toMatchObject({ waits: false })
  })

  it.each([
    [
      'x-permission missing on a protected operation',
      {
        given: documentWith((op) => delete op['x-permission']),
        want: /POST \/things \(doThing\): x-permission must be one of any, operator, node-operator, metrics-reader \(got undefined\)/,
      },
    ],
    [
      'x-permission with an unknown value',
      { given: documentWith((op) => (op['x-permission'] = 'admin')), want: /x-permission must be one of .* \(got "admin"\)/ },
    ],
    ['x-permission on a public operation', { given: documentWith((op) => (op['security'] = [])), want: /x-permission on a public operation/ }],
    [
      'x-rate-limit-bucket missing',
      {
        given: documentWith((op) => delete op['x-rate-limit-bucket']),
        want: /x-rate-limit-bucket must be one of default_read, default_write, none \(got undefined\)/,
      },
    ],
    [
      'x-rate-limit-bucket unknown',
      { given: documentWith((op) => (op['x-rate-limit-bucket'] = 'burst')), want: /x-rate-limit-bucket must be one of .* \(got "burst"\)/ },
    ],
    [
      'x-allowlist-exempt not a boolean',
      { given: documentWith((op) => (op['x-allowlist-exempt'] = 'yes')), want: /x-allowlist-exempt must be true or false \(got "yes"\)/ },
    ],
    ['x-body missing on a POST', { given: documentWith((op) => delete op['x-body']), want: /x-body must be one of json, raw, none \(got undefined\)/ }],
    ['x-body unknown', { given: documentWith((op) => (op['x-body'] = 'form')), want: /x-body must be one of json, raw, none \(got "form"\)/ }],
    [
      'x-body on a GET',
      { given: documentWith((op) => (op['x-body'] = 'json'), 'get'), want: /GET \/things \(doThing\): x-body on a GET, whose body is never read/ },
    ],
    [
      'x-security-headers unknown',
      { given: documentWith((op) => (op['x-security-headers'] = 'none')), want: /x-security-headers must be one of api, docs-page/ },
    ],
    ['x-waits not a boolean', { given: documentWith((op) => (op['x-waits'] = 'yes')), want: /x-waits must be true or false \(got "yes"\)/ }],
    ['a misspelt extension', { given: documentWith((op) => (op['x-permision'] = 'any')), want: /unknown extension x-permision/ }],
    ['no operationId', { given: documentWith((op) => delete op['operationId']), want: /POST \/things: no operationId/ }],
    ['no top-level security', { given: documentWith((_op, document) => delete document['security']), want: /no top-level security requirement/ }],
  ] as const)('%s', (_name, { given, want }) => {
    expect(() => new OperationIndex(given)).toThrow(ContractPolicyError)
    expect(() => new OperationIndex(given)).toThrow(want)
  })

  it('lists every problem at once', () => {
    const given = documentWith((op) => {
      delete op['x-permission']
      delete op['x-body']
    })
    expect(() => new OperationIndex(given)).toThrow(
      expect.objectContaining({ problems: [expect.stringMatching(/x-permission/), expect.stringMatching(/x-body/)] }),
    )
  })

  it('refuses an operationId used twice', () => {
    const given = documentWith((_op, document) => {
      ;(document['paths'] as Record<string, unknown>)['/other'] = {
        get: { operationId: 'doThing', 'x-permission': 'any', 'x-rate-limit-bucket': 'default_read', responses: {} },
      }
    })
    expect(() => new OperationIndex(given)).toThrow(/operationId doThing is used twice/)
  })
})
