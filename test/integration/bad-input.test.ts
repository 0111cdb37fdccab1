import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OVERFLOW_MESSAGE, UNSAFE_INTEGER_MESSAGE } from '../../src/text/json-numbers.js'
import { testEngines } from '../helpers/engines.js'
import { fuzzSettings } from '../helpers/fuzz.js'
import { type TestApp, rawRequest, startTestApp, stateSnapshot } from '../helpers/test-app.js'

type Prefix = '' | '/api/v1'
type Loc = readonly (string | number)[]
interface Issue {
  loc: Loc
  msg: string
  type: string
}
interface Raw {
  status: number
  headers: Headers
  text: string
  json: unknown
}

const PREFIXES: readonly Prefix[] = ['', '/api/v1']
const LIMIT = 1_048_576

/** What the seeded state looks like, as the API and the store show it. */
interface Seed {
  open: string
  claimed: string
  done: string
  a2a: string
}

/** One operation with a JSON body, and how to get each kind of bad body wrong. */
interface BodyOp {
  readonly name: string
  readonly path: (seed: Seed) => string
  /** Fields whose absence is a 422 `missing`. */
  readonly required: readonly string[]
  /** A body with every field of the wrong JSON type, and the locations that must be reported. */
  readonly wrongTypes: Readonly<Record<string, unknown>>
  readonly wrongTypeLocs: readonly Loc[]
  /** A valid body, the base for the extra-field and over-long cases. */
  readonly valid: Readonly<Record<string, unknown>>
  /** additionalProperties: false in the contract. */
  readonly closed: boolean
  /** [field, length just over its maxLength]. */
  readonly tooLong: readonly (readonly [string, number])[]
  /** Out-of-range values: [body, loc, type]. */
  readonly outOfRange?: readonly (readonly [Readonly<Record<string, unknown>>, Loc, string])[]
}

