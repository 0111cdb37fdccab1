import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { loadContract, openApiPath, parsedContractPath } from '../../../src/http/openapi-document.js'
import { type TestApp, startTestApp } from '../../helpers/test-app.js'

const apps: TestApp[] = []
afterAll(async () => {
  for (const app of apps) await app.close()
})

describe('the contract the server loads', () => {
  it('comes from the checked pre-parsed copy, which is current (npm run generate)', () => {
    const copy = JSON.parse(readFileSync(parsedContractPath, 'utf8')) as { source_sha256: string }
    expect(copy.source_sha256).toBe(createHash('sha256').update(readFileSync(openApiPath, 'utf8'), 'utf8').digest('hex'))
    expect(loadContract().fromCheckedCopy).toBe(true)
  })

  // Servers skip express-openapi-validator's check of the document itself when it is this checked copy: this is
  // the check they skip, run here instead, on the same document.
  it("passes express-openapi-validator's validation of the OpenAPI document, and the server still answers", async () => {
    const app = await startTestApp({ validateApiSpec: true })
    apps.push(app)
    const { response, data } = await app.client.GET('/health')
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ status: 'ok' })
    const { response: task } = await app.client.GET('/tasks/{task_id}', { params: { path: { task_id: 'no-such-task' } } })
    expect(task.status).toBe(404)
  })
})
