/**
 * `npm run mock`: Prism's mock of openapi.yaml, on 127.0.0.1:4010 unless told otherwise:
 *
 *   npm run mock -- --port 4011          (also -p 4011, --port=4011)
 *   MOCK_PORT=4011 npm run mock          (a flag wins over the variable)
 *   npm run mock -- --host 0.0.0.0       (also -h, MOCK_HOST)
 *
 * Any other argument goes to `prism mock` as it is (`--dynamic`, `--errors`, ...). The script passes Prism exactly
 * one -h and one -p: calling Prism directly with a second -p fails with `Received [ 4010, 4011 ]`.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { constants } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const DEFAULT_MOCK_HOST = '127.0.0.1'
export const DEFAULT_MOCK_PORT = 4010

export interface MockOptions {
  readonly host: string
  readonly port: number
  /** Passed through to `prism mock`. */
  readonly rest: readonly string[]
}

function port(raw: string, from: string): number | string {
  const value = Number(raw)
  return /^\d+$/.test(raw) && value >= 1 && value <= 65535 ? value : `${from} must be a port number (1-65535), got '${raw}'`
}

/** Reads the port and host from the arguments, then MOCK_PORT and MOCK_HOST; an error is a sentence to print. */
export function mockOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): MockOptions | { error: string } {
  let host: string | undefined
  let portArg: { raw: string; from: string } | undefined
  const rest: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const inline = /^(--port|--host)=(.*)$/.exec(arg)
    const name = inline ? inline[1]! : arg
    if (!['--port', '-p', '--host', '-h'].includes(name)) {
      rest.push(arg)
      continue
    }
    const value = inline ? inline[2] : argv[++i]
    if (value === undefined || value === '') return { error: `${name} needs a value` }
    if (name === '--port' || name === '-p') portArg = { raw: value, from: name }
    else host = value
  }
  const envPort = env['MOCK_PORT']?.trim()
  const chosen = portArg ?? (envPort ? { raw: envPort, from: 'MOCK_PORT' } : undefined)
  const parsed = chosen ? port(chosen.raw, chosen.from) : DEFAULT_MOCK_PORT
  if (typeof parsed === 'string') return { error: parsed }
  return { host: host ?? (env['MOCK_HOST']?.trim() || DEFAULT_MOCK_HOST), port: parsed, rest }
}

/** Prism's CLI entry, from its package's `bin`. */
function prismCli(): string {
  const manifest = createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json')
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { prism: string } }
  return join(dirname(manifest), bin.prism)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const options = mockOptions(process.argv.slice(2), process.env)
  if ('error' in options) {
    process.stderr.write(`npm run mock: ${options.error}\n`)
    process.exit(2)
  }
  const document = join(dirname(fileURLToPath(import.meta.url)), '..', 'openapi.yaml')
  const prism = spawn(process.execPath, [prismCli(), 'mock', '-h', options.host, '-p', String(options.port), ...options.rest, document], { stdio: 'inherit' })
  // Ctrl-C or a supervisor's SIGTERM stops Prism too, and the script ends as Prism does.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => prism.kill(signal))
  prism.on('exit', (code, signal) => process.exit(code ?? 128 + (signal === null ? 0 : constants.signals[signal])))
}