const BODY_OPS: readonly BodyOp[] = [
  {
    name: 'POST /tasks',
    path: () => '/tasks',
    required: ['title'],
    wrongTypes: { title: 5, priority: 'high', depends_on: 'x', metadata: [], owned_files: [1], estimated_minutes: 1.5 },
    wrongTypeLocs: [
      ['body', 'title'],
      ['body', 'priority'],
      ['body', 'depends_on'],
      ['body', 'metadata'],
      ['body', 'owned_files', 0],
      ['body', 'estimated_minutes'],
    ],
    valid: { title: 'never created' },
    closed: true,
    tooLong: [
      ['title', 501],
      ['role', 1001],
      ['description', 100_001],
      ['parent_task_id', 65],
    ],
    outOfRange: [
      [{ title: 'x', priority: 11 }, ['body', 'priority'], 'less_than_equal'],
      [{ title: 'x', priority: -1 }, ['body', 'priority'], 'greater_than_equal'],
      [{ title: 'x', estimated_minutes: 100_001 }, ['body', 'estimated_minutes'], 'less_than_equal'],
      [{ title: 'x', scope: 'huge' }, ['body', 'scope'], 'enum'],
      [{ title: 'x', complexity: 'extreme' }, ['body', 'complexity'], 'enum'],
      [{ title: 'x', task_type: 'chore' }, ['body', 'task_type'], 'enum'],
      [{ title: '' }, ['body', 'title'], 'string_too_short'],
      [{ title: 'x', role: '' }, ['body', 'role'], 'string_too_short'],
      [{ title: 'x', depends_on: ['a'.repeat(65)] }, ['body', 'depends_on', 0], 'string_too_long'],
      [{ title: 'x', depends_on: Array(101).fill('a') }, ['body', 'depends_on'], 'too_long'],
      [{ title: 'x', metadata: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])) }, ['body', 'metadata'], 'too_long'],
    ],
  },
  {
    name: 'POST /tasks/{id}/claim',
    path: (s) => `/tasks/${s.open}/claim`,
    required: [],
    wrongTypes: { agent_id: 5 },
    wrongTypeLocs: [['body', 'agent_id']],
    valid: { agent_id: 'worker' },
    closed: true,
    tooLong: [['agent_id', 201]],
    outOfRange: [[{ agent_id: '' }, ['body', 'agent_id'], 'string_too_short']],
  },
  {
    name: 'POST /tasks/{id}/progress',
    path: (s) => `/tasks/${s.claimed}/progress`,
    required: ['message'],
    wrongTypes: { message: 5, percent: 'half' },
    wrongTypeLocs: [
      ['body', 'message'],
      ['body', 'percent'],
    ],
    valid: { message: 'm' },
    closed: true,
    tooLong: [['message', 100_001]],
    outOfRange: [
      [{ message: 'm', percent: 101 }, ['body', 'percent'], 'less_than_equal'],
      [{ message: 'm', percent: -1 }, ['body', 'percent'], 'greater_than_equal'],
      [{ message: 'm', percent: 50.5 }, ['body', 'percent'], 'type_error'],
      [{ message: '' }, ['body', 'message'], 'string_too_short'],
    ],
  },
  {
    name: 'POST /tasks/{id}/complete',
    path: (s) => `/tasks/${s.open}/complete`,
    required: ['result_summary'],
    wrongTypes: { result_summary: ['s'] },
    wrongTypeLocs: [['body', 'result_summary']],
    valid: { result_summary: 's' },
    closed: true,
    tooLong: [['result_summary', 100_001]],
    outOfRange: [[{ result_summary: '' }, ['body', 'result_summary'], 'string_too_short']],
  },
  {
    name: 'POST /tasks/{id}/fail',
    path: (s) => `/tasks/${s.open}/fail`,
    required: ['reason'],
    wrongTypes: { reason: null },
    wrongTypeLocs: [['body', 'reason']],
    valid: { reason: 'r' },
    closed: true,
    tooLong: [['reason', 10_001]],
    outOfRange: [[{ reason: '' }, ['body', 'reason'], 'string_too_short']],
  },
  {
    name: 'POST /tasks/{id}/cancel',
    path: (s) => `/tasks/${s.open}/cancel`,
    required: [],
    wrongTypes: { reason: 1 },
    wrongTypeLocs: [['body', 'reason']],
    valid: { reason: 'r' },
    closed: true,
    tooLong: [['reason', 10_001]],
  },
  {
    name: 'POST /tasks/{id}/block',
    path: (s) => `/tasks/${s.claimed}/block`,
    required: ['reason'],
    wrongTypes: { reason: false },
    wrongTypeLocs: [['body', 'reason']],
    valid: { reason: 'r' },
    closed: true,
    tooLong: [['reason', 10_001]],
  },
  {
    name: 'POST /tasks/{id}/close',
    path: (s) => `/tasks/${s.done}/close`,
    required: [],
    wrongTypes: { reason: {} },
    wrongTypeLocs: [['body', 'reason']],
    valid: { reason: 'r' },
    closed: true,
    tooLong: [['reason', 10_001]],
  },
  {
    name: 'POST /a2a/message',
    path: () => '/a2a/message',
    required: ['sender', 'recipient', 'content', 'task_id'],
    wrongTypes: { sender: 1, recipient: true, content: {}, task_id: 5 },
    wrongTypeLocs: [
      ['body', 'sender'],
      ['body', 'recipient'],
      ['body', 'content'],
      ['body', 'task_id'],
    ],
    valid: { sender: 's', recipient: 'r', content: 'c', task_id: 'ffffffffffff' },
    closed: false,
    tooLong: [
      ['sender', 1001],
      ['recipient', 1001],
      ['content', 100_001],
      ['task_id', 65],
    ],
  },
  {
    name: 'POST /a2a/tasks/send',
    path: () => '/a2a/tasks/send',
    required: ['sender', 'message'],
    wrongTypes: { sender: 1, message: [], role: 2 },
    wrongTypeLocs: [
      ['body', 'sender'],
      ['body', 'message'],
      ['body', 'role'],
    ],
    valid: { sender: 's', message: 'm' },
    closed: false,
    tooLong: [
      ['sender', 1001],
      ['message', 100_001],
      ['role', 1001],
    ],
  },
  {
    name: 'POST /a2a/tasks/{id}/artifacts',
    path: (s) => `/a2a/tasks/${s.a2a}/artifacts`,
    required: ['name'],
    wrongTypes: { name: 1, data: 5, content_type: false },
    wrongTypeLocs: [
      ['body', 'name'],
      ['body', 'data'],
      ['body', 'content_type'],
    ],
    valid: { name: 'n' },
    closed: false,
    tooLong: [
      ['name', 1001],
      ['content_type', 256],
      ['data', 1_000_001],
    ],
  },
]

/** Malformed JSON and where Python's json.loads says it failed (FastAPI's loc `["body", pos]`). */
const MALFORMED: readonly (readonly [string, number])[] = [
  ['{"a": ', 6],
  ['{"a": 1,}', 8],
  ['{"a" 1}', 5],
  ['{"a": "😀"} x', 11],
  ['{a: 1}', 1],
]

const overflow = (loc: Loc): unknown => ({ detail: [{ loc, msg: OVERFLOW_MESSAGE, type: 'finite_number' }] })
const unsafeInteger = (loc: Loc): unknown => ({ detail: [{ loc, msg: UNSAFE_INTEGER_MESSAGE, type: 'int_parsing_size' }] })

