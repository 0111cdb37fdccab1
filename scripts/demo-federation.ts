/**
 * `npm run demo:federation [-- --quick]`: federation between two organisations, on this machine, in one command.
 *
 * Starts org A's and org B's nodes as separate processes (ports of their own choosing, a temporary data directory
 * each, SQLite), pins them to each other by their capability-card key fingerprints, delegates a task from A to B
 * with the CLI, completes it on B through B's task API, lets A's follower settle it, and shows the outcome three
 * ways: A's federation ledger, B's completion receipt verified offline against B's published key, and the lineage
 * (both tracker-audit chains verified, and B's boundary entry bound to the envelope A sent). Both nodes are stopped
 * and the temporary directory removed at the end, on a failure and on Ctrl-C. Exit 0 only when every check passed.
 *
 * `--quick` (what CI runs) leaves out the two refusals the full run also shows (B refusing an unpinned sender, A
 * refusing a peer under the wrong pin) and the tampered-receipt check.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { keyFingerprint } from '../src/crypto/fingerprint.js'
import { CheckFailed, Narrator } from './demo/narrator.js'
import { type CliEntry, type CliRun, type RunningNode, cliEntry, runCli, startNode, stopAll } from './demo/processes.js'

const quick = process.argv.slice(2).includes('--quick')
const unknown = process.argv.slice(2).filter((arg) => arg !== '--quick')
if (unknown.length > 0) {
  process.stderr.write(`usage: npm run demo:federation [-- --quick]   (unknown: ${unknown.join(' ')})\n`)
  process.exit(2)
}

const say = new Narrator()
const startedAt = performance.now()
const work = mkdtempSync(join(tmpdir(), 'bernstein-demo-'))
const files = join(work, 'files')
mkdirSync(files)
say.alias(work, '$DEMO')

interface Org {
  readonly name: string
  readonly label: string
  readonly token: string
  /** The node's variables, as `serve` gets them. */
  readonly env: Record<string, string>
  node?: RunningNode
  fingerprint?: string
}

function org(name: string, label: string, tokenVar: string): Org {
  const token = randomBytes(24).toString('hex')
  say.alias(token, tokenVar)
  const env = {
    BERNSTEIN_HOST: '127.0.0.1',
    BERNSTEIN_PORT: '0',
    BERNSTEIN_DATA_DIR: join(work, name),
    BERNSTEIN_AUTH_TOKEN: token,
    BERNSTEIN_A2A_ISSUER: name,
    // Throwaway nodes: a commit survives a crash of the process, not of the machine, and the demo runs faster.
    BERNSTEIN_SQLITE_SYNCHRONOUS: 'normal',
    BERNSTEIN_LOG_LEVEL: 'warn',
  }
  return { name, label, token, env }
}

const a = org('org-a', 'org A', '$TOKEN_A')
const b = org('org-b', 'org B', '$TOKEN_B')
// A's server follows its delegations (every 200 ms here, 5 s by default) and needs B's token for that.
Object.assign(a.env, { BERNSTEIN_PEER_TOKEN: b.token, BERNSTEIN_FEDERATION_POLL_MS: '200' })
Object.assign(b.env, { BERNSTEIN_FEDERATION_POLL_MS: '0' })

const entry: CliEntry = cliEntry()

/** What a CLI command run as `o` gets: its node's variables and, as the server has no fixed port, its URL. */
function cliEnv(o: Org): Record<string, string> {
  return { ...o.env, BERNSTEIN_PUBLIC_BASE_URL: url(o) }
}

function url(o: Org): string {
  if (!o.node) throw new Error(`${o.label} is not running`)
  return o.node.url
}

async function cli(o: Org, args: readonly string[]): Promise<CliRun> {
  say.command(['bernstein-a2a', ...args])
  return runCli(entry, args, cliEnv(o))
}

/** A CLI command started now and shown (command, then result) when its turn in the story comes. */
interface Launched {
  readonly args: readonly string[]
  readonly run: Promise<CliRun>
}

function launch(o: Org, args: readonly string[]): Launched {
  const run = runCli(entry, args, cliEnv(o))
  // Awaited later, in order; a failure before then must not surface as an unhandled rejection.
  run.catch(() => undefined)
  return { args, run }
}

