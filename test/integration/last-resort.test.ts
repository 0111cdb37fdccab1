import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import { type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'

describe('errors raised while rendering errors', () => {
  let app: TestApp
  beforeAll(async () => {
    // An observer that refuses with a status createTask does not document: the response validator then refuses
    // the error body itself, and the last-resort handler must still answer with the contract's JSON 500.
    app = await startTestApp({
      taskObservers: [
        {
          async onTaskChange(_repos, change) {
            if (change.after.title === 'explode') throw new AppError('rejected', 'observer refused')
          },
        },
      ],
    })
  })
  afterAll(async () => app.close())

  it('end as the fixed JSON 500, never an HTML page with a stack trace', async () => {
    const res = await rawRequest(app.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: 'explode' }) })
    expect(res.status).toBe(500)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.json).toEqual({ detail: 'Internal Server Error' })
    expect(res.text).not.toMatch(/at .*\.ts:\d+/)
    // The observer threw inside the creating transaction: the task was not stored.
    const titles = (await app.client.GET('/tasks', { params: { query: { limit: 500 } } })).data!.tasks.map((t) => t.title)
    expect(titles).not.toContain('explode')
    const ok = await rawRequest(app.url, { method: 'POST', path: '/tasks', body: JSON.stringify({ title: 'fine' }) })
    expect(ok.status).toBe(201)
    expect((await app.client.GET('/tasks', { params: { query: { limit: 500 } } })).data!.tasks.map((t) => t.title)).toEqual(['fine'])
  })

  it('answers requests Node refuses before Express (oversized headers) with a JSON body', async () => {
    const res = await fetch(`${app.url}/health`, { headers: { 'x-padding': 'a'.repeat(40_000) } })
    expect(res.status).toBe(431)
    expect(await res.json()).toEqual({ detail: 'Request header fields too large' })
    expect((await fetch(`${app.url}/health/live`)).status).toBe(200)
  })

  it('ignores unknown query parameters, as FastAPI does', async () => {
    const res = await rawRequest(app.url, { method: 'GET', path: '/tasks?_=123&limit=5' })
    expect(res.status).toBe(200)
  })
})