/** JSON bodies with a number JSON.parse would silently change, and the answer that refuses them. */
const INEXACT_NUMBERS: readonly (readonly [string, (seed: Seed) => string, string, unknown])[] = [
  [
    'the reported body: 1e309 comes first',
    () => '/tasks',
    '{"title":"nums","metadata":{"inf":1e309,"big":9007199254740993,"negzero":-0,"tiny":1e-400}}',
    overflow(['body', 'metadata', 'inf']),
  ],
  ['2^53 + 1', () => '/tasks', '{"title":"nums","metadata":{"big":9007199254740993,"negzero":-0,"tiny":1e-400}}', unsafeInteger(['body', 'metadata', 'big'])],
  [
    '2^53, itself a double, but beyond the exact range',
    () => '/tasks',
    '{"title":"x","metadata":{"n":9007199254740992}}',
    unsafeInteger(['body', 'metadata', 'n']),
  ],
  ['-(2^53)', () => '/tasks', '{"title":"x","metadata":{"n":-9007199254740992}}', unsafeInteger(['body', 'metadata', 'n'])],
  ['-1e309', () => '/tasks', '{"title":"x","metadata":{"n":-1e309}}', overflow(['body', 'metadata', 'n'])],
  [
    'deep in arrays',
    () => '/tasks',
    '{"title":"x","metadata":{"list":[1,2,{"deep":[123456789012345678901234567890]}]}}',
    unsafeInteger(['body', 'metadata', 'list', 2, 'deep', 0]),
  ],
  ['a contract integer, before its range is checked', () => '/tasks', '{"title":"x","priority":9007199254740993}', unsafeInteger(['body', 'priority'])],
  ['progress percent 1e400', (s) => `/tasks/${s.claimed}/progress`, '{"message":"m","percent":1e400}', overflow(['body', 'percent'])],
  [
    'a field the send ignores',
    () => '/a2a/tasks/send',
    '{"sender":"peer-agent@globex","message":"Fix the flaky login test","extra":1e309}',
    overflow(['body', 'extra']),
  ],
  ['an artifact', (s) => `/a2a/tasks/${s.a2a}/artifacts`, '{"name":"n","size":18446744073709551616}', unsafeInteger(['body', 'size'])],
  ['a message', () => '/a2a/message', '{"sender":"s","recipient":"r","content":"c","task_id":"ffffffffffff","n":[-1e999]}', overflow(['body', 'n', 0])],
]

/** Every operation that takes parameters, with values that break them. */
interface ParamCase {
  readonly label: string
  readonly method: 'GET' | 'POST'
  readonly path: (seed: Seed) => string
  readonly body?: string
  readonly loc: Loc
  readonly type: string
}