function shown(launched: Launched): Promise<CliRun> {
  say.command(['bernstein-a2a', ...launched.args])
  return launched.run
}

function parseJson(run: CliRun): Record<string, unknown> {
  try {
    return JSON.parse(run.stdout) as Record<string, unknown>
  } catch {
    throw new CheckFailed(`the command printed no JSON (exit ${run.code}): ${(run.stdout + run.stderr).trim()}`)
  }
}

interface Answer {
  readonly status: number
  readonly text: string
  readonly json: Record<string, unknown>
}

/** One HTTP call to a node, with its operator token unless `token` is null. */
async function call(o: Org, method: string, path: string, token: string | null, body?: unknown): Promise<Answer> {
  const send = (): Promise<Response> =>
    fetch(`${url(o)}${path}`, {
      method,
      headers: {
        accept: 'application/json',
        ...(token !== null && { authorization: `Bearer ${token}` }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    })
  let response: Response
  try {
    response = await send()
  } catch (error) {
    // A read may meet a kept-alive connection the node closed meanwhile (a slow machine): it is asked once more.
    if (method !== 'GET') throw error
    response = await send()
  }
  const text = await response.text()
  let json: Record<string, unknown> = {}
  try {
    json = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>)
  } catch {
    // Not JSON: the caller looks at the status and the text.
  }
  return { status: response.status, text, json }
}

const str = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value))
const short = (hash: string): string => `${hash.slice(0, 19)}…`
const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/** Starts `o`'s node, showing the variables in `displayed` (the ones worth reading) on the command line. */
async function startOrg(o: Org, displayed: Record<string, string>): Promise<void> {
  say.command(['bernstein-a2a', 'serve'], displayed)
  const t0 = performance.now()
  o.node = await startNode(entry, o.env)
  say.check(true, `${o.label} is listening on ${o.node.url} and ready (GET /health/ready -> 200) after ${seconds(performance.now() - t0)}`)
  const card = await call(o, 'GET', '/.well-known/a2a-capability-card.json', null)
  const body = (card.json['card'] ?? {}) as { issuer?: string; policies?: unknown; public_key_pem?: string }
  // What operators pin: the SHA-256 of the card's raw Ed25519 key, as the CLI computes it.
  o.fingerprint = keyFingerprint(body.public_key_pem ?? '')
  say.http(
    'GET',
    `${o.node.url}/.well-known/a2a-capability-card.json`,
    'public',
    `${card.status}, issuer ${str(body.issuer)}, policies ${JSON.stringify(body.policies)}`,
  )
  say.check(
    card.status === 200 && body.issuer === o.name,
    `${o.label}'s capability-card key fingerprint: ${o.fingerprint}`,
    `status ${card.status}, issuer ${str(body.issuer)}`,
  )
}

/** Polls A's task until its follower has settled it. */
async function waitForSettled(taskId: string, timeoutMs: number): Promise<Answer> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const task = await call(a, 'GET', `/tasks/${taskId}`, a.token)
    if (task.json['status'] === 'done' || task.json['status'] === 'failed' || Date.now() > deadline) return task
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

interface ChainEntry {
  readonly line: string
  readonly entry: {
    tracker_name: string
    action: string
    actor: { session_id: string }
    entry_hash: string
    output_blob_hash: string
    etag_after: string | null
  }
}

interface Chain {
  readonly status: number
  readonly ticketId: string
  readonly page: readonly ChainEntry[]
}

async function chainOf(o: Org, ticketId: string): Promise<Chain> {
  const answer = await call(o, 'GET', `/lineage/tracker-audit?ticket_id=${encodeURIComponent(ticketId)}&limit=100`, o.token)
  const entries = (answer.json['entries'] ?? []) as { line: string }[]
  return { status: answer.status, ticketId, page: entries.map((e) => ({ line: e.line, entry: JSON.parse(e.line) as ChainEntry['entry'] })) }
}

function showChain(o: Org, chain: Chain): void {
  say.http(
    'GET',
    `/lineage/tracker-audit?ticket_id=${chain.ticketId}`,
    `${o.label}, operator token`,
    `${chain.status}, ${plural(chain.page.length, 'entry', 'entries')}`,
  )
  for (const [i, { entry: e }] of chain.page.entries()) {
    say.note(`${i + 1}. ${e.tracker_name} ${e.action} by ${e.actor.session_id}${e.etag_after ? ` -> ${e.etag_after}` : ''}  ${short(e.entry_hash)}`)
  }
}

