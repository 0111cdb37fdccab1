/**
 * Property-based fuzzing of EVERY operation in openapi.yaml with malformed and hostile requests: wrong types, huge
 * strings, deep nesting (10 000 and 100 000 nested arrays or objects), unicode edge cases (lone surrogates, NUL, RTL
 * overrides, astral characters, invalid UTF-8 bytes), path traversal and SQL/shell/template metacharacters in ids
 * and query parameters, duplicate JSON keys, broken JSON, wrong content types and encodings, random methods, and
 * bad credentials and tenant headers.
 *
 * Properties, checked on every request:
 *   - never a 5xx;
 *   - an error body parses as JSON with a `detail` that is a string, or the 422 list of `{loc, msg, type}`; for the
 *     A2A v1.0 operations (`x-error-format`), in their binding's shape instead (a `google.rpc.Status` with an
 *     ErrorInfo, or a JSON-RPC error response), unless the request reached no operation of theirs (a 405, a 404);
 *   - a rejected (4xx) request writes nothing: every row of every table is read through an independent database
 *     connection before and after and compared;
 *   - after each operation's batch the server still answers `/health` and a real request.
 * Each operation first gets a fixed corpus of known-hostile requests, then FUZZ_RUNS generated ones.
 *
 * Reproducible: fast-check runs with a fixed seed (FUZZ_SEED, default 20261130; each operation uses seed + its
 * index). A failure prints the seed, the shrunk counterexample and the request. A longer campaign:
 *
 *   FUZZ_RUNS=100000 FUZZ_SEED=$RANDOM npx vitest run test/security/fuzz.test.ts
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test FUZZ_RUNS=100000 FUZZ_SEED=4242 npx vitest run test/security/fuzz.test.ts
 *
 * FUZZ_RUNS counts generated requests per operation (default 8, which keeps this file around a minute on both
 * engines); the per-test timeout grows with it.
 */
import http from 'node:http'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testEngines } from '../helpers/engines.js'
import { wireRequest } from '../helpers/raw-http.js'
import { OPERATOR_TOKEN, type TestApp, startTestApp } from '../helpers/test-app.js'
import {
  type Dump,
  type Operation,
  type StoreDump,
  type World,
  concretePath,
  errorBodyProblem,
  hasBodyTemplate,
  loadOperations,
  makeWorld,
  openStoreDump,
  validBody,
  worldClock,
} from './support.js'
import { fuzzSettings } from '../helpers/fuzz.js'

const { runs: RUNS, seed: SEED } = fuzzSettings(8)
const TIMEOUT_MS = Math.max(60_000, RUNS * 1_000)

const OPERATIONS = loadOperations()
const METHODS = http.METHODS.filter((m) => m !== 'CONNECT')

interface FuzzRequest {
  readonly method: string
  /** Already percent-encoded as it goes on the wire. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | Buffer
  /** What was mutated, for the failure message. */
  readonly label: string
}

// ---------------------------------------------------------------------------------------------------------------
// Hostile material

const CORPUS: readonly string[] = [
  '',
  ' ',
  '0',
  '-1',
  '1e309',
  'NaN',
  'null',
  'undefined',
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '/etc/passwd',
  '....//....//',
  "' OR '1'='1",
  "'; DROP TABLE tasks; --",
  '" OR 1=1 --',
  '1; SELECT pg_sleep(5)',
  "%' AND 1=0 UNION SELECT * FROM api_tokens --",
  '`id`',
  '$(id)',
  '${jndi:ldap://x/a}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\u202e\u202dgnp.exe',
  '\u200b\u200c\u200d',
  '\ufeff',
  '😀👩‍👩‍👧‍👦',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '\u0301\u0301\u0301',
  '\r\n\r\nX-Injected: 1',
  '\t',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
]

const deepArrays = (n: number): string => '['.repeat(n) + ']'.repeat(n)
const deepObjects = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n)

const loneSurrogates = fc.array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 4 }).map((units) => String.fromCharCode(...units))

