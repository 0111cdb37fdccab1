import type { ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import express, { type RequestHandler, Router } from 'express'
import helmet from 'helmet'
import { type RouteDefinition, route } from './route.js'

/** swagger-ui-dist's files, from node_modules: the reference page needs no CDN. */
export const swaggerUiDirectory = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))

export const DOCS_ASSETS = '/docs/assets'

/** The page: Swagger UI's stylesheet and bundle, then our initialiser; no inline script (CSP `script-src 'self'`). */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bernstein-a2a API reference</title>
<link rel="stylesheet" href="${DOCS_ASSETS}/swagger-ui.css">
<link rel="icon" type="image/png" href="${DOCS_ASSETS}/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_ASSETS}/swagger-ui-bundle.js"></script>
<script src="${DOCS_ASSETS}/bernstein-docs.js"></script>
</body>
</html>
`

/**
 * Points Swagger UI at this server's own document. `validatorUrl: null` keeps the page from calling Swagger's
 * public validator: the page talks to its own origin only.
 */
const INITIALISER = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    displayOperationId: true,
    docExpansion: 'list',
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout'
  })
})
`

/**
 * Helmet's defaults with one change for the reference page: no `upgrade-insecure-requests`, which would rewrite
 * the page's own http:// asset URLs to https:// on a plain-HTTP node. Scripts stay `'self'`; Swagger UI's inline
 * styles are already allowed by helmet's default `style-src 'self' https: 'unsafe-inline'`.
 */
const docsHelmet = helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } })
const apiHelmet = helmet()

export function isDocsPath(path: string): boolean {
  return path === '/docs' || path.startsWith('/docs/')
}

type HeaderTarget = Pick<ServerResponse, 'setHeader' | 'removeHeader'>

/**
 * With these options helmet's headers never depend on the request (no per-request CSP directive), so each set is
 * recorded once and replayed: the same headers, without a dozen nested middleware calls on every request. The
 * recording request throws if helmet reads anything from it, so an option that would make the headers depend on
 * the request fails at start instead of being frozen.
 */
export function recordHeaders(middleware: RequestHandler): (res: HeaderTarget) => void {
  const set: [string, string | number | readonly string[]][] = []
  const removed: string[] = []
  const request = new Proxy({}, {
    get() {
      throw new Error('helmet read the request: its headers cannot be recorded once')
    },
  })
  const recorder: HeaderTarget = {
    setHeader(name, value) {
      set.push([name, value])
      return this as never
    },
    removeHeader(name) {
      removed.push(name)
    },
  }
  let finished = false
  void middleware(request as never, recorder as never, (error?: unknown) => {
    if (error !== undefined) throw error
    finished = true
  })
  if (!finished) throw new Error('helmet did not finish synchronously: its headers cannot be recorded once')
  return (res) => {
    for (const name of removed) res.removeHeader(name)
    for (const [name, value] of set) res.setHeader(name, value)
  }
}

const apiHeaders = recordHeaders(apiHelmet)
const docsHeaders = recordHeaders(docsHelmet)

/** Security headers: helmet's defaults everywhere, the docs variant on `/docs` and its assets. */
export function securityHeaders(): RequestHandler {
  return (req, res, next) => {
    ;(isDocsPath(req.path) ? docsHeaders : apiHeaders)(res)
    next()
  }
}

/** `/docs/assets/*`: the initialiser and swagger-ui-dist's files. Mounted before the contract validator (not API operations). */
export function docsAssets(): Router {
  const router = Router()
  router.get('/bernstein-docs.js', (_req, res) => {
    res.type('text/javascript').send(INITIALISER)
  })
  router.use(express.static(swaggerUiDirectory, { index: false, fallthrough: true, maxAge: '1h' }))
  return router
}

export function docsRoutes(): RouteDefinition[] {
  return [route('getDocs', 'get', '/docs', async () => ({ status: 200, raw: PAGE, contentType: 'text/html; charset=utf-8' }))]
}