async function verifyChain(o: Org): Promise<void> {
  const verified = await call(o, 'GET', '/lineage/tracker-audit/verify', o.token)
  say.http('GET', '/lineage/tracker-audit/verify', `${o.label}`, `${verified.status}, ${verified.text}`)
  say.check(
    verified.status === 200 && verified.json['ok'] === true,
    `${o.label}'s whole chain verifies under its audit key: ${plural(Number(verified.json['entries']), 'entry', 'entries')}, every link and HMAC intact`,
    verified.text,
  )
}

/**
 * A's ledger row for the delegation. The follower records `completed` just after it completes the local task, so
 * a listing made in between is taken again, briefly.
 */
async function ledgerRow(first: Launched, id: string): Promise<Record<string, unknown> | undefined> {
  let listing = first
  for (let attempt = 1; ; attempt++) {
    const listed = await shown(listing)
    const ledger = (parseJson(listed) as { delegations?: unknown }).delegations
    const row = Array.isArray(ledger) ? (ledger as Record<string, unknown>[]).find((d) => d['id'] === id) : undefined
    if (listed.code !== 0 || row?.['status'] === 'completed' || attempt === 5) return row
    await new Promise((resolve) => setTimeout(resolve, 300))
    listing = launch(a, first.args)
  }
}