/** Hostile strings; `longest` bounds the long ones (URLs must stay under Node's 16 KiB header limit). */
function hostileStringUpTo(longest: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...CORPUS) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: loneSurrogates },
    { weight: 1, arbitrary: fc.integer({ min: 1_001, max: longest }).map((n) => 'A'.repeat(n)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...CORPUS), fc.string({ unit: 'grapheme', maxLength: 10 })).map(([a, b]) => a + b) },
  )
}

/** In bodies: up to 300 000 characters, beyond every maxLength of the contract. */
const hostileString = hostileStringUpTo(300_000)
/** In paths and query strings: long enough to break any maxLength, short enough for the request line. */
const hostileUrlString = hostileStringUpTo(2_000)

/** A JSON value as text, so that it may be something JSON.stringify cannot produce (deep nesting, 1e400). */
const hostileValueText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: hostileString.map((s) => JSON.stringify(s)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '0',
      '-1',
      '1.5',
      '1e400',
      '-0',
      '9007199254740993',
      'true',
      'false',
      'null',
      '[]',
      '{}',
      '""',
      '[null]',
      '{"__proto__":{"polluted":1}}',
    ),
  },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)) },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 10_000 }).map(deepArrays) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 10_000 }).map(deepObjects) },
)

/** Percent-encodes the UTF-8 bytes of a string, leaving only unreserved characters (lone surrogates become U+FFFD). */
function encodeSegment(text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += /[A-Za-z0-9._~-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

const RAW_SEGMENTS: readonly string[] = [
  '%FF',
  '%',
  '%zz',
  '%00',
  '%ED%A0%80',
  '%C0%AF',
  '..',
  '.',
  '%2e%2e',
  '..%2F..%2F..%2Fetc%2Fpasswd',
  '%2F',
  ';',
  ';jsessionid=1',
  "'",
  '%27%20OR%201%3D1--',
  '*',
  '~',
  '+',
  '..%5C..%5C',
  '%u0000',
  '%E2%80%AE',
]

function segmentArb(valid: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(valid) },
    { weight: 3, arbitrary: hostileUrlString.map(encodeSegment) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
    { weight: 1, arbitrary: fc.constantFrom(`${valid}%00`, valid.toUpperCase(), `${valid}/`, `${valid}/..`, `${valid}//x`, `${valid}%2F..`) },
  )
}

const CONTENT_TYPES: readonly string[] = [
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset="bogus"',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'application/octet-stream',
  'application/merge-patch+json',
  '*/*',
  ';;;',
  'application/json, text/plain',
  '',
]

const contentTypeArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: fc.constant(undefined) },
)

const contentEncodingArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'compress', 'x-unknown') },
)

/** Tenant header values: valid, empty, or outside the tenant pattern (all legal as HTTP header bytes). */
const TENANT_VALUES = (w: World): string[] => [
  w.tenantA,
  w.tenantA,
  w.tenantA,
  w.tenantB,
  'default',
  '',
  ' ',
  '../x',
  "a' or 1=1",
  'x'.repeat(65),
  '-lead',
  'ä',
  'a\tb',
  '%00',
]

function authArb(w: World): fc.Arbitrary<{ headers: Record<string, string>; label: string }> {
  const tenant = fc.constantFrom(...TENANT_VALUES(w))
  return fc.oneof(
    {
      weight: 6,
      arbitrary: tenant.map((t) => ({ headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'x-tenant-id': t }, label: `operator@${JSON.stringify(t)}` })),
    },
    { weight: 2, arbitrary: tenant.map((t) => ({ headers: { authorization: `Bearer ${w.creds.agentA}`, 'x-tenant-id': t }, label: 'agent A' })) },
    { weight: 1, arbitrary: fc.constant({ headers: {}, label: 'no token' }) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          'Bearer',
          'Bearer ',
          'Basic x',
          `bearer ${OPERATOR_TOKEN}`,
          `Bearer ${OPERATOR_TOKEN}x`,
          'Bearer bat_000000000000.' + 'A'.repeat(43),
          `Bearer ${'x'.repeat(5000)}`,
          "Bearer ' OR 1=1 --",
        )
        .map((a) => ({ headers: { authorization: a }, label: `auth ${JSON.stringify(a.slice(0, 30))}` })),
    },
  )
}

