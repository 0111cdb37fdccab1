import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { repoRoot, vectorText } from '../helpers/vectors.js'

/**
 * Every name `bernstein-a2a` exports, values and types: what a library user needs to run a node and to verify
 * offline what nodes and peers hand over (docs/library.md lists them, with an example each). Adding or removing a
 * name is a change of the public API: change it here, in docs/library.md and in the CHANGELOG together.
 */
const VALUES = [
  'AuditKeyError',
  'CapabilityCardInvalid',
  'ConfigError',
  'KeyRejected',
  'LINEAGE_ENVELOPE_FIELD',
  'PeerCardRejected',
  'StartupError',
  'TrustError',
  'consumePeerCard',
  'createNodeApp',
  'issueCapabilityCard',
  'keyFingerprint',
  'loadConfig',
  'parseCardFile',
  'parseLineageEnvelope',
  'parseLineageEnvelopeField',
  'parsePythonJson',
  'readAuditKey',
  'serializeCardFile',
  'startServer',
  'verifyA2AReceipt',
  'verifyCapabilityCard',
  'verifyTrackerAuditFile',
  'verifyTrackerAuditLines',
]
const TYPES = [
  'A2AReceiptResult',
  'AcceptedPeerCard',
  'AuditKeyErrorCode',
  'CapabilityCardBody',
  'CapabilityCardInvalidCode',
  'CardPolicies',
  'CardVerification',
  'CardVerifyFailure',
  'Config',
  'ConsumePeerCardOptions',
  'Fail',
  'IssueCapabilityCardOptions',
  'KeyRejectedCode',
  'LineageEnvelope',
  'LineageEnvelopeFailure',
  'LineageEnvelopeParseOptions',
  'LineageEnvelopeResult',
  'Logger',
  'NodeApp',
  'Ok',
  'PeerCardRejection',
  'PolicyRequirements',
  'PyValue',
  'ReadAuditKeyOptions',
  'ReceiptUnchecked',
  'Result',
  'RunningServer',
  'SignedCapabilityCard',
  'TrackerAuditEntry',
  'TrackerAuditFailure',
  'TrackerAuditLine',
  'TrackerAuditVerifyResult',
  'TrustErrorCode',
  'VerifyA2AReceiptOptions',
  'VerifyCapabilityCardOptions',
]

const ENTRY = join(repoRoot, 'src', 'index.ts')
const compilerOptions = (): ts.CompilerOptions => {
  const { config } = ts.readConfigFile(join(repoRoot, 'tsconfig.json'), ts.sys.readFile)
  return { ...ts.parseJsonConfigFileContent(config, ts.sys, repoRoot).options, noEmit: true }
}

interface Exported {
  readonly name: string
  readonly isValue: boolean
  readonly isFunction: boolean
  readonly documented: boolean
  readonly examples: readonly string[]
}

/** The entry's exports as the compiler sees them, each followed to its declaration for its TSDoc. */
function entryExports(program: ts.Program): Exported[] {
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(ENTRY) as ts.SourceFile
  const module = checker.getSymbolAtLocation(source) as ts.Symbol
  return checker.getExportsOfModule(module).map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const isValue = (symbol.flags & ts.SymbolFlags.Value) !== 0
    const examples = symbol
      .getJsDocTags(checker)
      .filter((tag) => tag.name === 'example')
      .map((tag) => ts.displayPartsToString(tag.text))
    return {
      name: exported.name,
      isValue,
      isFunction: (symbol.flags & ts.SymbolFlags.Function) !== 0,
      documented: ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim() !== '',
      examples,
    }
  })
}