async function demo(): Promise<void> {
  say.line(`Federation demo: org A delegates a task to org B, and both can prove what happened${quick ? ' (quick run)' : ''}`)
  say.line(`   CLI: ${entry.label}`)
  say.plain(`   DEMO=${work} (two data directories and the files below; removed at the end)`)
  say.line('   TOKEN_A, TOKEN_B: operator tokens generated for this run')

  say.step(
    "Start org A's node",
    'Its own process, data directory and keys; port 0 lets it pick a free port, which it prints.',
    "BERNSTEIN_PEER_TOKEN is the token B gave A: A's server uses it to follow what it delegated to B.",
  )
  await startOrg(a, {
    BERNSTEIN_PORT: '0',
    BERNSTEIN_A2A_ISSUER: a.name,
    BERNSTEIN_DATA_DIR: a.env['BERNSTEIN_DATA_DIR']!,
    BERNSTEIN_AUTH_TOKEN: a.token,
    BERNSTEIN_PEER_TOKEN: b.token,
    BERNSTEIN_FEDERATION_POLL_MS: '200',
  })

  b.env['BERNSTEIN_TRUSTED_PEER_FINGERPRINTS'] = a.fingerprint!
  say.step(
    "Start org B's node, pinned to org A",
    "B accepts a delegation only when the sender carries a signed capability card made with A's key",
    "(BERNSTEIN_TRUSTED_PEER_FINGERPRINTS, the fingerprint A's operator gives B out of band, here read from A's card).",
  )
  await startOrg(b, {
    BERNSTEIN_PORT: '0',
    BERNSTEIN_A2A_ISSUER: b.name,
    BERNSTEIN_DATA_DIR: b.env['BERNSTEIN_DATA_DIR']!,
    BERNSTEIN_AUTH_TOKEN: b.token,
    BERNSTEIN_TRUSTED_PEER_FINGERPRINTS: a.fingerprint!,
  })
  say.note(`A pins B the same way: every \`delegate\` names B's fingerprint (${short(b.fingerprint!)}) and checks B's card against it.`)

  if (!quick) await refusals()

  say.step(
    'Org A creates a task and delegates it to org B',
    "The CLI verifies B's card (signature, pinned key, policies), pins B's receipt key from its JWKS,",
    "and sends the task with A's signed card and the task's lineage envelope.",
  )
  const created = await call(a, 'POST', '/tasks', a.token, {
    title: 'Write the release notes for 0.2',
    description: 'Summarise the changes since 0.1 for operators',
    role: 'docs',
  })
  const taskId = str(created.json['id'])
  say.http('POST', `${url(a)}/tasks`, "A's operator token", `${created.status}, task ${taskId} (${str(created.json['status'])}, role docs)`)
  say.check(created.status === 201, `org A's task ${taskId} exists`, created.text)
  const delegated = await cli(a, [
    '--json',
    'delegate',
    '--peer',
    url(b),
    '--peer-token',
    b.token,
    '--task-id',
    taskId,
    '--trusted-fingerprint',
    b.fingerprint!,
    '--require-redaction-tier',
    'standard',
    '--require-sandbox-profile',
    'container',
  ])
  const row = parseJson(delegated)
  const peerTaskId = str(row['peer_task_id'])
  const a2aTaskId = str(row['remote_a2a_task_id'])
  say.check(
    delegated.code === 0 && row['status'] === 'accepted' && row['peer_issuer'] === b.name && row['peer_fingerprint'] === b.fingerprint,
    `delegation ${str(row['id'])} accepted by ${str(row['peer_issuer'])}: B's task ${peerTaskId}, A2A task ${a2aTaskId}`,
    (delegated.stdout + delegated.stderr).trim(),
  )
  const held = await call(a, 'GET', `/tasks/${taskId}`, a.token)
  say.check(
    held.json['status'] === 'claimed',
    `A's task is held for B (${str(held.json['status'])} by ${str(held.json['assigned_agent'])}), so no local worker takes it too`,
  )

  say.step("Org B's worker does the work", "Through B's own task API with B's operator token: claim the next docs task, report progress, complete it.")
  const claimed = await call(b, 'GET', '/tasks/next/docs', b.token)
  say.http(
    'GET',
    `${url(b)}/tasks/next/docs`,
    "B's operator token",
    `${claimed.status}, task ${str(claimed.json['id'])} "${str(claimed.json['title'])}" (${str(claimed.json['status'])})`,
  )
  say.check(claimed.status === 200 && claimed.json['id'] === peerTaskId, `B's worker claimed the delegated task ${peerTaskId}`, claimed.text)
  const progress = await call(b, 'POST', `/tasks/${peerTaskId}/progress`, b.token, { message: 'drafted the notes', percent: 60 })
  say.http('POST', `/tasks/${peerTaskId}/progress`, '', `${progress.status}, "drafted the notes" 60%`)
  const summary = 'Release notes for 0.2: signed capability cards, federation ledger, offline receipts'
  const completed = await call(b, 'POST', `/tasks/${peerTaskId}/complete`, b.token, { result_summary: summary })
  say.http('POST', `/tasks/${peerTaskId}/complete`, '', `${completed.status}, ${str(completed.json['status'])}`)
  say.check(
    progress.status === 200 && completed.status === 200 && completed.json['status'] === 'done',
    `B's task ${peerTaskId} is done`,
    `${progress.text} ${completed.text}`,
  )

  say.step(
    "Org A's follower settles the delegation",
    "A's server polls B's A2A task, verifies B's completion receipt against the key it pinned at delegation,",
    "and only then moves its own task to done with B's result.",
  )
  const t0 = performance.now()
  const settled = await waitForSettled(taskId, 60_000)
  say.check(
    settled.json['status'] === 'done' && settled.json['result_summary'] === summary,
    `A's task ${taskId} is ${str(settled.json['status'])} after ${seconds(performance.now() - t0)}, with B's result: "${str(settled.json['result_summary'])}"`,
    settled.text,
  )
  // Everything to show from here on is read now, and the CLI commands that check it run side by side (each is a
  // process of its own, mostly start-up); their results are printed in order.
  const answer = await call(b, 'GET', `/a2a/tasks/${a2aTaskId}`, b.token)
  const receipt = answer.json['receipt'] as Record<string, unknown> | undefined
  const jwks = await call(b, 'GET', '/.well-known/agent.json/keys', null)
  const keys = (jwks.json['keys'] ?? []) as Record<string, unknown>[]
  const key = keys.find((k) => k['kid'] === receipt?.['kid'])
  const responseFile = join(files, 'response.json')
  const receiptFile = join(files, 'receipt.json')
  const keyFile = join(files, 'org-b-receipt-key.jwk.json')
  const tamperedFile = join(files, 'response-tampered.json')
  writeFileSync(responseFile, answer.text)
  writeFileSync(receiptFile, JSON.stringify(receipt ?? null))
  writeFileSync(keyFile, JSON.stringify(key ?? null))
  writeFileSync(tamperedFile, answer.text.replace(summary, summary.replace('0.2', '0.3')))
  const chainA = await chainOf(a, taskId)
  const chainB = await chainOf(b, peerTaskId)
  // A sent the entries written before the delegation claimed its task for B.
  const claimIndex = chainA.page.findIndex((c) => c.entry.action === 'claim' && c.entry.actor.session_id === `a2a:${b.name}`)
  const sent = chainA.page.slice(0, claimIndex < 0 ? chainA.page.length : claimIndex)
  const sentFile = join(files, 'org-a-entries-sent.jsonl')
  writeFileSync(sentFile, sent.map((c) => `${c.line}\n`).join(''))

  const listing = launch(a, ['--json', 'federation', 'list'])
  const receiptCheck = launch(a, ['--json', 'a2a', 'verify', '--receipt', receiptFile, '--response', responseFile, '--trusted-jwk', keyFile])
  const tamperCheck = quick ? null : launch(a, ['--json', 'a2a', 'verify', '--receipt', receiptFile, '--response', tamperedFile, '--trusted-jwk', keyFile])
  const wrap = launch(a, [
    '--json',
    'lineage',
    'envelope',
    'wrap',
    '--file',
    sentFile,
    '--issuer',
    a.name,
    '--ticket-id',
    taskId,
    '--output',
    join(files, 'envelope.json'),
  ])

  const mine = await ledgerRow(listing, str(row['id']))
  if (mine) {
    const fields = ['id', 'status', 'task_id', 'peer', 'peer_issuer', 'peer_task_id', 'remote_a2a_task_id', 'attempts', 'last_error', 'result'] as const
    say.note(`A's ledger row: ${JSON.stringify(Object.fromEntries(fields.map((f) => [f, mine[f]])))}`)
  }
  say.check(
    mine?.['status'] === 'completed' && mine['result'] === summary && mine['last_error'] === null,
    `completed delegation ${str(row['id'])} in A's federation ledger: task ${taskId} -> ${b.name}, no error`,
    JSON.stringify(mine ?? null),
  )

  say.step(
    "The completion receipt, verified offline against B's published key",
    "Anyone holding B's answer can check it without asking B: the receipt binds a hash of the answer's content",
    "and B's receipt-spine entry, signed with B's receipt key, which B publishes in its JWKS.",
  )
  say.http(
    'GET',
    `${url(b)}/a2a/tasks/${a2aTaskId}`,
    "B's operator token",
    `${answer.status}, ${str(answer.json['status'])}, receipt kid ${str(receipt?.['kid'])}`,
  )
  say.http('GET', `${url(b)}/.well-known/agent.json/keys`, 'public', `${jwks.status}, ${keys.length} keys`)
  say.check(
    answer.json['status'] === 'completed' && receipt !== undefined && key !== undefined,
    `B published the receipt's key ${str(receipt?.['kid'])} in its JWKS`,
    answer.text,
  )
  say.note('saved: the answer as received (response.json), its receipt (receipt.json) and that key (org-b-receipt-key.jwk.json)')
  const verified = await shown(receiptCheck)
  const verdict = parseJson(verified)
  say.check(
    verified.code === 0 && verdict['ok'] === true && verdict['key_pinned'] === true,
    `verified receipt: B's answer for A2A task ${a2aTaskId} is signed by B's pinned key (content ${short(str(verdict['content_hash']))})`,
    verified.stdout.trim(),
  )
  if (tamperCheck) {
    say.note('the same check on the answer with one character of the result changed:')
    const refused = await shown(tamperCheck)
    const failures = (parseJson(refused)['failures'] ?? []) as string[]
    say.check(refused.code === 1, `a changed answer fails verification (exit ${refused.code}): ${failures.join('; ')}`, refused.stdout.trim())
  }

  say.step(
    'The lineage on both sides',
    'Each node keeps an HMAC chain of what happened to each task (verified here by the node, as',
    "`bernstein-a2a lineage tracker-audit verify` does offline); the task's entries crossed to B in the delegation",
    'as a bernstein.lineage_v2 envelope, and B bound that envelope into its own chain.',
  )
  showChain(a, chainA)
  await verifyChain(a)
  showChain(b, chainB)
  await verifyChain(b)
  const boundary = chainB.page.find((c) => c.entry.tracker_name === 'a2a-cross-org-boundary')
  say.note(`A's entries before the hand-off (${sent.length}), saved as org-a-entries-sent.jsonl; wrapping them as A did:`)
  const wrapped = await shown(wrap)
  const envelope = parseJson(wrapped)
  say.check(
    wrapped.code === 0 && boundary !== undefined && envelope['payload_sha256'] === boundary.entry.output_blob_hash,
    `B's boundary entry binds the envelope A sent (${plural(Number(envelope['entries']), 'entry', 'entries')} of ${a.name}): payload ${short(str(envelope['payload_sha256']))}`,
    `envelope ${str(envelope['payload_sha256'])}, boundary ${boundary?.entry.output_blob_hash ?? '(none)'}`,
  )
}

