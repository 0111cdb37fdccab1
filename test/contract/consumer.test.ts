import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiClient, createApiClient } from '../../src/client/index.js'
import { contractSchemas, violations } from '../helpers/contract-schemas.js'
import { type RunningPrism, startPrism } from '../helpers/prism.js'
import { OPERATOR_TOKEN, type TestApp, startTestApp } from '../helpers/test-app.js'

interface Step {
  readonly step: string
  readonly status: number
  readonly schema: string
  readonly data: unknown
}

/**
 * One consumer's journey through the typed client: send a task, read it back, attach an artifact, list tasks,
 * check health, fetch the capability card, and get refused for a bad body. Whatever serves it (the Prism mock of
 * openapi.yaml or the real server) must answer with the documented statuses and shapes.
 */
async function journey(client: ApiClient, anonymous: ApiClient): Promise<Step[]> {
  const steps: Step[] = []
  const sent = await client.POST('/a2a/tasks/send', { body: { sender: 'peer-agent@globex', message: 'Fix the flaky login test', role: 'backend' } })
  steps.push({ step: 'send', status: sent.response.status, schema: 'A2ATaskResponse', data: sent.data })
  const id = sent.data?.id ?? 'missing'
  const got = await client.GET('/a2a/tasks/{a2a_task_id}', { params: { path: { a2a_task_id: id } } })
  steps.push({ step: 'get', status: got.response.status, schema: 'A2ATaskResponse', data: got.data })
  const artifact = await client.POST('/a2a/tasks/{a2a_task_id}/artifacts', {
    params: { path: { a2a_task_id: id } },
    body: { name: 'patch.diff', data: '--- a\n+++ b\n', content_type: 'text/x-diff' },
  })
  steps.push({ step: 'artifact', status: artifact.response.status, schema: 'A2AArtifactResponse', data: artifact.data })
  const list = await client.GET('/tasks', { params: { query: { limit: 10 } } })
  steps.push({ step: 'list', status: list.response.status, schema: 'TaskPage', data: list.data })
  const health = await client.GET('/health')
  steps.push({ step: 'health', status: health.response.status, schema: 'HealthResponse', data: health.data })
  const card = await anonymous.GET('/.well-known/a2a-capability-card.json')
  steps.push({ step: 'card', status: card.response.status, schema: 'SignedCapabilityCard', data: card.data })
  const refused = await anonymous.GET('/tasks')
  steps.push({ step: 'no token', status: refused.response.status, schema: 'ErrorDetail', data: refused.error })
  const invalid = await client.POST('/a2a/tasks/send', { body: { sender: 'peer-agent@globex' } as never })
  steps.push({ step: 'invalid body', status: invalid.response.status, schema: 'HTTPValidationError', data: invalid.error })
  return steps
}

const EXPECTED_STATUSES = { send: 201, get: 200, artifact: 201, list: 200, health: 200, card: 200, 'no token': 401, 'invalid body': 422 }

describe('the consumer contract: the same client journey against the Prism mock and the real server', () => {
  const schema = contractSchemas()
  let prism: RunningPrism
  let server: TestApp
  beforeAll(async () => {
    ;[prism, server] = await Promise.all([startPrism('mock'), startTestApp()])
  }, 90_000)
  afterAll(async () => {
    await Promise.all([prism?.stop(), server?.close()])
  })

  const targets = () =>
    [
      ['prism mock', prism.url],
      ['real server', server.url],
    ] as const

  it('answers every step with the documented status and shape, on both', async () => {
    for (const [name, url] of targets()) {
      const steps = await journey(createApiClient({ baseUrl: url, token: OPERATOR_TOKEN }), createApiClient({ baseUrl: url }))
      expect(Object.fromEntries(steps.map((s) => [s.step, s.status])), name).toEqual(EXPECTED_STATUSES)
      for (const s of steps) {
        expect(s.data, `${name}: ${s.step}`).toBeDefined()
        expect(violations(schema(s.schema), s.data), `${name}: ${s.step} against ${s.schema}`).toBe('')
      }
    }
  })

  it('gives the mock realistic data: the documented examples, not placeholders', async () => {
    const steps = await journey(createApiClient({ baseUrl: prism.url, token: OPERATOR_TOKEN }), createApiClient({ baseUrl: prism.url }))
    const byStep = Object.fromEntries(steps.map((s) => [s.step, s.data])) as Record<string, Record<string, unknown>>
    expect(byStep['send']).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      sender: 'peer-agent@globex',
      receipt: { kid: expect.stringMatching(/^a2a-server-lineage-/) },
    })
    expect(byStep['card']).toMatchObject({ alg: 'EdDSA', card: { issuer: 'acme-orch', policies: { redaction_tier: 'standard' } } })
    // A fresh node's list after one send: the task that send created, still open.
    expect(byStep['list']?.['tasks']).toEqual([expect.objectContaining({ id: expect.stringMatching(/^[0-9a-f]{12}$/), status: 'open' })])
    expect((byStep['list']?.['tasks'] as { id: string }[] | undefined)?.[0]?.id).toBe(byStep['send']?.['bernstein_task_id'])
    expect(JSON.stringify(steps)).not.toMatch(/"string"/)
  })

  it('reaches the versioned prefix on both', async () => {
    for (const [name, url] of targets()) {
      const v1 = createApiClient({ baseUrl: url + '/api/v1', token: OPERATOR_TOKEN })
      const list = await v1.GET('/tasks', { params: { query: { limit: 5 } } })
      expect(list.response.status, name).toBe(200)
      expect(violations(schema('TaskPage'), list.data), name).toBe('')
    }
  })

  it('catches a response that breaks the contract (the check itself can fail)', () => {
    expect(violations(schema('A2ATaskResponse'), { id: 'x', status: 'submitted' })).toMatch(/must have required property 'sender'/)
    expect(violations(schema('HealthResponse'), { status: 'fine' })).not.toBe('')
  })
})
