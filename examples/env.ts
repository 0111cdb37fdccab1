/**
 * Where the examples connect: BERNSTEIN_URL (default http://127.0.0.1:8052) with BERNSTEIN_TOKEN, or the operator
 * token that `npm start` generated in ./.sdd/auth.token.
 */
import { existsSync, readFileSync } from 'node:fs'

export const baseUrl = (process.env['BERNSTEIN_URL'] ?? 'http://127.0.0.1:8052').replace(/\/+$/, '')

export const token: string | undefined =
  process.env['BERNSTEIN_TOKEN'] ?? (existsSync('.sdd/auth.token') ? readFileSync('.sdd/auth.token', 'utf8').trim() : undefined)
