/**
 * What a user would pick instead: the official A2A JS SDK (@a2a-js/sdk) serving JSON-RPC v1.0 over Express with
 * a trivial executor that completes every task at once (SendMessage returns the completed task), on one of the
 * SDK's own task stores:
 * - in memory (`InMemoryTaskStore`, the default): `POST /__bench/reset` starts over with an empty store
 *   (baseline-reset.ts);
 * - durable (`SDK_SQLITE_FILE` set): the SDK's `DatabaseTaskStore` through Kysely on better-sqlite3, in WAL mode with
 *   `synchronous=FULL` as bernstein-a2a runs SQLite, on a file the SDK's own `a2a-db upgrade` migrated
 *   (systems.ts). Like bernstein-a2a's database it is never emptied; the reset only collects garbage.
 * Usage: PORT=<port> [SDK_SQLITE_FILE=<file>] node --import tsx sdk-server.ts
 */
import { AgentEvent, type AgentExecutor, DefaultRequestHandler, InMemoryTaskStore, type TaskStore } from '@a2a-js/sdk/server'
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database'
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express'
import { type AgentCard, TaskState } from '@a2a-js/sdk'
import SQLite from 'better-sqlite3'
import express, { type RequestHandler } from 'express'
import { Kysely, SqliteDialect } from 'kysely'
import { serveReset } from './baseline-reset.js'

const port = Number(process.env['PORT'] ?? '0')
const sqliteFile = process.env['SDK_SQLITE_FILE']?.trim() || null

/** The SDK's durable store on SQLite with the pragmas bernstein-a2a uses (WAL, an fsync on every commit). */
function durableStore(file: string): TaskStore {
  const database = new SQLite(file)
  database.pragma('journal_mode = WAL')
  database.pragma('synchronous = FULL')
  return new DatabaseTaskStore(new Kysely<unknown>({ dialect: new SqliteDialect({ database }) }))
}
const durable = sqliteFile === null ? null : durableStore(sqliteFile)

const card: AgentCard = {
  name: 'bench-agent',
  description: 'Completes every task at once',
  supportedInterfaces: [{ url: `http://127.0.0.1:${port}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: false, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
  signatures: [],
}

const executor: AgentExecutor = {
  async execute(context, bus) {
    const timestamp = new Date().toISOString()
    bus.publish(
      AgentEvent.task({
        id: context.taskId,
        contextId: context.contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp },
        artifacts: [],
        history: [context.userMessage],
        metadata: undefined,
      }),
    )
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: context.taskId,
        contextId: context.contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp },
        metadata: undefined,
      }),
    )
    bus.finished()
  },
  async cancelTask() {},
}

/** The SDK's JSON-RPC endpoint over a fresh in-memory store, or over the durable one. */
const freshEndpoint = (): RequestHandler =>
  jsonRpcHandler({
    requestHandler: new DefaultRequestHandler(card, durable ?? new InMemoryTaskStore(), executor),
    userBuilder: UserBuilder.noAuthentication,
  })

let endpoint = freshEndpoint()
const app = express()
app.get('/health/ready', (_req, res) => {
  res.json({ status: 'ready' })
})
serveReset(app, () => {
  endpoint = freshEndpoint()
})
app.use('/', (req, res, next) => endpoint(req, res, next))
const server = app.listen(port, '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
