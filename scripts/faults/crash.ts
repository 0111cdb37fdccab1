/**
 * Crash points: `serve` is killed with SIGKILL at a random moment (seeded: the seed is printed, and the same seed
 * gives the same operations and kill delays) under a mixed load of task creations and lifecycle transitions
 * (claim, progress, complete), A2A sends, artifacts and v0 deliveries from a pinned peer; then it is started again
 * on the same storage and every invariant of invariants.ts is checked, for everything acknowledged since the first
 * run. Reports acknowledged / found / lost per run.
 *
 * @module
 */
import { generateEd25519KeyPair } from '../../src/crypto/ed25519.js'
import { keyFingerprint } from '../../src/crypto/fingerprint.js'
import { issueCapabilityCard } from '../../src/cards/issue-capability-card.js'
import { signPeerRequest } from '../../src/crypto/peer-http-signature.js'
import { systemClock } from '../../src/runtime.js'
import type { ServerProcess } from '../../test/helpers/cli.js'
import {
  type Answer,
  type FaultEngine,
  type ScenarioOptions,
  type ScenarioReport,
  call,
  check,
  createStorage,
  eventually,
  newReport,
  seededRandom,
  serve,
  sleep,
} from './common.js'
import { type Acknowledged, TASK_PATH, type TrackedTask, acknowledgedWrites, checkInvariants, emptyAcknowledged } from './invariants.js'

export interface CrashOptions extends ScenarioOptions {
  readonly seed: number
  /** Kill-and-restart runs (default: 2 quick, 8 full). */
  readonly runs?: number
}

const TRANSITION: Record<number, { path: string; body: unknown }> = {
  1: { path: 'claim', body: { agent_id: 'fault-worker' } },
  2: { path: 'progress', body: { message: 'halfway', percent: 50 } },
  3: { path: 'complete', body: { result_summary: 'done under fire' } },
}

/** The pinned peer whose v0 deliveries the node accepts, and how it delivers: signed with its card key (RFC 9421). */
async function peer(): Promise<{ fingerprint: string; deliver: (url: string, task: Record<string, unknown>) => Promise<Answer> }> {
  const key = generateEd25519KeyPair()
  const card = await issueCapabilityCard({
    issuer: 'faultpeer',
    name: 'Fault Peer',
    tools: ['task_orchestration'],
    policies: { cost_cap_usd: 10, redaction_tier: 'standard', sandbox_profile: 'container' },
    ttlSeconds: 4 * 3600,
    privateKey: key.privateKey,
    now: Date.now() / 1000 - 60,
  })
  const sender = { name: 'faultpeer', description: '', capabilities: ['task_orchestration'], endpoint: 'http://faultpeer.test', capability_card: card }
  const signer = { keyid: keyFingerprint(key.publicKey), privateKey: key.privateKey }
  return {
    fingerprint: signer.keyid,
    async deliver(url, task) {
      const raw = JSON.stringify({ sender, task })
      const headers = await signPeerRequest(signer, systemClock, { method: 'POST', url: `${url}/a2a/v0/tasks`, headers: {}, body: raw })
      return call(url, 'POST', '/a2a/v0/tasks', undefined, { raw, headers })
    },
  }
}

interface LoadStats {
  sent: number
  acknowledged: number
  /** Requests that got no answer: in flight when the process died. */
  unanswered: number
  /** Answers other than the expected success (a bug unless the process was dying). */
  unexpected: string[]
}

/**
 * Workers issuing the mixed load at `url` until `stopped()`. Each worker moves only the tasks it created, so that
 * two workers never race one transition (the lifecycle's own answer to that is a 409, not a fault).
 */
