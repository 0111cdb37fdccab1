import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import { parse } from 'yaml'
import { describe, expect, it } from 'vitest'
import { loadContract } from '../../src/http/openapi-document.js'
import { contractSchemas, violations } from '../helpers/contract-schemas.js'
import { repoRoot } from '../helpers/vectors.js'

/**
 * openapi.yaml describes this server, not the Bernstein task server its A2A operations come from: its own title
 * and version, what it really does about tokens and errors, only paths it has, and a server URL that works
 * wherever the document is served. The A2A operations themselves stay the seed's.
 */

type Operation = { operationId?: string; responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }> }
type Paths = Record<string, Record<string, Operation>>

const document = loadContract().document as unknown as {
  info: { title: string; version: string; description: string }
  servers: unknown
  paths: Paths
  components: Record<string, Record<string, unknown>>
}
const description = document.info.description
const packageVersion = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

/** Every status some operation of the document declares. */
const documentedStatuses = new Set(Object.values(document.paths).flatMap((item) => METHODS.flatMap((m) => Object.keys(item[m]?.responses ?? {}).map(Number))))

describe('openapi.yaml describes this server', () => {
  it('under its own name, at the version of the package', () => {
    expect(document.info.title).toBe('bernstein-a2a')
    expect(document.info.version).toBe(packageVersion)
  })

  it('names its server by a relative URL, so that a client (Swagger UI on /docs) calls the origin it fetched the document from', () => {
    expect(document.servers).toEqual([{ url: '/', description: expect.any(String) }])
  })

  it('mentions only paths it has (no /auth/login, /webhook, /hooks/{session_id} of the other server)', () => {
    const paths = Object.keys(document.paths)
    const mentioned = [...description.matchAll(/`(?:(?:GET|POST) )?(\/[^`\s?]*)[^`]*`/g)].map((m) => m[1]!)
    expect(mentioned.length).toBeGreaterThan(10)
    const unknown = mentioned.filter((path) => {
      if (path.endsWith('/*') || path.endsWith('/...')) return !paths.some((p) => p.startsWith(path.replace(/\*$|\.\.\.$/, '')))
      return !paths.includes(path) && !paths.some((p) => p.startsWith(path + '/'))
    })
    expect(unknown).toEqual([])
    expect(description).not.toMatch(/webhook|\/hooks\/|\/auth\/|HMAC-SHA256 signatures|8052`\. Override/)
  })

  it('tells its authentication as it is: bearer operator, agent and metrics tokens, and the public operations', () => {
    for (const phrase of ['Bearer <token>', 'BERNSTEIN_AUTH_TOKEN', 'token create --role agent', 'BERNSTEIN_METRICS_TOKEN'])
      expect(description).toContain(phrase)
    const publicOperations = Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => (item[m] as { security?: unknown[] } | undefined)?.security?.length === 0).map(() => path),
    )
    const publicParagraph = description.slice(description.indexOf('Public operations'))
    for (const path of publicOperations.filter((p) => !p.startsWith('/api/v1/'))) expect(publicParagraph, path).toContain('`' + path + '`')
  })

  it("tells its errors as they are: {detail}, validation errors as FastAPI's 422 list, and a row for every status it uses", () => {
    expect(description).toContain('{"detail": [{"loc": ["body", "message"], "msg": "Field required", "type": "missing"}]}')
    const rows = [...description.matchAll(/^\| ([\d, ]+) \| (.*) \|$/gm)].map((m) => ({ statuses: m[1]!.split(',').map((s) => Number(s.trim())), text: m[2]! }))
    const tabled = new Set(rows.flatMap((r) => r.statuses))
    expect([...documentedStatuses].filter((s) => !tabled.has(s))).toEqual([])
    expect(rows.find((r) => r.statuses.includes(422))?.text).toMatch(/^Validation error/)
    expect(rows.find((r) => r.statuses.includes(400))?.text).not.toMatch(/validation/i)
    expect(document.components['responses']?.['ValidationFailed']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/HTTPValidationError' } } },
    })
  })

  it('points into docs/ for security, configuration, lineage and receipts', () => {
    for (const file of ['docs/security.md', 'docs/configuration.md', 'docs/lineage-and-receipts.md']) expect(description).toContain('`' + file + '`')
  })

  it("keeps the seed's A2A operations: paths, operationIds, statuses and schemas", () => {
    const seed = parse(readFileSync(join(repoRoot, '..', 'shared', 'reference', 'seed-a2a-openapi.yaml'), 'utf8')) as {
      paths: Paths
      components: { schemas: Record<string, unknown> }
    }
    for (const [path, item] of Object.entries(seed.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const ours = document.paths[path]?.[method]
        expect(ours?.operationId, `${method} ${path}`).toBe(operation.operationId)
        expect(Object.keys(ours?.responses ?? {}), `${method} ${path}`).toEqual(expect.arrayContaining(Object.keys(operation.responses ?? {})))
      }
    }
    expect(Object.keys(document.components['schemas'] ?? {})).toEqual(expect.arrayContaining(Object.keys(seed.components.schemas)))
  })
})

describe("openapi.yaml's examples (what the Prism mock answers)", () => {
  const schema = contractSchemas()
  // The few media types with a schema of their own (no $ref into components).
  const inline = new Ajv({ strict: false, allErrors: true })
  const componentSchemas = document.components['schemas'] ?? {}

  it('each fit the schema they illustrate', () => {
    const problems: string[] = []
    let checked = 0
    // Schema-level and property-level examples, at any depth of components.schemas.
    const walk = (node: unknown, pointer: string): void => {
      if (typeof node !== 'object' || node === null) return
      const record = node as Record<string, unknown>
      if ('example' in record && pointer.split('/').length > 1) {
        checked++
        const v = violations(schema(pointer), record['example'])
        if (v) problems.push(`${pointer}: ${v}`)
      }
      for (const [key, value] of Object.entries(record)) if (key !== 'example') walk(value, `${pointer}/${key}`)
    }
    for (const [name, value] of Object.entries(componentSchemas)) walk(value, name)
    // Media-type examples of responses, inline or through components.examples.
    const examples = (document.components['examples'] ?? {}) as Record<string, { value: unknown }>
    const mediaTypes = [
      ...Object.entries(document.paths).flatMap(([path, item]) =>
        METHODS.flatMap((m) =>
          Object.entries(item[m]?.responses ?? {}).flatMap(([status, r]) =>
            Object.entries(r.content ?? {}).map(([type, media]) => ({ at: `${m} ${path} ${status} ${type}`, media })),
          ),
        ),
      ),
      ...Object.entries((document.components['responses'] ?? {}) as Record<string, { content?: Record<string, unknown> }>).flatMap(([name, r]) =>
        Object.entries(r.content ?? {}).map(([type, media]) => ({ at: `responses ${name} ${type}`, media })),
      ),
    ] as { at: string; media: { schema?: { $ref?: string }; example?: unknown; examples?: Record<string, { $ref?: string; value?: unknown }> } }[]
    for (const { at, media } of mediaTypes) {
      const values: unknown[] = []
      if ('example' in media) values.push(media.example)
      for (const entry of Object.values(media.examples ?? {}))
        values.push(entry.$ref ? examples[entry.$ref.replace('#/components/examples/', '')]?.value : entry.value)
      const ref = media.schema?.$ref
      for (const value of values) {
        checked++
        if (value === undefined) problems.push(`${at}: an example that resolves to nothing`)
        else if (ref?.startsWith('#/components/schemas/')) {
          const v = violations(schema(ref.slice('#/components/schemas/'.length)), value)
          if (v) problems.push(`${at}: ${v}`)
        } else if (media.schema) {
          const v = violations(inline.compile(media.schema), value)
          if (v) problems.push(`${at}: ${v}`)
        } else problems.push(`${at}: an example without a schema`)
      }
    }
    expect(problems).toEqual([])
    expect(checked).toBeGreaterThan(50)
  })
})
