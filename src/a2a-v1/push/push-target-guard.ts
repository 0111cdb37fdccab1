/**
 * The SSRF guard of push notifications: a webhook URL may only name a public address, unless the operator
 * allow-listed it (`BERNSTEIN_A2A_PUSH_ALLOWED_TARGETS`: addresses, CIDRs or exact host names). Host names are
 * resolved and every address they resolve to is checked, at config creation and again before every attempt
 * (a name that later resolves to an internal address is refused then). Redirects are never followed.
 *
 * @module
 */
import { lookup } from 'node:dns/promises'
import { type BlockList, isIP } from 'node:net'
import { blockListOf, normaliseIp } from '../../net-address.js'
import { type Result, fail, ok } from '../../result.js'

/** Resolves a host name to its addresses (injected: tests and deployments may pin names). */
export type ResolveHost = (host: string) => Promise<readonly { readonly address: string }[]>

export const systemResolveHost: ResolveHost = (host) => lookup(host, { all: true, verbatim: true })

/** Loopback, private, shared, link-local (cloud metadata at 169.254.169.254), documentation, multicast, reserved. */
const FORBIDDEN_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
]
/** Unspecified, loopback, NAT64, discard, documentation, unique local (fd00:ec2::254 included), link-local, site-local, multicast. */
const FORBIDDEN_V6 = ['::/128', '::1/128', '64:ff9b::/96', '100::/64', '2001:db8::/32', 'fc00::/7', 'fe80::/10', 'fec0::/10', 'ff00::/8']

const FORBIDDEN = blockListOf([...FORBIDDEN_V4, ...FORBIDDEN_V6])

/** Whether the operator's allow-list entry is an address or CIDR (else it is a host name). */
export function isAddressEntry(entry: string): boolean {
  return isIP(entry.split('/')[0] ?? '') !== 0
}

export const MAX_PUSH_URL_LENGTH = 2048

export type PushTargetRefusal = 'malformed_url' | 'unresolvable' | 'forbidden_address'

export class PushTargetGuard {
  readonly #allowedAddresses: BlockList
  readonly #allowedHosts: ReadonlySet<string>
  readonly #resolve: ResolveHost

  /** `allowed`: addresses, CIDRs and host names the operator allows even when internal. */
  constructor(allowed: readonly string[], resolve: ResolveHost = systemResolveHost) {
    this.#allowedAddresses = blockListOf(allowed.filter(isAddressEntry))
    this.#allowedHosts = new Set(allowed.filter((e) => !isAddressEntry(e)).map((e) => e.toLowerCase()))
    this.#resolve = resolve
  }

  /** The URL's form alone: `http(s)`, a host, no user info, at most 2048 characters. */
  parse(raw: string): Result<URL, 'malformed_url'> {
    if (raw.length > MAX_PUSH_URL_LENGTH) return fail('malformed_url', `url is longer than ${MAX_PUSH_URL_LENGTH} characters`)
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return fail('malformed_url', 'url is not an absolute URL')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail('malformed_url', 'url must be http or https')
    if (url.username !== '' || url.password !== '') return fail('malformed_url', 'url must not carry user info (use authentication)')
    if (url.hostname === '') return fail('malformed_url', 'url has no host')
    return ok(url)
  }

  /** Whether a delivery may go to `raw` now: its form, then every address its host resolves to. */
  async check(raw: string): Promise<Result<URL, PushTargetRefusal>> {
    const parsed = this.parse(raw)
    if (!parsed.ok) return parsed
    const url = parsed.value
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
    if (this.#allowedHosts.has(host)) return ok(url)
    let addresses: string[]
    if (isIP(host) !== 0) addresses = [host]
    else {
      try {
        addresses = (await this.#resolve(host)).map((a) => a.address)
      } catch {
        addresses = []
      }
      if (addresses.length === 0) return fail('unresolvable', `url's host '${host}' does not resolve`)
    }
    for (const resolved of addresses) {
      const address = normaliseIp(resolved)
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4'
      if (FORBIDDEN.check(address, family) && !this.#allowedAddresses.check(address, family)) {
        return fail(
          'forbidden_address',
          `url's host '${host}' is ${address}, a loopback, private, link-local or reserved address; the operator may allow it with BERNSTEIN_A2A_PUSH_ALLOWED_TARGETS`,
        )
      }
    }
    return ok(url)
  }
}
