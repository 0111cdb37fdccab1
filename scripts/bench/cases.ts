/**
 * The load cases and how each system is driven in them. A case runs its subjects interleaved (A, B, C, A, B, C, …)
 * for the same connections and duration, and keeps the median of each subject's rounds.
 */
import type { AutocannonRequest } from 'autocannon'
import { type LoadResult, assertClean, runLoad } from './load.js'
import type { RunningProcess } from './proc.js'
import { median } from './stats.js'
import { AUTH_HEADERS } from './systems.js'

export interface Settings {
  readonly connections: number
  readonly duration: number
  readonly warmup: number
  readonly rounds: number
}

/** What one subject of a case does: its process, its request pipeline, and an optional per-round preparation. */
export interface Subject {
  readonly label: string
  readonly proc: RunningProcess
  /**
   * Replicas of `proc` (itself included) that share the load, as behind a load balancer: the connections are split
   * between them, each runs its share at once, and the figures are their sum (p50 and p99 the worst replica's).
   */
  readonly replicas?: readonly RunningProcess[]
  readonly headers?: Readonly<Record<string, string>>
  /** Built fresh for every run (pipelines may carry state, such as a cycling index). */
  readonly requests: () => AutocannonRequest[]
  /** Request count instead of a duration (the lifecycle case, which consumes prepared tasks). */
  readonly amount?: number
  /** Runs before every measured run (and the warm-up). */
  readonly prepare?: () => Promise<void>
  /** Answers that came back 2xx but wrong (JSON-RPC errors travel in 200s); must stay 0. */
  readonly failures?: () => number
  /** Requests per unit of work (2 for claim + complete). */
  readonly requestsPerOp?: number
}

export interface SubjectSummary {
  readonly label: string
  readonly system: string
  /** Operations per second (requests per second divided by requests per operation), median of the rounds. */
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly peakRssMb: number
  readonly readyMs: number
  /** Server CPU time per operation in µs (median of the rounds): what a request costs, whatever else runs. */
  readonly cpuUsPerOp: number
  readonly rounds: readonly (LoadResult & { readonly cpuUsPerOp: number })[]
}

export interface CaseSummary {
  readonly name: string
  readonly title: string
  readonly subjects: readonly SubjectSummary[]
}

/** The processes a subject's load goes to (one, or its replicas). */
const targetsOf = (subject: Subject): readonly RunningProcess[] => (subject.replicas && subject.replicas.length > 0 ? subject.replicas : [subject.proc])

/** Splits `total` into `parts` whole shares as even as possible (the first ones get the remainder). */
export function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0))
}

/** One run's figures over several processes run at once: throughputs and counts add up, latencies are the worst. */
export function combine(results: readonly LoadResult[]): LoadResult {
  const sum = (f: (r: LoadResult) => number): number => results.reduce((a, r) => a + f(r), 0)
  return {
    rps: sum((r) => r.rps),
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    total: sum((r) => r.total),
    durationS: Math.max(...results.map((r) => r.durationS)),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
  }
}

/**
 * The warm-up runs: one per subject and process, each with all the connections, so every process gets the whole
 * warm-up on its own and replicas start their rounds as warm as a single node (in service they would be). Split
 * between three replicas, as the measured runs split the load, it left each a third of the one replica's warm-up.
 * Subjects sharing a process each warm it again: their requests take other paths (GET and v1 GetTask).
 */
export function warmups(subjects: readonly Subject[]): Subject[] {
  return subjects.flatMap((subject) => targetsOf(subject).map((proc) => ({ ...subject, proc, replicas: [proc] })))
}