function withField(base: Record<string, unknown>, key: string, valueText: string): string {
  const entries = Object.entries(base)
    .filter(([k]) => k !== key)
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
  entries.push(`${JSON.stringify(key)}:${valueText}`)
  return `{${entries.join(',')}}`
}

function bodyArb(template: unknown): fc.Arbitrary<{ body: string | Buffer; label: string }> {
  const base = (typeof template === 'object' && template !== null ? template : { unexpected: 'body' }) as Record<string, unknown>
  const keys = Object.keys(base).length > 0 ? Object.keys(base) : ['x']
  const json = JSON.stringify(base)
  const key = fc.constantFrom(...keys)
  return fc.oneof(
    fc.tuple(key, hostileValueText).map(([k, v]) => ({ body: withField(base, k, v), label: `${k} := ${v.slice(0, 40)}` })),
    fc
      .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype', 'tenant_id', 'id', 'version', 'status', 'x'.repeat(1000), ''), hostileValueText)
      .map(([k, v]) => ({
        body: `${json.slice(0, -1)}${json === '{}' ? '' : ','}${JSON.stringify(k)}:${v}}`,
        label: `extra ${k.slice(0, 20)} := ${v.slice(0, 40)}`,
      })),
    fc.tuple(key, hostileValueText, fc.boolean()).map(([k, v, hostileLast]) => {
      const good = `${JSON.stringify(k)}:${JSON.stringify(base[k] ?? 1)}`
      const bad = `${JSON.stringify(k)}:${v}`
      return { body: `{${hostileLast ? `${good},${bad}` : `${bad},${good}`}}`, label: `duplicate key ${k}` }
    }),
    key.map((k) => {
      const rest = { ...base }
      delete rest[k]
      return { body: JSON.stringify(rest), label: `without ${k}` }
    }),
    fc
      .constantFrom(
        json.slice(0, -1),
        `${json}x`,
        json + json,
        `\ufeff${json}`,
        json.replace(/"/g, "'"),
        '{"a":1,}',
        `// c\n${json}`,
        'NaN',
        '',
        ' ',
        'null',
        '[]',
        '"string"',
        '0',
        '{',
        '}',
        '\u0000',
      )
      .map((b) => ({ body: b, label: `broken JSON ${JSON.stringify(b.slice(0, 30))}` })),
    fc.string({ unit: 'binary', maxLength: 200 }).map((b) => ({ body: b, label: 'random text' })),
    fc.json({ maxDepth: 4 }).map((b) => ({ body: b, label: 'random JSON' })),
    fc.integer({ min: 1_000, max: 10_000 }).map((n) => ({ body: deepArrays(n), label: `${n} nested arrays` })),
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => ({
      body: Buffer.concat([Buffer.from(`{${JSON.stringify(keys[0])}:"`), Buffer.from(bytes), Buffer.from('"}')]),
      label: 'invalid UTF-8 bytes',
    })),
  )
}

