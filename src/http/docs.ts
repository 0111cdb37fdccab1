import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import express, { Router } from 'express'
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