async function runOnce(subject: Subject, settings: Settings, duration: number, warmup = false): Promise<LoadResult & { cpuUsPerOp: number }> {
  await subject.prepare?.()
  const before = subject.failures?.() ?? 0
  const procs = targetsOf(subject)
  const cpuOf = (): number => procs.reduce((a, p) => a + p.cpuMs(), 0)
  const cpuBefore = cpuOf()
  const connections = split(settings.connections, procs.length)
  const amounts = subject.amount === undefined ? undefined : split(subject.amount, procs.length)
  const result = combine(
    await Promise.all(
      procs.map((proc, i) =>
        runLoad({
          url: proc.url,
          connections: connections[i] as number,
          duration,
          ...(amounts !== undefined && { amount: amounts[i] as number }),
          ...(subject.headers !== undefined && { headers: subject.headers }),
          requests: subject.requests(),
        }),
      ),
    ),
  )
  const cpuUsPerOp = ((cpuOf() - cpuBefore) * 1000) / (result.total / (subject.requestsPerOp ?? 1))
  assertClean(`${subject.label} (${subject.proc.name})`, result, warmup)
  const failed = (subject.failures?.() ?? 0) - before
  if (failed > 0) throw new Error(`${subject.label} (${subject.proc.name}): ${failed} answers were errors`)
  return { ...result, cpuUsPerOp }
}

export async function runCase(
  name: string,
  title: string,
  subjects: readonly Subject[],
  settings: Settings,
  log: (line: string) => void,
): Promise<CaseSummary> {
  log(`\n## ${title}`)
  if (settings.warmup > 0) for (const warmup of warmups(subjects)) await runOnce(warmup, settings, settings.warmup, true)
  const rounds = new Map<Subject, (LoadResult & { cpuUsPerOp: number })[]>(subjects.map((s) => [s, []]))
  for (let r = 0; r < settings.rounds; r++) {
    for (const subject of subjects) {
      const result = await runOnce(subject, settings, settings.duration)
      rounds.get(subject)?.push(result)
      const per = subject.requestsPerOp ?? 1
      log(
        `  round ${r + 1} ${subject.label.padEnd(34)} ${(result.rps / per).toFixed(0).padStart(7)}/s  p50 ${result.p50.toFixed(1)} ms  p99 ${result.p99.toFixed(1)} ms  server CPU ${result.cpuUsPerOp.toFixed(0)} µs/op`,
      )
    }
  }
  return {
    name,
    title,
    subjects: subjects.map((subject) => {
      const results = rounds.get(subject) ?? []
      const per = subject.requestsPerOp ?? 1
      return {
        label: subject.label,
        system: subject.proc.name,
        rps: median(results.map((x) => x.rps)) / per,
        p50: median(results.map((x) => x.p50)),
        p99: median(results.map((x) => x.p99)),
        peakRssMb: Math.max(...targetsOf(subject).map((p) => p.peakRssMb())),
        readyMs: subject.proc.readyMs,
        cpuUsPerOp: median(results.map((x) => x.cpuUsPerOp)),
        rounds: results,
      }
    }),
  }
}

// ---- request pipelines --------------------------------------------------------------------------------------

const JSON_HEADERS = { 'content-type': 'application/json' }
export const SEND_BODY = JSON.stringify({ sender: 'peer-agent@globex', message: 'Fix the flaky login test' })

/** POST /a2a/tasks/send, the same body to bernstein-a2a and to bare Express. */
export function sendRequests(auth: boolean): () => AutocannonRequest[] {
  return () => [{ method: 'POST', path: '/a2a/tasks/send', headers: { ...JSON_HEADERS, ...(auth ? AUTH_HEADERS : {}) }, body: SEND_BODY }]
}

/** GET /a2a/tasks/{id}, cycling through `ids`. */
export function getRequests(ids: readonly string[], auth: boolean): () => AutocannonRequest[] {
  if (ids.length === 0) throw new Error('no ids to read')
  return () => {
    let i = 0
    return [
      {
        method: 'GET',
        headers: auth ? { ...AUTH_HEADERS } : {},
        setupRequest: (request) => ({ ...request, path: `/a2a/tasks/${ids[i++ % ids.length] as string}` }),
      },
    ]
  }
}

/**
 * A2A v1.0 JSON-RPC, against the A2A SDK (at `/`) or against bernstein-a2a's binding (at `/a2a/v1`, with its
 * token); answers that carry `error` instead of `result` are counted in `failures`, and so are those `accept`
 * refuses (a SendMessage whose task did not complete, for example).
 */
export class JsonRpc {
  #failures = 0
  #seq = 0
  readonly #path: string
  readonly #headers: Readonly<Record<string, string>>
  readonly #accept: (body: string) => boolean
  /** `messageId` of each SendMessage: this prefix and a sequence number (`tck-complete-task-…` selects the conformance agent's behaviour). */
  readonly #messagePrefix: string