/** The full run also shows that trust fails closed, on both sides, before the delegation that succeeds. */
async function refusals(): Promise<void> {
  say.step('Trust fails closed, on both sides (left out with --quick)')
  const sender = { name: a.name, description: 'claims to be org A', capabilities: [], endpoint: 'http://127.0.0.1:9' }
  const unpinned = await call(b, 'POST', '/a2a/v0/tasks', b.token, { sender, task: { id: 'no-card-1', message: 'do this', role: 'docs' } })
  say.http('POST', `${url(b)}/a2a/v0/tasks`, "B's token, but neither A's card nor A's signature", `${unpinned.status} ${str(unpinned.json['detail'])}`)
  // B pins A's key, so it asks for proof of holding it first: a delivery signed with it (RFC 9421), before any card.
  say.check(
    unpinned.status === 401 && unpinned.json['reason'] === 'peer_signature_required',
    "B refuses a sender that cannot prove it holds A's key, whatever token it holds",
    unpinned.text,
  )

  const other = await call(a, 'POST', '/tasks', a.token, { title: 'Not for B', description: 'Delegated under the wrong pin', role: 'docs' })
  const otherId = str(other.json['id'])
  say.note(`delegating A's task ${otherId} while pinning another key (A's own) instead of B's:`)
  const refused = await cli(a, ['--json', 'delegate', '--peer', url(b), '--peer-token', b.token, '--task-id', otherId, '--trusted-fingerprint', a.fingerprint!])
  const row = parseJson(refused)
  const atB = await call(b, 'GET', '/tasks?limit=10', b.token)
  const tasksAtB = (atB.json['tasks'] ?? []) as unknown[]
  say.check(
    refused.code === 1 && row['status'] === 'rejected' && tasksAtB.length === 0,
    `A refuses to delegate (exit ${refused.code}, ledger row ${str(row['status'])}): ${str(row['last_error'])}; B received nothing`,
    refused.stdout.trim(),
  )
}