const PARAM_CASES: readonly ParamCase[] = [
  { label: 'limit 0', method: 'GET', path: () => '/tasks?limit=0', loc: ['query', 'limit'], type: 'greater_than_equal' },
  { label: 'limit 501', method: 'GET', path: () => '/tasks?limit=501', loc: ['query', 'limit'], type: 'less_than_equal' },
  { label: 'limit not a number', method: 'GET', path: () => '/tasks?limit=ten', loc: ['query', 'limit'], type: 'type_error' },
  { label: 'limit a fraction', method: 'GET', path: () => '/tasks?limit=1.5', loc: ['query', 'limit'], type: 'type_error' },
  { label: 'limit given twice', method: 'GET', path: () => '/tasks?limit=1&limit=2', loc: ['query', 'limit'], type: 'type_error' },
  { label: 'limit in hexadecimal', method: 'GET', path: () => '/tasks?limit=0x3', loc: ['query', 'limit'], type: 'int_parsing' },
  { label: 'limit with a space', method: 'GET', path: () => '/tasks?limit=%203', loc: ['query', 'limit'], type: 'int_parsing' },
  { label: 'unknown status', method: 'GET', path: () => '/tasks?status=finished', loc: ['query', 'status'], type: 'enum' },
  { label: 'role 1001', method: 'GET', path: () => `/tasks?role=${'r'.repeat(1001)}`, loc: ['query', 'role'], type: 'string_too_long' },
  { label: 'cursor off-pattern', method: 'GET', path: () => '/tasks?cursor=ab%2Fc%21', loc: ['query', 'cursor'], type: 'string_pattern_mismatch' },
  { label: 'cursor with unencoded reserved characters', method: 'GET', path: () => '/tasks?cursor=!!', loc: ['query', 'cursor'], type: 'value_error' },
  { label: 'cursor 201', method: 'GET', path: () => `/tasks?cursor=${'c'.repeat(201)}`, loc: ['query', 'cursor'], type: 'string_too_long' },
  { label: 'cursor undecodable', method: 'GET', path: () => '/tasks?cursor=abc', loc: ['query', 'cursor'], type: 'value_error' },
  {
    label: 'cursor of the wrong shape',
    method: 'GET',
    path: () => `/tasks?cursor=${Buffer.from('{"created_at":1}').toString('base64url')}`,
    loc: ['query', 'cursor'],
    type: 'value_error',
  },
  { label: 'next: role 1001', method: 'GET', path: () => `/tasks/next/${'r'.repeat(1001)}`, loc: ['path', 'role'], type: 'string_too_long' },
  {
    label: 'next: agent_id 201',
    method: 'GET',
    path: () => `/tasks/next/backend?agent_id=${'a'.repeat(201)}`,
    loc: ['query', 'agent_id'],
    type: 'string_too_long',
  },
  { label: 'get: task_id 65', method: 'GET', path: () => `/tasks/${'a'.repeat(65)}`, loc: ['path', 'task_id'], type: 'string_too_long' },
  ...(['claim', 'progress', 'complete', 'fail', 'cancel', 'block', 'close'] as const).flatMap((route): ParamCase[] => {
    const body =
      route === 'progress' ? '{"message":"m"}' : route === 'complete' ? '{"result_summary":"s"}' : route === 'claim' ? '{"agent_id":"a"}' : '{"reason":"r"}'
    const target = (s: Seed): string => (route === 'progress' || route === 'block' ? s.claimed : route === 'close' ? s.done : s.open)
    return [
      {
        label: `${route}: task_id 65`,
        method: 'POST',
        path: () => `/tasks/${'a'.repeat(65)}/${route}`,
        body,
        loc: ['path', 'task_id'],
        type: 'string_too_long',
      },
      {
        label: `${route}: expected_version 0`,
        method: 'POST',
        path: (s) => `/tasks/${target(s)}/${route}?expected_version=0`,
        body,
        loc: ['query', 'expected_version'],
        type: 'greater_than_equal',
      },
      {
        label: `${route}: expected_version not a number`,
        method: 'POST',
        path: (s) => `/tasks/${target(s)}/${route}?expected_version=one`,
        body,
        loc: ['query', 'expected_version'],
        type: 'type_error',
      },
      {
        label: `${route}: expected_version a fraction`,
        method: 'POST',
        path: (s) => `/tasks/${target(s)}/${route}?expected_version=1.5`,
        body,
        loc: ['query', 'expected_version'],
        type: 'type_error',
      },
      // Not integers as FastAPI reads them, although JavaScript's Number() reads each as 1: refused, nothing claimed.
      ...['0x1', '0b1', '0o1', '%201', '1.', '.1e1', '1e0'].map(
        (text): ParamCase => ({
          label: `${route}: expected_version ${text}`,
          method: 'POST',
          path: (s) => `/tasks/${target(s)}/${route}?expected_version=${text}`,
          body,
          loc: ['query', 'expected_version'],
          type: 'int_parsing',
        }),
      ),
      // Coerced to a number, these would compare as 9007199254740992 and as Infinity.
      {
        label: `${route}: expected_version 2^53 + 1`,
        method: 'POST',
        path: (s) => `/tasks/${target(s)}/${route}?expected_version=9007199254740993`,
        body,
        loc: ['query', 'expected_version'],
        type: 'int_parsing_size',
      },
      {
        label: `${route}: expected_version 1e400`,
        method: 'POST',
        path: (s) => `/tasks/${target(s)}/${route}?expected_version=1e400`,
        body,
        loc: ['query', 'expected_version'],
        type: 'finite_number',
      },
    ]
  }),
]

