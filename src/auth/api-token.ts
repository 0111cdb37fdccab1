export type TokenRole = 'agent' | 'operator'

/** An issued bearer token as stored: only a hash of its secret is kept. */
export interface ApiToken {
  readonly id: string
  readonly secretHash: string
  readonly role: TokenRole
  readonly tenantId: string | null
  readonly label: string | null
  readonly createdAt: number
  readonly expiresAt: number | null
  readonly revokedAt: number | null
}

const UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }

/** The longest lifetime a token may have (100 years). Unbounded, `999999999w` gave an expiry Date cannot show and `token list` crashed. */
export const MAX_DURATION_SECONDS = 100 * 365 * 86_400

/** `2s`, `10m`, `12h`, `30d`, `2w` → seconds (at most 100 years); null for anything else. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,9})([smhdw])$/.exec(text.trim())
  if (!match) return null
  const seconds = Number(match[1]) * (UNITS[match[2] as string] as number)
  return seconds > 0 && seconds <= MAX_DURATION_SECONDS ? seconds : null
}
