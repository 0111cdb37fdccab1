import { accessSync, constants, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadContract } from '../../src/http/openapi-document.js'
import { packageVersion } from '../../src/version.js'
import { type TestApp, rawRequest, startTestApp } from '../helpers/test-app.js'
import { repoRoot } from '../helpers/vectors.js'

/**
 * The browser: Debian's chromium package (.ci/run installs it), or the executable BERNSTEIN_TEST_CHROMIUM names;
 * playwright-core downloads no browser of its own. Without it the browser tests are skipped, and say why, so
 * that `npm test` passes on a machine without Chromium; in CI (CI=true) they run anyway and fail on the missing
 * browser, since a skipped leg there would go unnoticed. To see the skip where Chromium is installed:
 *
 *   BERNSTEIN_TEST_CHROMIUM=/nonexistent npx vitest run test/e2e/docs.test.ts
 */
const CHROMIUM = process.env['BERNSTEIN_TEST_CHROMIUM'] || '/usr/bin/chromium'
const IN_CI = !['', '0', 'false'].includes(process.env['CI'] ?? '')

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

const SKIP_BROWSER = !executable(CHROMIUM) && !IN_CI
const BROWSER_SKIP_REASON = `no Chromium at ${CHROMIUM}: install it (apt-get install chromium) or set BERNSTEIN_TEST_CHROMIUM`
if (SKIP_BROWSER) console.log(`[test/e2e/docs.test.ts] browser tests skipped: ${BROWSER_SKIP_REASON}`)

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const
const operations = Object.entries(loadContract().document.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]?.operationId !== undefined).map((method) => ({ method, path, operationId: item[method]?.operationId as string })),
)

describe.skipIf(SKIP_BROWSER)(`GET /docs in a real browser${SKIP_BROWSER ? ` (skipped: ${BROWSER_SKIP_REASON})` : ''}`, () => {
  let app: TestApp
  let browser: Browser
  beforeAll(async () => {
    if (!executable(CHROMIUM)) throw new Error(`CI=true and ${BROWSER_SKIP_REASON}: CI installs it (.ci/run), so this leg must run`)
    app = await startTestApp()
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it('renders every operation of openapi.yaml, loads only same-origin assets, breaks no CSP rule; screenshot in test-artifacts/docs.png', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const problems: string[] = []
    const origins = new Set<string>()
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`page: ${error.message}`))
    page.on('request', (request) => origins.add(new URL(request.url()).origin))
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`))

    const response = await page.goto(`${app.url}/docs`, { waitUntil: 'networkidle' })
    expect(response?.status()).toBe(200)
    await page.waitForSelector('.opblock', { timeout: 30_000 })
    await expect(page.title()).resolves.toBe('bernstein-a2a API reference')
    // The contract's own title and version (the package's), not the Bernstein task server's.
    const title = await page.locator('.info .title').first().textContent()
    expect(title).toContain('bernstein-a2a')
    expect(title).toContain(packageVersion())

    // Swagger UI marks each operation with its operationId (displayOperationId) under its tag.
    const rendered = await page.$$eval('.opblock', (blocks) =>
      blocks.map((b) => ({
        method: b.querySelector('.opblock-summary-method')?.textContent?.trim().toLowerCase() ?? '',
        path: b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '',
        operationId: b.querySelector('.opblock-summary-operation-id')?.textContent?.trim() ?? '',
      })),
    )
    const seen = new Set(rendered.map((r) => `${r.method} ${r.path} ${r.operationId}`))
    const missing = operations.filter((op) => !seen.has(`${op.method} ${op.path} ${op.operationId}`))
    expect(missing).toEqual([])
    expect(rendered.length).toBe(operations.length)

    mkdirSync(join(repoRoot, 'test-artifacts'), { recursive: true })
    await page.locator('.opblock-tag-section').first().scrollIntoViewIfNeeded()
    await page.screenshot({ path: join(repoRoot, 'test-artifacts', 'docs.png'), fullPage: false })
    expect(problems).toEqual([])
    expect([...origins]).toEqual([app.url])
    await page.close()
  }, 90_000)
})

describe('GET /docs over HTTP', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startTestApp()
  })
  afterAll(async () => app.close())

  it('serves the page and its assets without a token, under a CSP without upgrade-insecure-requests', async () => {
    for (const path of ['/docs', '/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/bernstein-docs.js']) {
      const res = await rawRequest(app.url, { method: 'GET', path, token: null })
      expect(res.status, path).toBe(200)
      const csp = res.headers.get('content-security-policy') ?? ''
      expect(csp, path).toContain("script-src 'self'")
      expect(csp, path).not.toContain('upgrade-insecure-requests')
    }
    const api = await rawRequest(app.url, { method: 'GET', path: '/health/live', token: null })
    expect(api.headers.get('content-security-policy')).toContain('upgrade-insecure-requests')
    expect((await rawRequest(app.url, { method: 'GET', path: '/docs/assets/nothing-here.js', token: null })).status).toBe(404)
  })
})
