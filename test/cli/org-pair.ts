/**
 * Two nodes of two organisations, each a spawned `serve` process on its own data directory, for the federation
 * CLI suites; and the JSON fetch they use to drive them over HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServerProcess, spawnServer } from '../helpers/cli.js'

export const TOKEN_A = 'org-a-operator-token-0123456789'
export const TOKEN_B = 'org-b-operator-token-0123456789'

export interface OrgPair {
  /** Issuer `org-a`, operator token {@link TOKEN_A}. */
  readonly a: ServerProcess
  /** Issuer `org-b`, operator token {@link TOKEN_B}. */
  readonly b: ServerProcess
  /** A's environment, for CLI commands run as node A. */
  readonly envA: Record<string, string>
  stop(): Promise<void>
}

/** Starts both nodes; `extraA` and `extraB` are added to (or override) each node's environment. */
export async function startOrgPair(extraA: Record<string, string> = {}, extraB: Record<string, string> = {}): Promise<OrgPair> {
  const dirA = mkdtempSync(join(tmpdir(), 'fed-a-'))
  const dirB = mkdtempSync(join(tmpdir(), 'fed-b-'))
  const envA = { BERNSTEIN_DATA_DIR: dirA, BERNSTEIN_AUTH_TOKEN: TOKEN_A, BERNSTEIN_A2A_ISSUER: 'org-a', ...extraA }
  const started: ServerProcess[] = []
  const stop = async (): Promise<void> => {
    await Promise.all(started.map((s) => s.stop()))
    for (const dir of [dirA, dirB]) rmSync(dir, { recursive: true, force: true })
  }
  try {
    const a = await spawnServer(envA)
    started.push(a)
    const b = await spawnServer({ BERNSTEIN_DATA_DIR: dirB, BERNSTEIN_AUTH_TOKEN: TOKEN_B, BERNSTEIN_A2A_ISSUER: 'org-b', ...extraB })
    started.push(b)
    return { a, b, envA, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** A JSON request with a bearer token, answering the parsed body. */
export async function fetchJson(url: string, token: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } })
  return (await res.json()) as Record<string, unknown>
}
