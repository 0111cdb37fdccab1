/**
 * The framework's ceiling: bare Express 5 with express.json(), answering POST /a2a/tasks/send and
 * GET /a2a/tasks/:id with a body of the same shape and size as bernstein-a2a's (receipt included), kept in a Map.
 * No validation, no authentication, no storage, no signing. `POST /__bench/reset` empties the Map
 * (baseline-reset.ts). Usage: PORT=<port> node --import tsx express-server.ts
 */
import { randomBytes } from 'node:crypto'
import express from 'express'
import { serveReset } from './baseline-reset.js'

const port = Number(process.env['PORT'] ?? '0')
const tasks = new Map<string, Record<string, unknown>>()

function taskBody(id: string, taskId: string, sender: string, message: string): Record<string, unknown> {
  const now = Date.now() / 1000
  const hex = (bytes: number): string => randomBytes(bytes).toString('hex')
  const kid = 'a2a-server-lineage-0123456789abcdef'
  return {
    id,
    bernstein_task_id: taskId,
    sender,
    message,
    status: 'submitted',
    artifacts: [],
    created_at: now,
    updated_at: now,
    receipt: {
      schema_version: 1,
      task_id: id,
      artefact_path: `.sdd/a2a/responses/${id}.json`,
      content_hash: 'sha256:' + hex(32),
      entry_hash: 'sha256:' + hex(32),
      operator_hmac: hex(32),
      kid,
      head_signature: {
        alg: 'EdDSA',
        key_id: kid,
        public_key_jwk: { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', x: randomBytes(32).toString('base64url'), kid },
        signature_b64: randomBytes(64).toString('base64'),
      },
    },
  }
}

const app = express()
app.disable('x-powered-by')
app.use(express.json({ limit: '1mb' }))
app.get('/health/ready', (_req, res) => {
  res.json({ status: 'ready' })
})
app.post('/a2a/tasks/send', (req, res) => {
  const input = req.body as { sender?: unknown; message?: unknown }
  const id = randomBytes(6).toString('hex')
  const body = taskBody(id, randomBytes(6).toString('hex'), String(input.sender), String(input.message))
  tasks.set(id, body)
  res.status(201).json(body)
})
serveReset(app, () => tasks.clear())
app.get('/a2a/tasks/:id', (req, res) => {
  const body = tasks.get(req.params.id)
  if (body) res.json(body)
  else res.status(404).json({ detail: 'not found' })
})
const server = app.listen(port, '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
