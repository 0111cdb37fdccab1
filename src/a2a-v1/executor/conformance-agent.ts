/**
 * The conformance agent: an in-process executor that behaves as the A2A conformance kit (a2aproject/a2a-tck,
 * v1.0 suite) expects of a system under test, chosen by the prefix of the message's `messageId` (the kit's
 * `scenarios/*.feature`). Enabled by `BERNSTEIN_A2A_CONFORMANCE_AGENT` or `serve --a2a-conformance-agent`; every
 * task it answers goes through the node's lifecycle like any other (receipts, lineage, events).
 *
 * @module
 */
import type { V1Message, V1Part } from '../a2a-v1-wire.js'
import type { AgentExecutor, RequestContext, TaskUpdater } from './agent-executor.js'

export interface ConformanceAgentOptions {
  /** How long `test-resubscribe-message-id*` stays working (the kit waits twice its 2 s streaming timeout). */
  readonly resubscribeDelayMs: number
  readonly sleep: (ms: number) => Promise<void>
}

const text = (value: string): V1Part => ({ text: value })
const FILE_PART: V1Part = { raw: Buffer.from('tck').toString('base64'), mediaType: 'text/plain', filename: 'output.txt' }

type Scenario = (updater: TaskUpdater, options: ConformanceAgentOptions) => Promise<void>

/** Working, one artifact with these parts, completed: the shape of most streaming scenarios. */
const workingArtifactCompleted =
  (...parts: V1Part[]): Scenario =>
  async (updater) => {
    await updater.working()
    await updater.addArtifact({ parts })
    await updater.complete()
  }

const artifactCompleted =
  (...parts: V1Part[]): Scenario =>
  async (updater) => {
    await updater.addArtifact({ parts })
    await updater.complete()
  }

/** Longest prefixes first: `tck-artifact-file-url` before `tck-artifact-file`. */
const SCENARIOS: readonly (readonly [string, Scenario])[] = [
  ['tck-complete-task', (updater) => updater.complete([text('Hello from TCK')])],
  ['tck-artifact-text', artifactCompleted(text('Generated text content'))],
  ['tck-artifact-file-url', artifactCompleted({ url: 'https://example.com/output.txt', mediaType: 'text/plain', filename: 'output.txt' })],
  ['tck-artifact-file', artifactCompleted(FILE_PART)],
  ['tck-artifact-data', artifactCompleted({ data: { key: 'value', count: 42 } })],
  ['tck-input-required', (updater) => updater.requireInput([text('Please provide more input')])],
  ['tck-reject-task', (updater) => updater.fail('rejected')],
  ['tck-stream-ordering-001', workingArtifactCompleted(text('Ordered output'))],
  ['tck-stream-artifact-text', workingArtifactCompleted(text('Streamed text content'))],
  ['tck-stream-artifact-file', workingArtifactCompleted(FILE_PART)],
  [
    'tck-stream-artifact-chunked',
    async (updater) => {
      await updater.working()
      await updater.addArtifact({ artifactId: 'chunked', parts: [text('chunk-1 ')], append: true })
      await updater.addArtifact({ artifactId: 'chunked', parts: [text('chunk-2')], append: true, lastChunk: true })
      await updater.complete()
    },
  ],
  ['tck-stream-001', workingArtifactCompleted(text('Stream hello from TCK'))],
  ['tck-stream-002', (updater) => updater.complete()],
  ['tck-stream-003', workingArtifactCompleted(text('Stream task lifecycle'))],
  [
    'test-resubscribe-message-id',
    async (updater, options) => {
      await updater.working()
      await options.sleep(options.resubscribeDelayMs)
      await updater.complete()
    },
  ],
]

export const MESSAGE_RESPONSE_PREFIX = 'tck-message-response'

/** The scenario a messageId selects (the default completes the task, saying which id it did not know). */
function scenarioOf(messageId: string): Scenario {
  for (const [prefix, scenario] of SCENARIOS) if (messageId.startsWith(prefix)) return scenario
  return (updater) => updater.complete([text(`Unhandled messageId prefix: ${messageId.slice(0, 200)}`)])
}

export class ConformanceAgent implements AgentExecutor {
  readonly #options: ConformanceAgentOptions

  constructor(options: Partial<ConformanceAgentOptions> = {}) {
    this.#options = {
      resubscribeDelayMs: options.resubscribeDelayMs ?? 4_000,
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    }
  }

  /** `tck-message-response`: a Message, and no task. */
  reply(message: V1Message): V1Message | null {
    if (!message.messageId.startsWith(MESSAGE_RESPONSE_PREFIX)) return null
    return {
      messageId: `${message.messageId.slice(0, 150)}-response`,
      role: 'ROLE_AGENT',
      parts: [text('Direct message response')],
      ...(message.contextId !== undefined && message.contextId !== '' && { contextId: message.contextId }),
    }
  }

  execute(context: RequestContext, updater: TaskUpdater): Promise<void> {
    return scenarioOf(context.message.messageId)(updater, this.#options)
  }
}