for (const engine of testEngines()) {
  describe(`bad input (${engine})`, () => {
    let t: TestApp
    let seed: Seed

    beforeAll(async () => {
      t = await startTestApp({ engine })
      const post = async (path: string, body: unknown, status: number): Promise<Record<string, unknown>> => {
        const r = await rawRequest(t.url, { method: 'POST', path, body: JSON.stringify(body) })
        expect(r.status, path).toBe(status)
        return r.json as Record<string, unknown>
      }
      const open = String((await post('/tasks', { title: 'open target' }, 201))['id'])
      const claimed = String((await post('/tasks', { title: 'claimed target' }, 201))['id'])
      await post(`/tasks/${claimed}/claim`, { agent_id: 'w' }, 200)
      const done = String((await post('/tasks', { title: 'done target' }, 201))['id'])
      await post(`/tasks/${done}/complete`, { result_summary: 'ok' }, 200)
      const a2a = await post('/a2a/tasks/send', { sender: 'peer', message: 'seeded' }, 201)
      await post(`/a2a/tasks/${String(a2a['id'])}/artifacts`, { name: 'a.txt', data: 'x' }, 201)
      await post('/a2a/message', { sender: 'p', recipient: 'b', content: 'hi', task_id: String(a2a['bernstein_task_id']) }, 201)
      await post('/a2a/v0/tasks', { sender: { name: 'peer-seed', description: 'd' }, task: { id: 'r-1', message: 'seeded v0' } }, 202)
      seed = { open, claimed, done, a2a: String(a2a['id']) }
    })
    afterAll(async () => {
      await t?.close()
    })

    const snapshot = (): Promise<unknown> => stateSnapshot(t, seed.a2a)

    async function send(method: string, path: string, body?: string | Buffer, headers?: Record<string, string>): Promise<Raw> {
      const r = await rawRequest(t.url, { method, path, ...(body !== undefined && { body }), ...(headers && { headers }) })
      expect(r.status, `${method} ${path} must never be a 5xx: ${r.text.slice(0, 200)}`).toBeLessThan(500)
      return r
    }

    /** Sends a request that must be refused, and checks that it changed nothing. */
    async function refused(method: string, path: string, body?: string | Buffer, headers?: Record<string, string>): Promise<Raw> {
      const before = await snapshot()
      const r = await send(method, path, body, headers)
      expect(await snapshot()).toEqual(before)
      return r
    }

    function expectIssues(r: Raw, expected: readonly { loc: Loc; type: string }[]): void {
      expect(r.status, r.text.slice(0, 300)).toBe(422)
      const body = r.json as { detail: Issue[] }
      expect(Object.keys(body)).toEqual(['detail'])
      expect(Array.isArray(body.detail)).toBe(true)
      for (const issue of body.detail) {
        expect(Object.keys(issue).sort()).toEqual(['loc', 'msg', 'type'])
        expect(typeof issue.msg).toBe('string')
        expect(issue.msg.length).toBeGreaterThan(0)
      }
      const key = (i: { loc: Loc; type: string }): string => JSON.stringify([i.loc, i.type])
      expect(body.detail.map(key).sort()).toEqual(expected.map(key).sort())
    }

    for (const prefix of PREFIXES) {
      describe(`prefix '${prefix || '/'}'`, () => {
        describe.each(BODY_OPS)('$name', (op) => {
          const url = (): string => prefix + op.path(seed)

          it('wrong JSON types: 422 naming every field', async () => {
            expectIssues(
              await refused('POST', url(), JSON.stringify({ ...op.valid, ...op.wrongTypes })),
              op.wrongTypeLocs.map((loc) => ({ loc, type: 'type_error' })),
            )
          })

          it('a body that is not an object: 422 at ["body"]', async () => {
            for (const body of ['[]', '"text"', '42', 'null', 'true']) {
              expectIssues(await refused('POST', url(), body), [{ loc: ['body'], type: 'type_error' }])
            }
          })

          if (op.required.length > 0)
            it('missing required fields: 422 `Field required` for each', async () => {
              const r = await refused('POST', url(), '{}')
              expectIssues(
                r,
                op.required.map((f) => ({ loc: ['body', f], type: 'missing' })),
              )
              for (const issue of (r.json as { detail: Issue[] }).detail) expect(issue.msg).toBe('Field required')
              for (const field of op.required) {
                const { [field]: _dropped, ...rest } = op.valid
                expectIssues(await refused('POST', url(), JSON.stringify(rest)), [{ loc: ['body', field], type: 'missing' }])
              }
            })

          if (op.closed)
            it('an extra field where additionalProperties is false: 422 extra_forbidden', async () => {
              expectIssues(await refused('POST', url(), JSON.stringify({ ...op.valid, bogus: 1 })), [{ loc: ['body', 'bogus'], type: 'extra_forbidden' }])
              expectIssues(await refused('POST', url(), JSON.stringify({ ...op.valid, id: 'ffffffffffff', status: 'done' })), [
                { loc: ['body', 'id'], type: 'extra_forbidden' },
                { loc: ['body', 'status'], type: 'extra_forbidden' },
              ])
            })

          it('over-long strings: 422 string_too_long', async () => {
            for (const [field, length] of op.tooLong) {
              expectIssues(await refused('POST', url(), JSON.stringify({ ...op.valid, [field]: 'x'.repeat(length) })), [
                { loc: ['body', field], type: 'string_too_long' },
              ])
            }
          })

          if (op.outOfRange !== undefined)
            it('out-of-range values: 422 with the constraint’s type', async () => {
              for (const [body, loc, type] of op.outOfRange ?? []) {
                expectIssues(await refused('POST', url(), JSON.stringify(body)), [{ loc, type }])
              }
            })

          it('malformed JSON: 422 json_invalid at the position Python reports', async () => {
            for (const [text, pos] of MALFORMED) {
              const r = await refused('POST', url(), text)
              expect(r.status).toBe(422)
              expect(r.json).toEqual({ detail: [{ loc: ['body', pos], msg: 'JSON decode error', type: 'json_invalid' }] })
            }
          })

          it('a body that is not JSON: 415 {detail}', async () => {
            for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/json; charset=latin1']) {
              const r = await refused('POST', url(), JSON.stringify(op.valid), { 'content-type': contentType })
              expect(r.status, contentType).toBe(415)
              expect(Object.keys(r.json as object)).toEqual(['detail'])
              expect(typeof (r.json as { detail: unknown }).detail).toBe('string')
            }
          })

          it('a body over 1 MiB: 413 with the byte count; exactly 1 MiB is not refused for size', async () => {
            // The padding goes into a field with a maxLength, so a body that passes the size check is still refused.
            const field = op.tooLong[0]?.[0] ?? 'missing'
            const pad = (bytes: number, ch: string): string => {
              const base = JSON.stringify({ ...op.valid, [field]: '' })
              const per = Buffer.byteLength(ch)
              return JSON.stringify({ ...op.valid, [field]: ch.repeat(Math.floor((bytes - Buffer.byteLength(base)) / per)) })
            }
            const over = pad(LIMIT + 1, 'a')
            expect(Buffer.byteLength(over)).toBe(LIMIT + 1)
            const r = await refused('POST', url(), over)
            expect(r.status).toBe(413)
            expect(r.json).toEqual({ detail: `Request body ${LIMIT + 1} bytes exceeds ${LIMIT}-byte limit` })
            // Bytes, not characters: 700 000 two-byte characters are 1.4 MB.
            const wide = pad(1_400_000, 'λ')
            const rw = await refused('POST', url(), wide)
            expect(rw.status).toBe(413)
            expect(rw.json).toEqual({ detail: `Request body ${Buffer.byteLength(wide)} bytes exceeds ${LIMIT}-byte limit` })
            const exact = pad(LIMIT, 'a')
            expect(Buffer.byteLength(exact)).toBe(LIMIT)
            expectIssues(await refused('POST', url(), exact), [{ loc: ['body', field], type: 'string_too_long' }])
          })
        })

        it.each(PARAM_CASES)('parameter $label: 422 at $loc', async (c) => {
          const r = await refused(c.method, prefix + c.path(seed), c.body)
          expectIssues(r, [{ loc: c.loc, type: c.type }])
        })

        it('metadata nested deeper than 100 levels: 422 at ["body","metadata"], never a stack overflow', async () => {
          for (const depth of [101, 5000, 50_000]) {
            const body = '{"title":"deep","metadata":' + '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1) + '}'
            const r = await refused('POST', `${prefix}/tasks`, body)
            expect(r.json, String(depth)).toEqual({
              detail: [{ loc: ['body', 'metadata'], msg: 'Metadata must not nest deeper than 100 levels', type: 'value_error' }],
            })
          }
        })

        it('a NUL character is refused with 422 naming the input on both engines (the contract says so), and nothing is stored', async () => {
          const nul = (loc: Loc): unknown => ({ detail: [{ loc, msg: 'String must not contain the NUL character (\\u0000)', type: 'value_error' }] })
          const writes: readonly (readonly [string, Record<string, unknown>, Loc])[] = [
            ['/tasks', { title: 'a\u0000b' }, ['body', 'title']],
            ['/tasks', { title: 't', description: 'fine', role: 'r\u0000' }, ['body', 'role']],
            [`/tasks/${seed.open}/fail`, { reason: 'r\u0000' }, ['body', 'reason']],
            ['/a2a/tasks/send', { sender: 's\u0000', message: 'm' }, ['body', 'sender']],
            [`/a2a/tasks/${seed.a2a}/artifacts`, { name: 'n', data: 'd\u0000' }, ['body', 'data']],
          ]
          const reads: readonly (readonly [string, Loc])[] = [
            ['/tasks/abc%00def', ['path', 'task_id']],
            ['/tasks?role=a%00b', ['query', 'role']],
            ['/tasks/next/a%00b', ['path', 'role']],
            ['/a2a/tasks/x%00y', ['path', 'a2a_task_id']],
          ]
          for (const [path, body, loc] of writes) expect((await refused('POST', prefix + path, JSON.stringify(body))).json).toEqual(nul(loc))
          for (const [path, loc] of reads) expect((await refused('GET', prefix + path)).json).toEqual(nul(loc))
        })

        it.each(INEXACT_NUMBERS)('a number JSON.parse would change (%s): 422 at the number, nothing stored', async (_label, path, body, json) => {
          const r = await refused('POST', prefix + path(seed), body)
          expect({ status: r.status, json: r.json }).toEqual({ status: 422, json })
        })

        it('numbers a double holds as sent, or as Python reads them, are stored; numbers in strings and keys are text', async () => {
          const body =
            '{"title":"nums","metadata":{"max":9007199254740991,"min":-9007199254740991,"big_float":1.5e308,"max_float":1.7976931348623157e308,' +
            '"in_string":"9007199254740993","9007199254740993":"1e309","float_1e20":1e20,"negzero":-0,"negzero_float":-0.0,"tiny":1e-400}}'
          const created = await send('POST', `${prefix}/tasks`, body)
          expect(created.status, created.text).toBe(201)
          const id = String((created.json as { id: string }).id)
          for (const r of [created, await send('GET', `${prefix}/tasks/${id}`)]) {
            // As text: the integers exactly, -0 and an underflow as 0 (Python reads `-0` as the int 0, 1e-400 as 0.0).
            expect(r.text).toContain(
              '"metadata":{"max":9007199254740991,"min":-9007199254740991,"big_float":1.5e+308,"max_float":1.7976931348623157e+308,' +
                '"in_string":"9007199254740993","9007199254740993":"1e309","float_1e20":100000000000000000000,"negzero":0,"negzero_float":0,"tiny":0}',
            )
          }
        })

        it('any integer in metadata is stored exactly when it lies within ±(2^53 - 1), and refused otherwise', async () => {
          const limit = BigInt(Number.MAX_SAFE_INTEGER)
          const integers = fc.oneof(
            fc.bigInt({ min: limit - 5n, max: limit + 5n }),
            fc.bigInt({ min: -limit - 5n, max: -limit + 5n }),
            fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
          )
          await fc.assert(
            fc.asyncProperty(integers, async (n) => {
              const body = `{"title":"n","metadata":{"n":${n}}}`
              if (n > limit || n < -limit) {
                expect((await refused('POST', `${prefix}/tasks`, body)).json).toEqual(unsafeInteger(['body', 'metadata', 'n']))
              } else {
                const r = await send('POST', `${prefix}/tasks`, body)
                expect(r.status).toBe(201)
                expect(r.text).toContain(`"metadata":{"n":${n}}`)
              }
            }),
            fuzzSettings(20),
          )
        })

        it('POST /a2a/v0/tasks is not checked here: its body is read losslessly, as Bernstein reads it', async () => {
          const body = `{"sender":{"name":"peer-big-${prefix.length}","description":"d","n":9007199254740993},"task":{"id":"big-${prefix.length}","message":"m"},"x":[1e309]}`
          const r = await send('POST', `${prefix}/a2a/v0/tasks`, body)
          expect(r.status, r.text).toBe(202)
        })

        it('expected_version is compared as sent: within ±(2^53 - 1) a 409 naming it exactly, beyond it a 422', async () => {
          const r = await refused('POST', `${prefix}/tasks/${seed.open}/claim?expected_version=9007199254740993`, '{}')
          expect(r.json).toEqual(unsafeInteger(['query', 'expected_version']))
          const conflict = await refused('POST', `${prefix}/tasks/${seed.open}/claim?expected_version=9007199254740991`, '{}')
          expect(conflict.status).toBe(409)
          expect((conflict.json as { detail: string }).detail).toMatch(/: expected 9007199254740991, current \d+$/)
        })

        it('an unknown cursor is refused with its own text', async () => {
          const r = await refused('GET', `${prefix}/tasks?cursor=abc`)
          expect(r.json).toEqual({ detail: [{ loc: ['query', 'cursor'], msg: 'Invalid pagination cursor', type: 'value_error' }] })
        })

        it('unknown ids: 404 with Bernstein’s texts', async () => {
          const id = '0123456789ab'
          const cases: readonly (readonly [string, string, string | undefined, string])[] = [
            ['GET', `/tasks/${id}`, undefined, `Task '${id}' not found`],
            ['POST', `/tasks/${id}/claim`, '{}', `Task '${id}' not found`],
            ['POST', `/tasks/${id}/progress`, '{"message":"m"}', `Task '${id}' not found`],
            ['POST', `/tasks/${id}/complete`, '{"result_summary":"s"}', `Task '${id}' not found`],
            ['POST', `/tasks/${id}/fail`, '{"reason":"r"}', `Task '${id}' not found`],
            ['POST', `/tasks/${id}/cancel`, '{}', `Task '${id}' not found`],
            ['POST', `/tasks/${id}/block`, '{"reason":"r"}', `Task '${id}' not found`],
            ['POST', `/tasks/${id}/close`, '{}', `Task '${id}' not found`],
            ['GET', `/a2a/tasks/${id}`, undefined, `A2A task '${id}' not found`],
            ['POST', `/a2a/tasks/${id}/artifacts`, '{"name":"n"}', `A2A task '${id}' not found`],
            ['POST', '/a2a/message', JSON.stringify({ sender: 's', recipient: 'r', content: 'c', task_id: id }), `Task '${id}' not found`],
          ]
          for (const [method, path, body, detail] of cases) {
            const r = await refused(method, prefix + path, body)
            expect(r.status, `${method} ${path}`).toBe(404)
            expect(r.json).toEqual({ detail })
          }
          // A2A ids are not constrained by the contract: a long one is simply not found.
          const long = 'z'.repeat(2000)
          const r = await refused('GET', `${prefix}/a2a/tasks/${long}`)
          expect(r.status).toBe(404)
          expect(r.json).toEqual({ detail: `A2A task '${long}' not found` })
        })

        it('unknown paths: 404 {"detail":"Not Found"}', async () => {
          for (const [method, path] of [
            ['GET', '/nope'],
            ['POST', '/nope'],
            ['DELETE', '/nope'],
            ['POST', `/tasks/${seed.open}/reopen`],
            ['GET', `/tasks/${seed.open}/history`],
            ['GET', '/a2a/tasks'],
            ['GET', '/a2a'],
            ['POST', '/a2a/v2/tasks'],
          ] as const) {
            const r = await refused(method, prefix + path, method === 'GET' ? undefined : '{}')
            expect(r.status, `${method} ${path}`).toBe(404)
            expect(r.json).toEqual({ detail: 'Not Found' })
          }
        })

        it('wrong method: 405 with an Allow header listing exactly the path’s methods', async () => {
          const cases: readonly (readonly [string, string, readonly string[]])[] = [
            ['DELETE', '/tasks', ['GET', 'POST']],
            ['PUT', '/tasks', ['GET', 'POST']],
            ['PATCH', `/tasks/${seed.open}`, ['GET']],
            ['DELETE', `/tasks/${seed.open}`, ['GET']],
            ['POST', `/tasks/${seed.open}`, ['GET']],
            ['GET', `/tasks/${seed.open}/claim`, ['POST']],
            ['PUT', `/tasks/${seed.open}/close`, ['POST']],
            ['POST', '/tasks/next/backend', ['GET']],
            ['POST', '/a2a/agent-card', ['GET']],
            ['DELETE', '/a2a/agents', ['GET']],
            ['GET', '/a2a/message', ['POST']],
            ['PUT', '/a2a/tasks/send', ['POST']],
            ['DELETE', `/a2a/tasks/${seed.a2a}`, ['GET']],
            ['GET', `/a2a/tasks/${seed.a2a}/artifacts`, ['POST']],
            ['GET', '/a2a/v0/tasks', ['POST']],
            ['HEAD', '/tasks', ['GET', 'POST']],
          ]
          for (const [method, path, allowed] of cases) {
            const r = await refused(method, prefix + path, method === 'GET' || method === 'HEAD' ? undefined : '{}')
            expect(r.status, `${method} ${path}`).toBe(405)
            if (method !== 'HEAD') expect(r.json).toEqual({ detail: 'Method Not Allowed' })
            const allow = (r.headers.get('allow') ?? '').split(',').map((m) => m.trim())
            expect(allow.sort(), `${method} ${path}`).toEqual([...allowed].sort())
          }
        })

        it('POST /a2a/v0/tasks: malformed JSON is a 400 (hand-validated), an oversized body a 413', async () => {
          const r = await refused('POST', `${prefix}/a2a/v0/tasks`, '{"sender": ')
          expect(r.status).toBe(400)
          expect(r.json).toEqual({ detail: 'Invalid JSON body: Expecting value: line 1 column 12 (char 11)' })
          const big = JSON.stringify({ sender: { name: 'p', description: 'd' }, task: { id: 'big', message: 'm'.repeat(LIMIT) } })
          const rb = await refused('POST', `${prefix}/a2a/v0/tasks`, big)
          expect(rb.status).toBe(413)
          expect(rb.json).toEqual({ detail: `Request body ${Buffer.byteLength(big)} bytes exceeds ${LIMIT}-byte limit` })
        })
      })
    }
  })
}
