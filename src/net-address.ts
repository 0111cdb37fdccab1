import { BlockList, isIP } from 'node:net'

/** A BlockList from address or CIDR strings already validated by the configuration. */
export function blockListOf(entries: readonly string[]): BlockList {
  const list = new BlockList()
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/')
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4'
    list.addSubnet(address, prefix === undefined ? (type === 'ipv6' ? 128 : 32) : Number(prefix), type)
  }
  return list
}

/** `::ffff:127.0.0.1` and friends: Node reports IPv4 peers of a dual-stack socket in IPv6 form. */
export function normaliseIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  return mapped?.[1] ?? ip
}
