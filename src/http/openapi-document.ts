import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { packageRoot } from '../package-root.js'

export type OpenApiDocument = {
  readonly openapi: string
  /** Path items by template; their operations are read by the operation index (operation-index.ts). */
  readonly paths: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>>>>
  readonly [key: string]: unknown
}

/** `openapi.yaml` sits at the package root. */
export const openApiPath = join(packageRoot(), 'openapi.yaml')

export interface LoadedContract {
  readonly document: OpenApiDocument
  readonly yamlText: string
  readonly jsonText: string
  /** A copy labelled 3.1.1 for express-openapi-validator, which refuses 3.2.0 (the document uses only 3.1 features). */
  readonly validatorDocument: OpenApiDocument
  /**
   * True when the document came from the pre-parsed copy whose hash matches the YAML: the exact text the test
   * suite validated against the OpenAPI schema, so checking it again at every start adds nothing.
   */
  readonly fromCheckedCopy: boolean
}

/**
 * `openapi.yaml` already parsed, as JSON (`npm run generate` writes it, `check:generated` checks it): parsing 100 KB
 * of YAML was a quarter of the server's start-up time. Used only when its `source_sha256` is the hash of the YAML
 * text being served, so a stale or missing file just means parsing the YAML.
 */
export const parsedContractPath = join(packageRoot(), 'generated', 'openapi.json')

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex')

function parsedDocument(yamlText: string): { document: OpenApiDocument; fromCheckedCopy: boolean } {
  try {
    const parsed = JSON.parse(readFileSync(parsedContractPath, 'utf8')) as { source_sha256?: unknown; document?: unknown }
    if (parsed.source_sha256 === sha256Hex(yamlText) && typeof parsed.document === 'object' && parsed.document !== null) {
      return { document: parsed.document as OpenApiDocument, fromCheckedCopy: true }
    }
  } catch {
    // absent or unreadable: parse the YAML
  }
  return { document: parse(yamlText) as OpenApiDocument, fromCheckedCopy: false }
}

let cached: LoadedContract | undefined

export function loadContract(): LoadedContract {
  if (cached) return cached
  const yamlText = readFileSync(openApiPath, 'utf8')
  const { document, fromCheckedCopy } = parsedDocument(yamlText)
  const validatorDocument = structuredClone(document) as OpenApiDocument & { openapi: string }
  if (String(validatorDocument.openapi).startsWith('3.2')) (validatorDocument as { openapi: string }).openapi = '3.1.1'
  cached = Object.freeze({ document, yamlText, jsonText: JSON.stringify(document), validatorDocument, fromCheckedCopy })
  return cached
}
