import { type BlockList, isIP } from 'node:net'
import { blockListOf, normaliseIp } from '../net-address.js'

export { blockListOf, normaliseIp }

export function ipType(ip: string): 'ipv4' | 'ipv6' | null {
  const family = isIP(ip)
  return family === 4 ? 'ipv4' : family === 6 ? 'ipv6' : null
}

export function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.')
}

export function listContains(list: BlockList, ip: string): boolean {
  const type = ipType(ip)
  return type !== null && list.check(ip, type)
}

export interface ClientAddress {
  /** The address limits and allowlists apply to. */
  readonly ip: string
  /** True when the address came from `X-Forwarded-For` via a trusted proxy. */
  readonly forwarded: boolean
}

/** What a client is called when a trusted proxy names it in a form that is not an address. */
export const UNKNOWN_CLIENT = 'unknown'

/** One `X-Forwarded-For` hop as an address: `ip`, `ip:port`, `[v6]` or `[v6]:port`; null when it is none of these. */
export function parseHop(hop: string): string | null {
  let value = hop.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value)
  const v4WithPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(value)
  if (bracketed) value = bracketed[1] as string
  else if (v4WithPort) value = v4WithPort[1] as string
  const ip = normaliseIp(value)
  return ipType(ip) === null ? null : ip
}

/**
 * The client's address: the TCP peer, unless the peer is a trusted proxy that sent `X-Forwarded-For`, in which
 * case the right-most address in that header that is not itself a trusted proxy. A hop that cannot be read stops
 * the walk: everything to its left was written by someone no trusted proxy vouches for, so the client is unknown.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trustedProxies: BlockList): ClientAddress {
  const ip = normaliseIp(peer ?? '')
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor
  if (!header || !listContains(trustedProxies, ip)) return { ip, forwarded: false }
  const hops = header.split(',')
  let leftmost: string | null = null
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseHop(hops[i] as string)
    if (hop === null) return { ip: UNKNOWN_CLIENT, forwarded: true }
    if (!listContains(trustedProxies, hop)) return { ip: hop, forwarded: true }
    leftmost = hop
  }
  // Every hop is a trusted proxy's address: the client is the left-most one, and still forwarded. Reporting the
  // peer instead made a proxy on loopback that forwards `127.0.0.1` (or `::ffff:127.0.0.1`) look like a local
  // client, exempt from the allowlist and the limits.
  return { ip: leftmost ?? UNKNOWN_CLIENT, forwarded: true }
}

/**
 * Whether the client is this machine itself: a loopback TCP peer that forwards nobody. An address a proxy
 * forwards is never local, whatever it says (`127.0.0.1`, `::1`, `::ffff:127.0.0.1`): the allowlist and the
 * rate limits exempt only this.
 */
export function isLocalClient(client: ClientAddress): boolean {
  return !client.forwarded && isLoopback(client.ip)
}