let cleaning: Promise<void> | null = null
let interrupted = false

/** Stops both nodes (and any command still running) and removes the temporary directory; once. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll()
    rmSync(work, { recursive: true, force: true })
  })()
  return cleaning
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true
    process.stdout.write(`\n${signal}: stopping both nodes and removing ${work}\n`)
    void cleanUp().finally(() => process.exit(130))
  })
}

try {
  await demo()
  say.step('Stop both nodes and remove $DEMO')
  await cleanUp()
  say.check(true, 'both nodes stopped, temporary directory removed')
  say.line()
  say.line(`All ${say.checks} checks passed in ${seconds(performance.now() - startedAt)}.`)
} catch (error) {
  // Interrupted: the signal handler is already cleaning up and exits 130; what failed meanwhile is its doing.
  if (interrupted) await new Promise(() => undefined)
  say.line()
  say.line(`✗ demo failed: ${error instanceof Error ? error.message : String(error)}`)
  if (!(error instanceof CheckFailed) && error instanceof Error && error.stack) say.line(error.stack)
  for (const o of [a, b]) {
    const output = o.node?.output().trim()
    if (output) say.line(`--- what ${o.label}'s node wrote ---\n${output}`)
  }
  await cleanUp()
  say.line('both nodes stopped, temporary directory removed')
  process.exitCode = 1
}