  constructor(options: { path?: string; headers?: Readonly<Record<string, string>>; messagePrefix?: string; accept?: (body: string) => boolean } = {}) {
    this.#path = options.path ?? '/'
    this.#headers = { ...JSON_HEADERS, 'a2a-version': '1.0', ...options.headers }
    this.#messagePrefix = options.messagePrefix ?? 'm'
    this.#accept = options.accept ?? (() => true)
  }

  failures = (): number => this.#failures

  #check = (_status: number, body: string): void => {
    if (!body.startsWith('{"jsonrpc":"2.0"') || !body.includes('"result":') || !this.#accept(body)) this.#failures++
  }

  /** SendMessage (v1.0), a fresh messageId each time. */
  sendMessage(): () => AutocannonRequest[] {
    return () => [
      {
        method: 'POST',
        path: this.#path,
        headers: this.#headers,
        setupRequest: (request) => ({ ...request, body: sendMessageBody(`${this.#messagePrefix}-${++this.#seq}`) }),
        onResponse: this.#check,
      },
    ]
  }

  /** GetTask (v1.0) cycling through `ids`. */
  getTask(ids: readonly string[]): () => AutocannonRequest[] {
    return () => {
      let i = 0
      return [
        {
          method: 'POST',
          path: this.#path,
          headers: this.#headers,
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ jsonrpc: '2.0', id: ++this.#seq, method: 'GetTask', params: { id: ids[i++ % ids.length] } }),
          }),
          onResponse: this.#check,
        },
      ]
    }
  }
}

export function sendMessageBody(messageId: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: messageId,
    method: 'SendMessage',
    params: { message: { messageId, role: 'ROLE_USER', parts: [{ text: 'Fix the flaky login test' }] } },
  })
}

/** Creates `count` resources with one POST each (through autocannon) and returns what `idOf` extracts from the answers. */
export async function createMany(
  url: string,
  count: number,
  request: AutocannonRequest,
  idOf: (body: string) => string | undefined,
  connections: number,
): Promise<string[]> {
  const ids: string[] = []
  const result = await runLoad({
    url,
    connections: Math.min(connections, count),
    duration: 1,
    amount: count,
    requests: [
      {
        ...request,
        onResponse: (status, body) => {
          const id = status < 300 ? idOf(body) : undefined
          if (id !== undefined) ids.push(id)
        },
      },
    ],
  })
  assertClean(`create ${count} at ${url}`, result)
  if (ids.length < count) throw new Error(`created ${ids.length} of ${count} at ${url}`)
  return ids
}

/**
 * Claim-next then complete, per connection: GET /tasks/next/{role} then POST /tasks/{id}/complete with the id it
 * got; a 204 (nothing left) restarts the pipeline instead of completing nothing.
 */
export function lifecycleRequests(role: string): () => AutocannonRequest[] {
  return () => [
    {
      method: 'GET',
      path: `/tasks/next/${role}`,
      headers: { ...AUTH_HEADERS },
      onResponse: (status, body, context) => {
        context['id'] = status === 200 ? (JSON.parse(body) as { id: string }).id : undefined
      },
    },
    {
      method: 'POST',
      headers: { ...AUTH_HEADERS, ...JSON_HEADERS },
      body: JSON.stringify({ result_summary: 'fixed the race in login()' }),
      setupRequest: (request, context) => {
        const id = context['id']
        return typeof id === 'string' ? { ...request, path: `/tasks/${id}/complete` } : null
      },
    },
  ]
}

export const TASK_CREATE = (role: string): AutocannonRequest => ({
  method: 'POST',
  path: '/tasks',
  headers: { ...AUTH_HEADERS, ...JSON_HEADERS },
  body: JSON.stringify({ title: 'Fix the flaky login test', description: 'reproduce, fix, add a test', role, priority: 2 }),
})

export const idField = (body: string): string | undefined => (JSON.parse(body) as { id?: string }).id
export const sdkTaskId = (body: string): string | undefined => (JSON.parse(body) as { result?: { task?: { id?: string } } }).result?.task?.id