describe("the package's main entry", () => {
  it('exports the server factory and the offline verifiers (dist/index.js), which work on Bernstein-made data', async () => {
    const lib = (await import(pathToFileURL(join(repoRoot, 'dist', 'index.js')).href)) as typeof import('../../src/index.js')
    expect(Object.keys(lib).sort()).toEqual(VALUES)
    expect(typeof lib.startServer).toBe('function')
    const signed = lib.parseCardFile(vectorText('capability_cards', 'card_a.signed.json'))
    expect(await lib.verifyCapabilityCard(signed, { now: 1700000100 })).toMatchObject({ ok: true })
    expect(lib.keyFingerprint(signed.card.public_key_pem)).toBe('sha256:10ba682c8ad13513971e8b56881aab8bd702bb807796eca81932c735a94d6e6d')
    const lines = vectorText('tracker_audit', 'source_log.jsonl')
      .split('\n')
      .filter((l) => l !== '')
    expect(await lib.verifyTrackerAuditLines(lines, Buffer.from('0123456789abcdef'.repeat(4)))).toEqual({ ok: true, value: { entries: 5 } })
    const envelope = lib.parseLineageEnvelope(lib.parsePythonJson(vectorText('lineage_v2', 'envelope_payload.json')))
    expect(envelope).toMatchObject({ ok: true, value: { entries: expect.any(Array) } })
  })

  it('creates a node application a server of your own can serve (createNodeApp)', async () => {
    const lib = (await import(pathToFileURL(join(repoRoot, 'dist', 'index.js')).href)) as typeof import('../../src/index.js')
    const dataDir = mkdtempSync(join(tmpdir(), 'bernstein-a2a-entry-'))
    const token = 'entry-operator-token-0123456789'
    const quiet = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} }
    const node = await lib.createNodeApp(lib.loadConfig({ BERNSTEIN_DATA_DIR: dataDir, BERNSTEIN_AUTH_TOKEN: token }, dataDir), quiet)
    const server = createServer(node.express).listen(0, '127.0.0.1')
    try {
      await once(server, 'listening')
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      expect((await fetch(`${url}/health/live`)).status).toBe(200)
      const created = await fetch(`${url}/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ title: 'from an embedding server' }),
      })
      expect(created.status).toBe(201)
      expect(((await created.json()) as { title: string }).title).toBe('from an embedding server')
      expect((await fetch(`${url}/tasks`, { headers: { connection: 'close' } })).status).toBe(401)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await node.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  // One program for the two checks below: the entry's exports and docs, then its examples compiled against it.
  const options = compilerOptions()
  const host = ts.createCompilerHost(options)
  const program = ts.createProgram([ENTRY], options, host)
  const exported = entryExports(program)

  it('exports exactly the documented names, values and types, each with a TSDoc comment', () => {
    expect(exported.filter((e) => e.isValue).map((e) => e.name)).toEqual(expect.arrayContaining(VALUES))
    expect(exported.map((e) => e.name).sort()).toEqual([...VALUES, ...TYPES].sort())
    expect(exported.filter((e) => !e.documented).map((e) => e.name)).toEqual([])
    // docs/library.md lists every export.
    const library = readFileSync(join(repoRoot, 'docs', 'library.md'), 'utf8')
    expect(exported.filter((e) => !library.includes(`\`${e.name}`)).map((e) => e.name)).toEqual([])
  })

  it('gives every exported function an @example that compiles against the entry', () => {
    const functions = exported.filter((e) => e.isFunction)
    expect(functions.filter((e) => e.examples.length === 0).map((e) => e.name)).toEqual([])
    // Each example is a module of its own: the entry's names, plus the node: modules the examples read and write
    // files and make keys with, are in scope; nothing else is declared for it.
    const prelude = [
      `import { ${VALUES.join(', ')} } from ${JSON.stringify(ENTRY.replace(/\.ts$/, '.js'))}`,
      `import type { ${TYPES.join(', ')} } from ${JSON.stringify(ENTRY.replace(/\.ts$/, '.js'))}`,
      "import { generateKeyPairSync } from 'node:crypto'",
      "import { readFileSync, writeFileSync } from 'node:fs'",
      "import { createServer } from 'node:http'",
    ].join('\n')
    const files = new Map(
      functions.flatMap((e) =>
        e.examples.map((example, i) => [join(repoRoot, 'test', `example-${e.name}-${i}.ts`), `${prelude}\n${example}\nexport {}\n`] as const),
      ),
    )
    const exampleOptions = { ...options, noUnusedLocals: false }
    const exampleHost: ts.CompilerHost = {
      ...host,
      fileExists: (name) => files.has(name) || host.fileExists(name),
      readFile: (name) => files.get(name) ?? host.readFile(name),
      getSourceFile: (name, language, ...rest) => {
        const text = files.get(name)
        return text === undefined ? host.getSourceFile(name, language, ...rest) : ts.createSourceFile(name, text, language, true)
      },
    }
    expect(files.size).toBeGreaterThanOrEqual(functions.length)
    const examples = ts.createProgram([...files.keys()], exampleOptions, exampleHost, program)
    const errors = [...files.keys()].flatMap((name) =>
      ts
        .getPreEmitDiagnostics(examples, examples.getSourceFile(name))
        .map((d) => `${name.slice(repoRoot.length + 1)}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}\n${files.get(name)?.slice(prelude.length)}`),
    )
    expect(errors).toEqual([])
  })
})
