/**
 * Writes generated/openapi.json: openapi.yaml parsed once, with the SHA-256 of the YAML text it came from, so that
 * the server starts without parsing YAML (src/http/openapi-document.ts uses it only when the hash matches).
 * `--check` fails instead of writing when the file is missing or stale (CI, via npm run check:generated).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { parse } from 'yaml'
import { openApiPath, parsedContractPath, sha256Hex } from '../src/http/openapi-document.js'

const yamlText = readFileSync(openApiPath, 'utf8')
const document: unknown = parse(yamlText)
// The JSON form must be the same document: no value YAML can express but JSON cannot (dates, non-finite numbers).
if (!isDeepStrictEqual(JSON.parse(JSON.stringify(document)), document)) {
  process.stderr.write('openapi.yaml holds values that do not survive JSON; generated/openapi.json not written\n')
  process.exit(1)
}
const text = JSON.stringify({ source_sha256: sha256Hex(yamlText), document }) + '\n'
if (process.argv.includes('--check')) {
  let current = ''
  try {
    current = readFileSync(parsedContractPath, 'utf8')
  } catch {
    // missing counts as stale
  }
  if (current !== text) {
    process.stderr.write('generated/openapi.json is stale: run npm run generate\n')
    process.exit(1)
  }
} else {
  writeFileSync(parsedContractPath, text)
}