function queryArb(op: Operation): fc.Arbitrary<string> {
  const names = fc.constantFrom(
    ...op.queryParams,
    ...op.queryParams,
    'limit',
    'cursor',
    'status',
    'expected_version',
    'agent_id',
    '__proto__',
    'status[$ne]',
    'limit[]',
    'a'.repeat(300),
  )
  const values = fc.oneof(
    hostileUrlString.map(encodeSegment),
    fc.constantFrom('-1', '0', '501', '1e3', '1.5', '%FF', '', 'open', 'open,closed', '%00', "'%20OR%201=1"),
  )
  return fc.array(fc.tuple(names, values), { maxLength: 4 }).map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`))
}

function requestArb(op: Operation, w: World): fc.Arbitrary<FuzzRequest> {
  const segments = op.path.split('/').map((s) => {
    const param = /^\{(.+)\}$/.exec(s)?.[1]
    if (param === undefined) return fc.constant(s)
    const valid = concretePath({ ...op, path: `{${param}}`, requiredQuery: [] }, w)
    return segmentArb(valid)
  })
  const validQuery = concretePath({ ...op, path: '' }, w)
  return fc
    .record({
      method: fc.oneof({ weight: 8, arbitrary: fc.constant(op.method) }, { weight: 2, arbitrary: fc.constantFrom(...METHODS) }),
      segments: fc.tuple(...segments),
      query: fc.oneof({ weight: 1, arbitrary: fc.constant(validQuery) }, { weight: 2, arbitrary: queryArb(op) }),
      auth: authArb(w),
      body: fc.oneof({ weight: op.hasBody ? 1 : 4, arbitrary: fc.constant(undefined) }, { weight: 4, arbitrary: bodyArb(validBody(op, w)) }),
      contentType: contentTypeArb,
      contentEncoding: contentEncodingArb,
      // The operation's own headers (A2A-Version), left out now and then.
      opHeaders: fc.oneof({ weight: 6, arbitrary: fc.constant(op.headers) }, { weight: 1, arbitrary: fc.constant({}) }),
    })
    .map(({ method, segments: parts, query, auth, body, contentType, contentEncoding, opHeaders }) => {
      const headers: Record<string, string> = { ...opHeaders, ...auth.headers }
      if (body !== undefined && contentType !== undefined) headers['content-type'] = contentType
      if (body !== undefined && contentEncoding !== undefined) headers['content-encoding'] = contentEncoding
      return {
        method,
        path: parts.join('/') + query,
        headers,
        ...(body !== undefined && { body: body.body }),
        label: [
          auth.label,
          body?.label,
          contentType && body ? `content-type ${contentType}` : undefined,
          contentEncoding && body ? `encoding ${contentEncoding}` : undefined,
        ]
          .filter(Boolean)
          .join('; '),
      }
    })
}

/** Known-hostile requests every operation gets, whatever the generator happens to draw. */
function corpusFor(op: Operation, w: World): FuzzRequest[] {
  const operator = { authorization: `Bearer ${OPERATOR_TOKEN}`, 'x-tenant-id': w.tenantA, ...op.headers }
  const json = { ...operator, 'content-type': 'application/json' }
  const path = concretePath(op, w)
  const template = validBody(op, w)
  const base = (typeof template === 'object' && template !== null ? template : {}) as Record<string, unknown>
  const requests: FuzzRequest[] = [
    { method: op.method, path, headers: json, body: deepArrays(10_000), label: '10 000 nested arrays' },
    { method: op.method, path, headers: json, body: deepObjects(10_000), label: '10 000 nested objects' },
    { method: op.method, path, headers: json, body: deepArrays(100_000), label: '100 000 nested arrays' },
    { method: op.method, path, headers: { ...operator, 'content-type': 'text/plain' }, body: JSON.stringify(template ?? {}), label: 'text/plain' },
    { method: op.method, path, headers: json, body: `${JSON.stringify(template ?? {}).slice(0, -1)}`, label: 'truncated JSON' },
    { method: 'PROPFIND', path, headers: operator, label: 'PROPFIND' },
    { method: 'DELETE', path, headers: operator, label: 'DELETE' },
    { method: 'TRACE', path, headers: operator, label: 'TRACE' },
  ]
  for (const key of Object.keys(base)) {
    for (const [value, name] of [
      [deepArrays(10_000), '10 000 nested arrays'],
      [deepObjects(10_000), '10 000 nested objects'],
      // Deep enough to exhaust any recursive walker whatever the stack depth it starts from.
      [deepObjects(100_000), '100 000 nested objects'],
      [`{"k":${deepArrays(100_000)}}`, 'an object holding 100 000 nested arrays'],
      ['"a\\u0000b"', 'NUL'],
      ['"\\ud800"', 'lone surrogate'],
      ['"\\u202e\\ud83d\\ude00"', 'RTL + astral'],
      [JSON.stringify('x'.repeat(200_000)), '200 000 characters'],
      ['{"$ne":null}', 'operator object'],
    ] as const) {
      requests.push({ method: op.method, path, headers: json, body: withField(base, key, value), label: `${key} := ${name}` })
    }
  }
  for (const param of op.pathParams) {
    for (const raw of ['%FF', '%00', 'a%00b', '..%2F..%2Fetc%2Fpasswd', '%27%20OR%20%271%27%3D%271', '%ED%A0%80', '%E2%80%AE%F0%9F%98%80']) {
      const hostilePath = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
        name === param ? raw : concretePath({ ...op, path: `{${name}}`, requiredQuery: [] }, w),
      )
      requests.push({
        method: op.method,
        path: hostilePath,
        headers: json,
        ...(template !== undefined && { body: JSON.stringify(template) }),
        label: `{${param}} = ${raw}`,
      })
    }
  }
  for (const name of op.queryParams) {
    for (const raw of ['%00', '%27%20OR%201%3D1--', '%FF', '-1', 'a'.repeat(1_001)]) {
      requests.push({
        method: op.method,
        path: `${path}${path.includes('?') ? '&' : '?'}${name}=${raw}`,
        headers: json,
        ...(template !== undefined && { body: JSON.stringify(template) }),
        label: `?${name}=${raw.slice(0, 20)}`,
      })
    }
  }
  return requests
}

// ---------------------------------------------------------------------------------------------------------------
// The wire and the checks

async function send(url: string, req: FuzzRequest): Promise<{ status: number; contentType: string; text: string }> {
  const res = await wireRequest(url, { method: req.method, path: req.path, headers: req.headers, ...(req.body !== undefined && { body: req.body }) })
  return { status: res.status, contentType: String(res.headers['content-type'] ?? ''), text: res.text }
}

/**
 * What is wrong with an error body: the operation's own error format; a request an A2A v1.0 operation did not get to
 * answer (a method or path the contract does not have there) is answered `{detail}`, as any other.
 */
function errorProblem(op: Operation, status: number, body: unknown): string | null {
  const own = errorBodyProblem(op.errorFormat, status, body)
  if (own === null || op.errorFormat === 'detail') return own
  return errorBodyProblem('detail', status, body) === null ? null : own
}

function dumpDifference(before: Dump, after: Dump): string | null {
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = before[table] ?? []
    const b = after[table] ?? []
    if (a.length !== b.length || a.some((row, i) => row !== b[i])) {
      const added = b.filter((row) => !a.includes(row)).map((r) => r.slice(0, 300))
      const removed = a.filter((row) => !b.includes(row)).map((r) => r.slice(0, 300))
      return `table ${table}: +${JSON.stringify(added.slice(0, 2))} -${JSON.stringify(removed.slice(0, 2))}`
    }
  }
  return null
}

interface Session {
  readonly app: TestApp
  readonly store: StoreDump
  last: Dump
}

/** Sends one request and checks every property; throws (with the request) on a violation. */
async function exercise(session: Session, op: Operation | null, req: FuzzRequest): Promise<void> {
  const where = `${req.method} ${req.path.slice(0, 160)} [${req.label}]`
  const res = await send(session.app.url, req)
  // The baseline moves on whatever happens, so that one violation is not blamed on the requests after it.
  const before = session.last
  session.last = await session.store.dump()
  if (res.status >= 500) throw new Error(`${where}: ${res.status} ${res.text.slice(0, 300)}`)
  const hasBody = req.method !== 'HEAD' && res.status !== 204 && res.status !== 304
  if (hasBody && (res.status >= 400 || res.contentType.startsWith('application/json'))) {
    let parsed: unknown
    try {
      parsed = JSON.parse(res.text)
    } catch {
      throw new Error(`${where}: ${res.status} answered with a body that is not JSON: ${res.text.slice(0, 300)}`)
    }
    if (res.status >= 400) {
      const problem = op === null ? errorBodyProblem('detail', res.status, parsed) : errorProblem(op, res.status, parsed)
      if (problem !== null) throw new Error(`${where}: ${res.status} error body: ${problem}: ${res.text.slice(0, 300)}`)
    }
  }
  if (res.status >= 400) {
    const difference = dumpDifference(before, session.last)
    if (difference !== null) throw new Error(`${where}: rejected with ${res.status} but wrote: ${difference}`)
  }
}

async function stillServing(app: TestApp): Promise<void> {
  const health = await send(app.url, { method: 'GET', path: '/health', headers: { authorization: `Bearer ${OPERATOR_TOKEN}` }, label: 'health' })
  expect(health.status).toBe(200)
  expect(JSON.parse(health.text)).toMatchObject({ status: 'ok' })
  const real = await send(app.url, { method: 'GET', path: '/tasks?limit=1', headers: { authorization: `Bearer ${OPERATOR_TOKEN}` }, label: 'list' })
  expect(real.status).toBe(200)
}

describe.each(testEngines())('fuzzing every operation of openapi.yaml (%s)', (engine) => {
  let session: Session
  let world: World

  beforeAll(async () => {
    const clock = worldClock()
    // A valid blocking A2A v1.0 SendMessage the generator happens to draw waits for a worker (none comes here) until
    // the node's bound: kept short so that it answers the task as it stands within the batch.
    const app = await startTestApp({ engine, clock, a2aV1: { blockingTimeoutMs: 100 } })
    world = await makeWorld(app, clock)
    const store = await openStoreDump(app)
    session = { app, store, last: await store.dump() }
  })
  afterAll(async () => {
    await session?.store.close()
    await session?.app.close()
  })

  it('knows every operation it fuzzes (a new one needs a body template in support.ts)', () => {
    expect(OPERATIONS.length).toBeGreaterThanOrEqual(48)
    expect(OPERATIONS.filter((op) => !hasBodyTemplate(op)).map((op) => `${op.method} ${op.path}`)).toEqual([])
  })

  OPERATIONS.forEach((op, index) => {
    it(
      `${op.method} ${op.path}`,
      async () => {
        // Everything runs even after a violation, so that the report lists every one of them.
        const violations: string[] = []
        for (const req of corpusFor(op, world)) await exercise(session, op, req).catch((error: unknown) => violations.push((error as Error).message))
        await stillServing(session.app)
        await fc
          .assert(
            fc.asyncProperty(requestArb(op, world), (req) => exercise(session, op, req)),
            { numRuns: RUNS, seed: SEED + index, endOnFailure: true },
          )
          .catch((error: unknown) =>
            violations.push(
              `generated: ${String((error as Error).message)
                .replace(/A{20,}/g, 'A…')
                .slice(0, 1_500)}`,
            ),
          )
        await stillServing(session.app)
        expect(violations).toEqual([])
      },
      TIMEOUT_MS,
    )
  })

  it(
    'unknown paths, prefixes and methods',
    async () => {
      const path = fc.oneof(
        fc.constantFrom(
          '/',
          '//',
          '/api/v2/tasks',
          '/api/v1',
          '/api/v1/',
          '/tasks/',
          '/tasks//claim',
          '/TASKS',
          '/a2a',
          '/a2a/v1',
          '/admin',
          '/.env',
          '/.git/config',
          '/%2e%2e/%2e%2e/etc/passwd',
          '/tasks/..;/admin',
          '/docs',
          '/lineage',
          '/metrics',
          '/federation/peers',
          '/.well-known/',
          '/.well-known/../tasks',
          '/health/../tasks',
          '/api/v1/openapi.json',
        ),
        fc.array(hostileUrlString.map(encodeSegment), { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`),
      )
      await fc.assert(
        fc.asyncProperty(path, fc.constantFrom(...METHODS), authArb(world), fc.option(fc.json({ maxDepth: 2 }), { nil: undefined }), (p, method, auth, body) =>
          exercise(session, null, {
            method,
            path: p,
            headers: { ...auth.headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
            ...(body !== undefined && { body }),
            label: auth.label,
          }),
        ),
        { numRuns: RUNS * 10, seed: SEED - 1, endOnFailure: true },
      )
      await stillServing(session.app)
    },
    TIMEOUT_MS,
  )
})