async function mixedLoad(
  url: string,
  acked: Acknowledged,
  random: () => number,
  workers: number,
  deliver: (url: string, task: Record<string, unknown>) => Promise<Answer>,
  runTag: string,
  stopped: () => boolean,
): Promise<LoadStats> {
  const stats: LoadStats = { sent: 0, acknowledged: 0, unanswered: 0, unexpected: [] }
  let n = 0
  const worker = async (w: number): Promise<void> => {
    const own: TrackedTask[] = []
    const ownSends: string[] = []
    while (!stopped()) {
      const roll = random()
      const i = n++
      stats.sent++
      const movable = own.filter((t) => t.sentVersion === t.ackedVersion && t.ackedVersion < TASK_PATH.length)
      if (roll < 0.25 || (roll < 0.55 && movable.length === 0)) {
        const r = await call(url, 'POST', '/tasks', { title: `fault ${runTag}.${w}.${i}`, role: 'fault' })
        if (r.status === 201) {
          const task = { id: (r.json as { id: string }).id, linked: false, ackedVersion: 1, sentVersion: 1 }
          own.push(task)
          acked.tasks.set(task.id, task)
          stats.acknowledged++
        } else note(r.status, r.error, 'create')
      } else if (roll < 0.55) {
        const task = movable[Math.floor(random() * movable.length)] as TrackedTask
        const step = TRANSITION[task.ackedVersion] as { path: string; body: unknown }
        task.sentVersion = task.ackedVersion + 1
        const r = await call(url, 'POST', `/tasks/${task.id}/${step.path}`, step.body)
        if (r.status === 200 && (r.json as { version: number }).version === task.sentVersion) {
          task.ackedVersion = task.sentVersion
          stats.acknowledged++
        } else note(r.status, r.error, step.path)
      } else if (roll < 0.75) {
        const message = `fault send ${runTag}.${w}.${i} ✓`
        const r = await call(url, 'POST', '/a2a/tasks/send', { sender: `fault-${w}`, message })
        if (r.status === 201) {
          const body = r.json as { id: string; bernstein_task_id: string; receipt: { entry_hash: string } }
          acked.sends.set(body.id, { bernsteinTaskId: body.bernstein_task_id, message, entryHash: body.receipt.entry_hash })
          // Its linked task walks the lifecycle too (its completion mints a completion receipt).
          const task = { id: body.bernstein_task_id, linked: true, ackedVersion: 1, sentVersion: 1 }
          own.push(task)
          acked.tasks.set(task.id, task)
          ownSends.push(body.id)
          stats.acknowledged++
        } else note(r.status, r.error, 'send')
      } else if (roll < 0.88 && ownSends.length > 0) {
        const a2aId = ownSends[Math.floor(random() * ownSends.length)] as string
        const name = `artifact-${runTag}-${w}-${i}.txt`
        const r = await call(url, 'POST', `/a2a/tasks/${a2aId}/artifacts`, { name, data: `output ${i}`, content_type: 'text/plain' })
        if (r.status === 201) {
          acked.artifacts.push({ a2aId, name })
          stats.acknowledged++
        } else note(r.status, r.error, 'artifact')
      } else {
        const remoteId = `remote-${runTag}-${w}-${i}`
        const task = { id: remoteId, message: `delegated ${remoteId}`, role: 'backend' }
        const r = await deliver(url, task)
        if (r.status === 202) {
          const accepted = r.json as { task_id: string; a2a_task_id: string }
          acked.deliveries.set(remoteId, { redeliver: (at) => deliver(at, task), taskId: accepted.task_id, a2aTaskId: accepted.a2a_task_id })
          stats.acknowledged++
        } else note(r.status, r.error, 'delivery')
      }
    }
  }
  const note = (status: number, error: string | undefined, what: string): void => {
    if (status === 0) stats.unanswered++
    else if (!stopped()) stats.unexpected.push(`${what}: ${status}${error ? ` ${error}` : ''}`)
  }
  await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)))
  return stats
}

export async function crashPoints(engine: FaultEngine, options: CrashOptions): Promise<ScenarioReport> {
  const report = newReport('crash points: SIGKILL under mixed load, restart, invariants', engine)
  const runs = options.runs ?? (options.quick ? 2 : 8)
  const workers = options.quick ? 4 : 8
  const random = seededRandom(options.seed)
  report.figures.push(['seed', options.seed])
  const storage = await createStorage(engine)
  const { fingerprint, deliver } = await peer()
  const env = { BERNSTEIN_TRUSTED_PEER_FINGERPRINTS: fingerprint }
  const acked = emptyAcknowledged()
  let server: ServerProcess | undefined
  let totals = { acknowledged: 0, found: 0, lost: 0 }
  try {
    server = await serve(storage, env)
    for (let run = 1; run <= runs; run++) {
      const current: ServerProcess = server
      let killed = false
      const before = acknowledgedWrites(acked)
      // The kill lands a seeded while after the load has been acknowledged something.
      const delayMs = (options.quick ? 300 : 500) + Math.floor(random() * (options.quick ? 1200 : 4000))
      const load = mixedLoad(current.url, acked, random, workers, deliver, `r${run}`, () => killed)
      const warm = await eventually(async () => acknowledgedWrites(acked) - before >= workers, 60_000, 20)
      check(report, warm, `run ${run}: the load got nothing acknowledged within 60 s`)
      await sleep(delayMs)
      killed = true
      current.child.kill('SIGKILL')
      const death = await current.exited
      const stats = await load
      check(report, death.signal === 'SIGKILL', `run ${run}: the process ended with ${JSON.stringify(death)}, not by SIGKILL`)
      for (const u of stats.unexpected.slice(0, 3)) report.failures.push(`run ${run}: unexpected answer before the kill: ${u}`)

      server = await serve(storage, env)
      const counts = await checkInvariants(server.url, storage, acked, report, `run ${run}`)
      totals = { acknowledged: counts.acknowledged, found: counts.found, lost: counts.lost }
      report.figures.push([
        `run ${run}`,
        `killed ${delayMs} ms into the load; ${stats.sent} requests, ${stats.acknowledged} acknowledged, ${stats.unanswered} in flight at the kill; ` +
          `after restart: acknowledged ${counts.acknowledged} / found ${counts.found} / lost ${counts.lost}`,
      ])
    }
    // And the node keeps working after the last restart.
    const after = await call(server.url, 'POST', '/a2a/tasks/send', { sender: 'after', message: 'after the crashes' })
    check(report, after.status === 201, `a send after the last restart answered ${after.status}`)
    report.figures.push([
      'all runs',
      `${acked.tasks.size} tasks, ${acked.sends.size} sends, ${acked.artifacts.length} artifacts, ${acked.deliveries.size} deliveries; ` +
        `acknowledged ${totals.acknowledged} / found ${totals.found} / lost ${totals.lost}`,
    ])
    check(report, totals.lost === 0, `${totals.lost} acknowledged writes lost`)
  } finally {
    await server?.stop('SIGKILL')
    await storage.cleanup()
  }
  return report
}
